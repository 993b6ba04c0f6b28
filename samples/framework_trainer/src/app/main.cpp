// framework_trainer: a data-parallel training job shaped like a PyTorch DDP job (CUDA + NCCL),
// the same binary on a GPU and on simgpu. See docs/framework_trainer.md.
//
// Exit codes: 0 success; 1 an error (CUDA, NCCL, launch); 2 bad command line; 3 the
// synchronised gradients differ from the host's expectation or between ranks; 4 no progress
// within --watchdog seconds.
#include "trainer.hpp"

#include "framework_trainer/options.hpp"
#include "framework_trainer/report.hpp"
#include "sample_common/bootstrap.hpp"
#include "sample_common/watchdog.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

namespace {

using namespace framework_trainer;

constexpr int kExitError = 1;
constexpr int kExitVerification = 3;
constexpr int kExitHung = 4;

[[noreturn]] void fail(int rank, int exit_code, const std::string& message) {
  std::fputs(fmt::format("framework_trainer: rank {}: {}\n", rank, message).c_str(), stderr);
  sample_common::abortJob(exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  const ParseOutcome parsed = parseOptions(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.out.c_str(), stdout);
    std::fputs(parsed.err.c_str(), stderr);
    return parsed.exit_code;
  }
  const Options& options = *parsed.options;

  sample_common::Membership membership;
  try {
    membership = sample_common::joinJob(options.bootstrap, options.bootstrap_timeout_s);
  } catch (const std::exception& e) {
    std::fputs(fmt::format("framework_trainer: cannot join the job: {}\n", e.what()).c_str(), stderr);
    sample_common::abortJob(kExitError);
  }
  const int rank = membership.rank;
  sample_common::Watchdog watchdog(
      std::chrono::milliseconds(static_cast<long long>(options.watchdog_s * 1000.0)), [&](const std::string& waiting_for) {
        std::fputs(fmt::format("framework_trainer: rank {}: no progress for {:g} s while waiting for {}; stopping (a "
                               "rank may have failed or a collective never completed)\n",
                               rank, options.watchdog_s, waiting_for)
                       .c_str(),
                   stderr);
        sample_common::exitNow(kExitHung);  // from the watchdog's thread: no MPI calls
      });

  // Errors end the job from inside the trainer's scope: its destructor (which would wait for
  // the communicator) never runs on a failed job.
  std::optional<Trainer> trainer;
  try {
    trainer.emplace(options, membership);
    const RunSummary summary = trainer->run(watchdog);
    std::fputs((countsLine(rank, "setup", trainer->setupCounts()) + "\n" +
                countsLine(rank, "iteration", trainer->iterationCounts()) + "\n" +
                countsLine(rank, "finish", trainer->finishCounts()) + "\n" + memoryLine(rank, trainer->memory()) + "\n")
                   .c_str(),
               stdout);
    if (rank == 0) std::fputs((summaryLine(summary) + "\n").c_str(), stdout);
    std::fflush(stdout);
  } catch (const VerificationError& e) {
    fail(rank, kExitVerification, e.what());
  } catch (const std::exception& e) {
    fail(rank, kExitError, e.what());
  }
  trainer.reset();
  sample_common::leaveJob(membership);
  return 0;
}
