// The arm/attach control files: their formats, the privacy of the channel, the marker rule and
// how attach chooses the first iteration.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <string>

#include "support/child_process.hpp"
#include "syncopate/collector/attach.hpp"
#include "syncopate/collector/control_files.hpp"

namespace collector_test {
namespace {

namespace collector = syncopate::collector;

TEST(ControlFiles, RequestsRoundTrip) {
  collector::AttachRequest iterations{7, 42, 5, 0.0};
  std::string error;
  auto parsed = collector::parseRequest(collector::formatRequest(iterations), error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->id, 7u);
  EXPECT_EQ(parsed->first_iteration, 42);
  EXPECT_EQ(parsed->iterations, 5);
  EXPECT_EQ(parsed->seconds, 0.0);

  collector::AttachRequest seconds{8, -1, 0, 2.5};
  parsed = collector::parseRequest(collector::formatRequest(seconds), error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->first_iteration, -1);
  EXPECT_DOUBLE_EQ(parsed->seconds, 2.5);
}

TEST(ControlFiles, BadRequestsAreRefusedWithAReason) {
  std::string error;
  EXPECT_FALSE(collector::parseRequest("not json", error));
  EXPECT_NE(error.find("not a JSON object"), std::string::npos);
  EXPECT_FALSE(collector::parseRequest(R"({"first_iteration": 3, "iterations": 2})", error));
  EXPECT_NE(error.find("id"), std::string::npos);
  EXPECT_FALSE(collector::parseRequest(R"({"id": 1, "first_iteration": 3, "iterations": 2, "seconds": 1})", error));
  EXPECT_NE(error.find("either"), std::string::npos);
  EXPECT_FALSE(collector::parseRequest(R"({"id": 1, "first_iteration": -1, "iterations": 2})", error));
  EXPECT_NE(error.find("first iteration"), std::string::npos);
}

TEST(ControlFiles, StatusesRoundTrip) {
  collector::ProcessStatus status;
  status.pid = 1234;
  status.host = "node7";
  status.rank = 3;
  status.state = "waiting";
  status.request = 2;
  status.iteration = 40;
  status.iterations_per_second = 9.5;
  status.recorded_iterations = 1;
  status.marker = "ProfilerStep";
  status.heartbeat_unix_ns = 1'700'000'000'000'000'000;
  status.message = "";
  std::string error;
  auto parsed = collector::parseStatus(collector::formatStatus(status), error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->pid, 1234);
  EXPECT_EQ(parsed->host, "node7");
  EXPECT_EQ(parsed->rank, 3);
  EXPECT_EQ(parsed->state, "waiting");
  EXPECT_EQ(parsed->iteration, 40);
  EXPECT_DOUBLE_EQ(parsed->iterations_per_second, 9.5);
  EXPECT_EQ(parsed->heartbeat_unix_ns, status.heartbeat_unix_ns);
  EXPECT_FALSE(collector::parseStatus(R"({"pid": 1})", error));
}

TEST(ControlFiles, TheChannelIsPrivate) {
  TempDir dir;
  std::string error;
  const auto control = dir.path() / "control";
  ASSERT_TRUE(collector::ensurePrivateDirectory(control, error)) << error;
  struct stat info {};
  ASSERT_EQ(stat(control.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);

  const auto shared = dir.path() / "shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0755), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0755), 0);  // whatever the umask
  EXPECT_FALSE(collector::ensurePrivateDirectory(shared, error));
  EXPECT_NE(error.find("chmod 700"), std::string::npos) << error;

  const auto file = control / "request.json";
  ASSERT_TRUE(collector::writePrivateFileAtomically(file, "{}", error)) << error;
  ASSERT_EQ(stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_TRUE(collector::isPrivateFile(file, error)) << error;
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  EXPECT_FALSE(collector::isPrivateFile(file, error));
}

// Acting as a second user needs the right to become one: CI runs as root.
constexpr uid_t kOtherUser = 65534;  // "nobody"

// Runs `as_other_user` in a child that has become kOtherUser; its exit status (0: every
// expectation held, else the number of the first one that failed).
int asOtherUser(const std::function<int()>& as_other_user) {
  const pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kOtherUser) != 0 || setuid(kOtherUser) != 0) _exit(100);
    _exit(as_other_user());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST(ControlFiles, AnotherUserCanNeitherReadTheChannelNorWriteARequest) {
  if (geteuid() != 0) GTEST_SKIP() << "becoming a second user needs root (CI runs as root)";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);  // only the channel's own modes may stop them
  std::string error;
  const auto control = dir.path() / collector::kControlDirectoryName;
  ASSERT_TRUE(collector::ensurePrivateDirectory(control, error)) << error;
  const auto request = control / collector::kRequestFileName;
  ASSERT_TRUE(collector::writePrivateFileAtomically(request, R"({"id": 1, "first_iteration": 5, "iterations": 2})", error));
  const auto status = control / collector::statusFileName("n1", 42);
  ASSERT_TRUE(collector::writePrivateFileAtomically(status, "{}", error)) << error;

  const int result = asOtherUser([&] {
    if (opendir(control.c_str()) != nullptr || errno != EACCES) return 1;
    if (open(request.c_str(), O_RDONLY) >= 0 || errno != EACCES) return 2;
    if (open(status.c_str(), O_RDONLY) >= 0 || errno != EACCES) return 3;
    std::string other_error;
    if (collector::writePrivateFileAtomically(request, R"({"id": 9, "first_iteration": -1, "seconds": 1.0})", other_error))
      return 4;
    std::vector<std::string> problems;
    if (!collector::readStatuses(control, problems).empty()) return 5;
    return 0;
  });
  EXPECT_EQ(result, 0) << "the expectation that failed, as the other user";
  EXPECT_EQ(collector::readFile(request, error), R"({"id": 1, "first_iteration": 5, "iterations": 2})");
}

TEST(ControlFiles, AChannelAnotherUserPlantedIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "becoming a second user needs root (CI runs as root)";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);  // a shared folder anyone may create in
  const auto control = dir.path() / collector::kControlDirectoryName;
  const auto elsewhere = dir.path() / "theirs";
  // The other user makes the channel's folder first, private to them, and a link beside it.
  ASSERT_EQ(asOtherUser([&] {
              if (mkdir(control.c_str(), 0700) != 0) return 1;
              if (mkdir(elsewhere.c_str(), 0700) != 0) return 2;
              return 0;
            }),
            0);
  std::string error;
  EXPECT_FALSE(collector::ensurePrivateDirectory(control, error));
  EXPECT_NE(error.find("belongs to another user"), std::string::npos) << error;

