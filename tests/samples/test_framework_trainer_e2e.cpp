// framework_trainer end to end on simgpu, at the tiny configuration: 4 ranks under mpirun in
// both synchronisation modes with every iteration's gradients checked by the program itself
// (probes against the host's mirror, checksums across ranks), bit-identical gradients across
// modes and bucket caps, the op counts of docs/framework_trainer.md, the torchrun-style launch,
// NVTX's ProfilerStep#N ranges, and errors for bad arguments.
#include "child_processes.hpp"

#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/model_config.hpp"
#include "framework_trainer/op_counts.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace framework_trainer {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using dp_trainer::testing::ChildResult;
using dp_trainer::testing::ChildSpec;

const std::string kTrainer = FRAMEWORK_TRAINER_BINARY;
const std::string kProfile = std::string(FRAMEWORK_TRAINER_PROFILES) + "/h100-4-hosts-400g.json";
constexpr auto kTimeout = 180s;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

using Fields = std::map<std::string, std::string>;

Fields fields(const std::string& line) {
  Fields f;
  for (const std::string& word : split(line, ' ')) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

struct TrainerRun {
  ChildResult result;
  std::vector<Fields> iterations;
  std::vector<std::string> checksums;  // by iteration
  std::vector<Fields> counts;
  std::vector<Fields> memory;
  Fields config;
  Fields summary;
};

TrainerRun parse(ChildResult result) {
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

std::vector<std::string> simgpuEnvironment() {
  const char* inherited = std::getenv("LD_LIBRARY_PATH");
  std::string library_path = SYNCOPATE_SIMGPU_LIB_DIR;
  if (inherited != nullptr && *inherited != '\0') library_path += std::string(":") + inherited;
  return {"LD_LIBRARY_PATH=" + library_path, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "SIMGPU_PROFILE=" + kProfile};
}

// 1 warm-up and 2 measured iterations of the tiny configuration, the same in every run so that
// checksums line up.
std::vector<std::string> tiny(std::vector<std::string> args) {
  for (const char* a : {"--config", "tiny", "--iterations", "2", "--warmup", "1"}) args.emplace_back(a);
  return args;
}
constexpr int kTotalIterations = 3;

TrainerRun runMpi(int ranks, const std::vector<std::string>& args) {
  ChildSpec spec;
  spec.argv = {SYNCOPATE_MPIEXEC, "-np", std::to_string(ranks)};
  for (const std::string& flag : split(FRAMEWORK_TRAINER_MPIRUN_FLAGS, ';')) spec.argv.push_back(flag);
  for (const char* forwarded : {"-x", "LD_LIBRARY_PATH", "-x", "SIMGPU_PROFILE"}) spec.argv.push_back(forwarded);
  spec.argv.push_back(kTrainer);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = simgpuEnvironment();
  return parse(dp_trainer::testing::runChild(spec, kTimeout));
}

std::string describe(const TrainerRun& run) {
  return "exit " + std::to_string(run.result.exit_code) + (run.result.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + run.result.out + "--- stderr\n" + run.result.err;
}

void expectVerified(const TrainerRun& run, int ranks) {
  ASSERT_EQ(run.result.exit_code, 0) << describe(run);
  EXPECT_EQ(run.summary.at("gradients"), "verified") << describe(run);
  EXPECT_EQ(run.summary.at("ranks"), std::to_string(ranks));
  EXPECT_EQ(static_cast<int>(run.iterations.size()), kTotalIterations);
  EXPECT_EQ(static_cast<int>(run.checksums.size()), kTotalIterations);
  EXPECT_EQ(static_cast<int>(run.counts.size()), 3 * ranks);  // setup, iteration, finish per rank
}

// What every rank says one iteration issued, against the formulas of op_counts.hpp.
void expectIterationCounts(const TrainerRun& run, SyncMode mode, int buckets) {
  const OpCounts expected = iterationOpCounts(*findModelPreset("tiny"), mode, buckets);
  int seen = 0;
  for (const Fields& c : run.counts) {
    if (c.at("scope") != "iteration") continue;
    ++seen;
    EXPECT_EQ(c.at("kernels"), std::to_string(expected.kernels));
    EXPECT_EQ(c.at("memcpys"), std::to_string(expected.memcpys));
    EXPECT_EQ(c.at("collectives"), std::to_string(expected.collectives));
  }
  EXPECT_EQ(seen, 4);
}

class FrameworkTrainerOnSimgpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { naive_ = new TrainerRun(runMpi(4, tiny({"--mode", "naive"}))); }
  static void TearDownTestSuite() {
    delete naive_;
    naive_ = nullptr;
  }
  static const TrainerRun& naive() { return *naive_; }

 private:
  static TrainerRun* naive_;
};
TrainerRun* FrameworkTrainerOnSimgpu::naive_ = nullptr;

TEST_F(FrameworkTrainerOnSimgpu, NaiveOnFourRanksVerifiesEveryIteration) {
  const TrainerRun& run = naive();
  expectVerified(run, 4);
  EXPECT_EQ(run.config.at("mode"), "naive");
  EXPECT_EQ(run.config.at("bootstrap"), "mpi");
  const ParamLayout layout(*findModelPreset("tiny"));
  EXPECT_EQ(run.config.at("params"), std::to_string(layout.totalNumel()));
  EXPECT_EQ(run.config.at("param_tensors"), std::to_string(layout.size()));
  // One all-reduce per parameter tensor.
  expectIterationCounts(run, SyncMode::Naive, 0);
  // The caching allocator keeps blocks per stream, as PyTorch's does: one 256 MiB segment for
  // the compute stream's tensors and one for the check's.
  ASSERT_EQ(run.memory.size(), 4u);
  for (const Fields& m : run.memory) {
    EXPECT_EQ(m.at("segments"), "2");
    EXPECT_EQ(m.at("segment_mib"), "512.0");
  }
}

TEST_F(FrameworkTrainerOnSimgpu, DdpBucketsGiveBitIdenticalGradients) {
  // 0.5 MiB buckets of the 1.9 MB of tiny's gradients: DDP's buckets as assignBuckets makes them.
  const ParamLayout layout(*findModelPreset("tiny"));
  std::vector<std::size_t> bytes;
  for (const ParamSpec& p : layout.params()) bytes.push_back(p.bytes());
  const int buckets = static_cast<int>(assignBuckets(bytes, std::size_t{1} << 19).size());
  ASSERT_GT(buckets, 1);

  const TrainerRun ddp = runMpi(4, tiny({"--mode", "ddp", "--bucket-mb", "0.5"}));
  expectVerified(ddp, 4);
  EXPECT_EQ(ddp.config.at("buckets"), std::to_string(buckets));
  expectIterationCounts(ddp, SyncMode::Ddp, buckets);
  ASSERT_EQ(naive().result.exit_code, 0);
  EXPECT_EQ(ddp.checksums, naive().checksums);

  // DDP's default caps: the first bucket closes at 1 MiB, the rest fits in one 25 MiB bucket;
  // the same gradients again.
  ASSERT_EQ(assignBuckets(bytes, std::size_t{25} << 20).size(), 2u);
  const TrainerRun default_caps = runMpi(4, tiny({"--mode", "ddp"}));
  expectVerified(default_caps, 4);
  EXPECT_EQ(default_caps.config.at("buckets"), "2");
  EXPECT_EQ(default_caps.checksums, naive().checksums);
}

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

TEST(FrameworkTrainerLaunch, TorchrunStyleEnvironmentMatchesMpirun) {
  const std::vector<std::string> args = tiny({"--mode", "ddp"});
  const std::string port = std::to_string(freePort());
  std::vector<ChildSpec> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ChildSpec spec;
    spec.argv = {kTrainer};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = simgpuEnvironment();
    for (const std::string& variable : {"RANK=" + std::to_string(rank), "WORLD_SIZE=2"s,
                                        "LOCAL_RANK=" + std::to_string(rank), "MASTER_ADDR=127.0.0.1"s,
                                        "MASTER_PORT=" + port}) {
      spec.env.push_back(variable);
    }
    ranks.push_back(spec);
  }
  const std::vector<ChildResult> results = dp_trainer::testing::runChildren(ranks, kTimeout);
  const TrainerRun rank0 = parse(results[0]);
  const TrainerRun rank1 = parse(results[1]);
  ASSERT_EQ(rank1.result.exit_code, 0) << describe(rank1);
  ASSERT_EQ(rank0.result.exit_code, 0) << describe(rank0);
  EXPECT_EQ(rank0.config.at("bootstrap"), "env");
  EXPECT_EQ(rank0.summary.at("ranks"), "2");
  EXPECT_EQ(rank0.summary.at("gradients"), "verified");
  EXPECT_EQ(rank1.counts.size(), 3u);  // rank 1 reports its counts only
  EXPECT_TRUE(rank1.checksums.empty());

  const TrainerRun mpi = runMpi(2, args);
  expectVerified(mpi, 2);
  EXPECT_EQ(rank0.checksums, mpi.checksums);
}

// The ranges the NVTX injection library recorded, one "push NAME" or "pop" a line, on the main
// thread (backward's thread pushes none).
std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FrameworkTrainerLaunch, NvtxMarksEveryProfilerStepAndItsPhases) {
  for (const char* mode : {"naive", "ddp"}) {
    SCOPED_TRACE(mode);
    const std::string path = ::testing::TempDir() + "framework_trainer_nvtx_" + mode + ".txt";
    ChildSpec spec;
    spec.argv = {kTrainer, "--mode", mode};
    for (const std::string& a : tiny({})) spec.argv.push_back(a);
    spec.env = simgpuEnvironment();
    spec.env.push_back("NVTX_INJECTION64_PATH="s + FRAMEWORK_TRAINER_NVTX_RECORDER);
    spec.env.push_back("NVTX_RECORDER_OUT=" + path);
    const TrainerRun run = parse(dp_trainer::testing::runChild(spec, kTimeout));
    ASSERT_EQ(run.result.exit_code, 0) << describe(run);

    std::vector<std::string> expected;
    for (int n = 0; n < kTotalIterations; ++n) {
      expected.push_back("push ProfilerStep#" + std::to_string(n));
      for (const char* phase : {"forward", "backward"}) {
        expected.push_back("push "s + phase);
        expected.push_back("pop");
      }
      if (std::string(mode) == "naive") {
        expected.push_back("push gradient_sync");
        expected.push_back("pop");
      }
      expected.push_back("push optimizer");
      expected.push_back("pop");
      expected.push_back("pop");
    }
    EXPECT_EQ(readLines(path), expected);
  }
}

TEST(FrameworkTrainerLaunch, BadArgumentsExitNonZeroWithAMessage) {
  const ChildResult mode = dp_trainer::testing::runChild({{kTrainer, "--mode", "fsdp"}, {}}, 30s);
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_NE(mode.err.find("framework_trainer: --mode must be naive or ddp (got 'fsdp')"), std::string::npos)
      << mode.err;

  const ChildResult config = dp_trainer::testing::runChild({{kTrainer, "--config", "gpt-9t"}, {}}, 30s);
  EXPECT_EQ(config.exit_code, 2);
  EXPECT_NE(config.err.find("unknown --config 'gpt-9t'"), std::string::npos) << config.err;

  const ChildResult env = dp_trainer::testing::runChild({{kTrainer, "--bootstrap", "env"}, {"RANK=1", "WORLD_SIZE=2"}}, 30s);
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_NE(env.err.find("MASTER_ADDR"), std::string::npos) << env.err;
}

}  // namespace
}  // namespace framework_trainer
