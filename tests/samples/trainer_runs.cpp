#include "trainer_runs.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <utility>

namespace sample_testing {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// The key=value words of an output line.
Fields fields(const std::string& line) {
  Fields f;
  for (const std::string& word : split(line, ' ')) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

// The processes of a torchrun-style launch on this host, by rank.
std::vector<TrainerRun> runTorchrun(const std::string& trainer, int world_size, const std::vector<std::string>& args,
                                    const std::string& profile) {
  const std::string port = std::to_string(freePort());
  std::vector<ChildSpec> ranks;
  for (int rank = 0; rank < world_size; ++rank) {
    ChildSpec spec;
    spec.argv = {trainer};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = simgpuEnvironment(profile);
    for (const std::string& variable :
         {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(world_size),
          "LOCAL_RANK=" + std::to_string(rank), std::string("MASTER_ADDR=127.0.0.1"), "MASTER_PORT=" + port}) {
      spec.env.push_back(variable);
    }
    ranks.push_back(spec);
  }
  std::vector<TrainerRun> runs;
  for (ChildResult& result : runChildren(ranks, kTrainerTimeout)) runs.push_back(readRun(std::move(result)));
  return runs;
}

}  // namespace

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TrainerRun readRun(ChildResult result) {
  TrainerRun run;
  for (const std::string& line : split(result.out, '\n')) {
    if (line.rfind("iter=", 0) == 0) run.iterations.push_back(fields(line));
    if (line.rfind("grad_checksum ", 0) == 0) run.checksums.push_back(fields(line).at("value"));
    if (line.rfind("op_counts ", 0) == 0) run.counts.push_back(fields(line));
    if (line.rfind("memory ", 0) == 0) run.memory.push_back(fields(line));
    if (line.rfind("config ", 0) == 0) run.config = fields(line);
    if (line.rfind("summary ", 0) == 0) run.summary = fields(line);
  }
  run.result = std::move(result);
  return run;
}

std::string describe(const TrainerRun& run) {
  return "exit " + std::to_string(run.result.exit_code) + (run.result.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + run.result.out + "--- stderr\n" + run.result.err;
}

std::vector<std::string> simgpuEnvironment(const std::string& profile) {
  const char* inherited = std::getenv("LD_LIBRARY_PATH");
  std::string library_path = SYNCOPATE_SIMGPU_LIB_DIR;
  if (inherited != nullptr && *inherited != '\0') library_path += std::string(":") + inherited;
  return {"LD_LIBRARY_PATH=" + library_path, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "SIMGPU_PROFILE=" + profile};
}

TrainerRun runUnderMpirun(const std::string& trainer, int ranks, const std::vector<std::string>& args,
                          const std::string& profile) {
  ChildSpec spec;
  spec.argv = {SYNCOPATE_MPIEXEC, "-np", std::to_string(ranks)};
  for (const std::string& flag : split(SYNCOPATE_MPIRUN_FLAGS, ';')) spec.argv.push_back(flag);
  for (const char* forwarded : {"-x", "LD_LIBRARY_PATH", "-x", "SIMGPU_PROFILE"}) spec.argv.push_back(forwarded);
  spec.argv.push_back(trainer);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = simgpuEnvironment(profile);
  return readRun(runChild(spec, kTrainerTimeout));
}

void expectVerified(const TrainerRun& run, int ranks, int iterations) {
  ASSERT_EQ(run.result.exit_code, 0) << describe(run);
  EXPECT_EQ(run.summary.at("gradients"), "verified") << describe(run);
  EXPECT_EQ(run.summary.at("ranks"), std::to_string(ranks));
  EXPECT_EQ(static_cast<int>(run.iterations.size()), iterations);
  EXPECT_EQ(static_cast<int>(run.checksums.size()), iterations);
  EXPECT_EQ(static_cast<int>(run.counts.size()), 3 * ranks);  // setup, iteration and a total (or finish) per rank
}

void expectTorchrunMatchesMpirun(const std::string& trainer, const std::vector<std::string>& args,
                                 const std::string& profile, int iterations) {
  const std::vector<TrainerRun> ranks = runTorchrun(trainer, 2, args, profile);
  const TrainerRun& rank0 = ranks[0];
  const TrainerRun& rank1 = ranks[1];
  ASSERT_EQ(rank1.result.exit_code, 0) << describe(rank1);
  ASSERT_EQ(rank0.result.exit_code, 0) << describe(rank0);
  EXPECT_EQ(rank0.config.at("bootstrap"), "env");
  EXPECT_EQ(rank0.summary.at("ranks"), "2");
  EXPECT_EQ(rank0.summary.at("gradients"), "verified");
  EXPECT_EQ(rank1.counts.size(), 3u);  // rank 1 reports its counts only
  EXPECT_TRUE(rank1.checksums.empty());

  // The same job launched by mpirun computes the same gradients.
  const TrainerRun mpi = runUnderMpirun(trainer, 2, args, profile);
  expectVerified(mpi, 2, iterations);
  EXPECT_EQ(rank0.checksums, mpi.checksums);
}

void expectUnknownConfigAndIncompleteLaunchRefused(const std::string& trainer) {
  const ChildResult config = runChild({{trainer, "--config", "gpt-9t"}, {}}, std::chrono::seconds(30));
  EXPECT_EQ(config.exit_code, 2);
  EXPECT_NE(config.err.find("unknown --config 'gpt-9t'"), std::string::npos) << config.err;

  const ChildResult env =
      runChild({{trainer, "--bootstrap", "env"}, {"RANK=1", "WORLD_SIZE=2"}}, std::chrono::seconds(30));
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_NE(env.err.find("MASTER_ADDR"), std::string::npos) << env.err;
}

}  // namespace sample_testing
