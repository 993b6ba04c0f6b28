// A peer process that dies: the survivor's collective fails with ncclRemoteError, naming the
// dead rank, long before the timeout. The peer is this test program started afresh (so that
// it has simgpu's threads of its own) in the role DeadPeer.ChildRole.
#include "api_harness.hpp"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

extern char** environ;

namespace simgpu::nccl {
namespace {

constexpr const char* kChildIdVariable = "SIMGPU_NCCL_TEST_CHILD_ID";

std::string toHex(const ncclUniqueId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id.internal) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

ncclUniqueId fromHex(const std::string& hex) {
  ncclUniqueId id{};
  for (std::size_t i = 0; i < sizeof(id.internal) && 2 * i + 1 < hex.size(); ++i) {
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

// Joins as rank 1, then dies without leaving the communicator.
TEST(DeadPeer, ChildRole) {
  const char* hex = std::getenv(kChildIdVariable);
  if (hex == nullptr) GTEST_SKIP() << "only runs as the peer of DeadPeer.SurvivorGetsARemoteError";
  testing::useTestProfile();
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, 2, fromHex(hex), 1) != ncclSuccess) _exit(3);
  _exit(0);
}

TEST(DeadPeer, SurvivorGetsARemoteError) {
  testing::useTestProfile();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  const std::string variable = std::string(kChildIdVariable) + "=" + toHex(id);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(const_cast<char*>(variable.c_str()));
  env.push_back(nullptr);
  std::string filter = "--gtest_filter=DeadPeer.ChildRole";
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter.data(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv, env.data()), 0);

  ncclComm_t comm = nullptr;
  ASSERT_EQ(simgpu::setCurrentDevice(0), cudaSuccess);
  ASSERT_EQ(ncclCommInitRank(&comm, 2, id, 0), ncclSuccess);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the peer failed to join";

  testing::DeviceBuffer buf(0, 1024);
  cudaStream_t stream = testing::makeStream(0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(ncclAllReduce(buf.get(), buf.get(), 256, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
  testing::sync(stream);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));  // the timeout is 60 s
  ncclResult_t state = ncclSuccess;
  ASSERT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
  EXPECT_EQ(state, ncclRemoteError);
  const std::string message = ncclGetLastError(comm);
  EXPECT_NE(message.find("rank 1 (process " + std::to_string(child) + ") has exited"), std::string::npos) << message;
  simgpu::destroyStream(stream);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

}  // namespace
}  // namespace simgpu::nccl
