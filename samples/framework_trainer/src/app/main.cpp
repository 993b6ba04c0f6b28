// framework_trainer: a data-parallel training job shaped like a PyTorch DDP job (CUDA + NCCL),
// the same binary on a GPU and on simgpu. See docs/framework_trainer.md.
//
// Exit codes: 0 success; 1 an error (CUDA, NCCL, launch); 2 bad command line; 3 the
// synchronised gradients differ from the host's expectation or between ranks; 4 no progress
// within --watchdog seconds.
#include "trainer.hpp"

#include "framework_trainer/options.hpp"
#include "framework_trainer/report.hpp"
#include "sample_common/trainer_main.hpp"

#include <cstdio>
#include <optional>

using namespace framework_trainer;

int main(int argc, char** argv) {
  const ParseOutcome parsed = parseOptions(argc, argv);
  if (!parsed.options) return sample_common::reportStop(parsed);
  const Options& options = *parsed.options;

  const sample_common::Membership membership =
      sample_common::joinJobOrAbort(kProgram, options.bootstrap, options.bootstrap_timeout_s);
  const int rank = membership.rank;
  sample_common::Watchdog watchdog = sample_common::rankWatchdog(kProgram, rank, options.watchdog_s);

  // Errors end the job from inside the trainer's scope: its destructor (which would wait for
  // the communicator) never runs on a failed job.
  std::optional<Trainer> trainer;
  sample_common::trainOrAbort(kProgram, rank, [&] {
    trainer.emplace(options, membership);
    const RunSummary summary = trainer->run(watchdog);
    std::fputs((countsLine(rank, "setup", trainer->setupCounts()) + "\n" +
                countsLine(rank, "iteration", trainer->iterationCounts()) + "\n" +
                countsLine(rank, "finish", trainer->finishCounts()) + "\n" + memoryLine(rank, trainer->memory()) + "\n")
                   .c_str(),
               stdout);
    if (rank == 0) std::fputs((summaryLine(summary) + "\n").c_str(), stdout);
    std::fflush(stdout);
  });
  trainer.reset();
  sample_common::leaveJob(membership);
  return 0;
}