  // A link named like the channel, pointing at a folder of ours, is no channel either.
  const auto mine = dir.path() / "mine";
  ASSERT_TRUE(collector::ensurePrivateDirectory(mine, error)) << error;
  const auto linked = dir.path() / "linked";
  ASSERT_EQ(symlink(mine.c_str(), linked.c_str()), 0);
  EXPECT_FALSE(collector::ensurePrivateDirectory(linked, error));
  EXPECT_NE(error.find("is not a directory"), std::string::npos) << error;
}

TEST(ControlFiles, ReadsEveryStatusAndReportsBrokenOnes) {
  TempDir dir;
  std::string error;
  collector::ProcessStatus status;
  status.pid = 11;
  status.host = "h";
  status.state = "armed";
  ASSERT_TRUE(collector::writePrivateFileAtomically(dir.path() / collector::statusFileName("h", 11),
                                                    collector::formatStatus(status), error));
  ASSERT_TRUE(collector::writePrivateFileAtomically(dir.path() / collector::statusFileName("h", 12), "{broken", error));
  std::vector<std::string> problems;
  auto statuses = collector::readStatuses(dir.path(), problems);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses.front().pid, 11);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems.front().find("process-h-12.json"), std::string::npos);
}

TEST(MarkerRule, NamesThatStartAnIteration) {
  using collector::iterationOfMarker;
  EXPECT_EQ(iterationOfMarker("ProfilerStep", "ProfilerStep#12", 0), 12);
  EXPECT_EQ(iterationOfMarker("ProfilerStep", "ProfilerStep#7 extra", 0), 7);
  EXPECT_EQ(iterationOfMarker("ProfilerStep", "ProfilerStep", 5), 5);
  EXPECT_EQ(iterationOfMarker("ProfilerStep", "ProfilerStep warmup", 6), 6);
  EXPECT_EQ(iterationOfMarker("ProfilerStep", "ProfilerStep#", 4), 4);
  EXPECT_FALSE(iterationOfMarker("ProfilerStep", "ProfilerSteps", 0));
  EXPECT_FALSE(iterationOfMarker("ProfilerStep", "forward", 0));
  EXPECT_FALSE(iterationOfMarker("", "anything", 0));
}

TEST(AttachPlan, FirstIterationIsAheadOfTheFurthestProcess) {
  collector::ProcessStatus slow;
  slow.iteration = 40;
  slow.iterations_per_second = 2.0;
  collector::ProcessStatus fast;
  fast.iteration = 45;
  fast.iterations_per_second = 20.0;
  // 45 + what the fastest runs in a second (20), plus one.
  EXPECT_EQ(collector::chooseFirstIteration({slow, fast}, 1.0), 45 + 21);
  // Never fewer than two iterations ahead.
  fast.iterations_per_second = 0.0;
  slow.iterations_per_second = 0.0;
  EXPECT_EQ(collector::chooseFirstIteration({slow, fast}, 1.0), 47);
}

}  // namespace
}  // namespace collector_test
