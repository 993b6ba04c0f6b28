// Running a sample trainer on simgpu and reading what it printed, for both trainers' end-to-end
// tests (and a free port, which the launch's tests need as well): the environment its processes
// need, mpirun's command line, the ranks of a torchrun-style launch, its output lines sorted by
// kind (docs/dp_trainer.md and docs/framework_trainer.md, "Output"), and the expectations both
// trainers' tests share.
#pragma once

#include "child_processes.hpp"

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace sample_testing {

// A TCP port nobody listens on right now (the kernel's choice for port 0).
int freePort();

using Fields = std::map<std::string, std::string>;

// What a trainer printed, sorted by kind of line.
struct TrainerRun {
  ChildResult result;
  std::vector<Fields> iterations;
  std::vector<std::string> checksums;  // by iteration
  std::vector<Fields> counts;
  std::vector<Fields> memory;  // framework_trainer's allocator
  Fields config;
  Fields summary;
};

// Sorts what a trainer's process printed.
TrainerRun readRun(ChildResult result);

// The exit status and both outputs, for a failed expectation's message.
std::string describe(const TrainerRun& run);

// What every trainer process needs: simgpu in place of the CUDA runtime and NCCL, Open MPI
// allowed to run as root (CI), and the machine profile.
std::vector<std::string> simgpuEnvironment(const std::string& profile);

// Long enough for the largest run on a loaded machine; a hung run fails rather than hangs.
inline constexpr std::chrono::seconds kTrainerTimeout{180};

// `ranks` processes of `trainer` under mpirun (with the build's flags), each given `args`.
TrainerRun runUnderMpirun(const std::string& trainer, int ranks, const std::vector<std::string>& args,
                          const std::string& profile);

// A run that exited 0 with every gradient verified: a line and a checksum per iteration, and
// three op_counts lines per rank.
void expectVerified(const TrainerRun& run, int ranks, int iterations);

// The two ranks of a torchrun-style launch of `trainer` (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR and a free MASTER_PORT) with `args`, which make `iterations` in all, verify their
// gradients, rank 0 reporting the job and rank 1 only its counts; and they compute the same
// gradients as the job launched by mpirun.
void expectTorchrunMatchesMpirun(const std::string& trainer, const std::vector<std::string>& args,
                                 const std::string& profile, int iterations);

// An unknown --config exits 2 naming it; a torchrun-style launch without its variables exits 1
// naming the one missing.
void expectUnknownConfigAndIncompleteLaunchRefused(const std::string& trainer);

}  // namespace sample_testing
