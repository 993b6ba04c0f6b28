// dp_trainer: a data-parallel training program (CUDA + NCCL) that runs unchanged on a GPU and
// on simgpu. See docs/dp_trainer.md.
//
// Exit codes: 0 success; 1 an error (CUDA, NCCL, launch); 2 bad command line; 3 the
// synchronised gradients or the loss differ from the host reference; 4 no progress within
// --watchdog seconds; 5 the rank was told to exit (--exit-rank, kExitRankExit).
#include "trainer.hpp"

#include "dp_trainer/machine_profile.hpp"
#include "dp_trainer/options.hpp"
#include "dp_trainer/report.hpp"
#include "dp_trainer/step_prediction.hpp"
#include "sample_common/bootstrap.hpp"
#include "sample_common/watchdog.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <optional>

namespace {

using namespace dp_trainer;
using sample_common::abortJob;
using sample_common::exitNow;
using sample_common::Membership;
using sample_common::Watchdog;

constexpr int kExitError = 1;
constexpr int kExitVerification = 3;
constexpr int kExitHung = 4;

[[noreturn]] void fail(int rank, int exit_code, const std::string& message) {
  std::fputs(fmt::format("dp_trainer: rank {}: {}\n", rank, message).c_str(), stderr);
  abortJob(exit_code);
}

int predict(const Options& options) {
  try {
    const MachineProfile profile = loadMachineProfile(options.profile_path);
    const StepPrediction prediction = predictStep(profile, options, options.predict_ranks);
    std::fputs(formatPrediction(profile, options, options.predict_ranks, prediction).c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fputs(fmt::format("dp_trainer: {}\n", e.what()).c_str(), stderr);
    return kExitError;
  }
}

void writeJson(const std::string& path, const RunSummary& summary) {
  std::ofstream out(path);
  out << summaryJson(summary).dump(2) << '\n';
  if (!out) throw std::runtime_error(fmt::format("cannot write the JSON summary to {}", path));
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
  if (options.predict) return predict(options);

  Membership membership;
  try {
    membership = sample_common::joinJob(options.bootstrap, options.bootstrap_timeout_s);
  } catch (const std::exception& e) {
    std::fputs(fmt::format("dp_trainer: cannot join the job: {}\n", e.what()).c_str(), stderr);
    abortJob(kExitError);
  }
  const int rank = membership.rank;
  Watchdog watchdog(std::chrono::milliseconds(static_cast<long long>(options.watchdog_s * 1000.0)),
                    [&](const std::string& waiting_for) {
                      std::fputs(fmt::format("dp_trainer: rank {}: no progress for {:g} s while waiting for {}; "
                                             "stopping (a rank may have failed or a collective never completed)\n",
                                             rank, options.watchdog_s, waiting_for)
                                     .c_str(),
                                 stderr);
                      exitNow(kExitHung);  // from the watchdog's thread: no MPI calls
                    });

  // Errors end the job from inside the trainer's scope: its destructor (which would wait
  // for the communicator) never runs on a failed job.
  std::optional<Trainer> trainer;
  RunSummary summary;
  try {
    trainer.emplace(options, membership);
    summary = trainer->run(watchdog);
    std::fputs((countsLine(rank, "setup", summary.setup) + "\n" + countsLine(rank, "iteration", summary.per_iteration) +
                "\n" + countsLine(rank, "total", summary.total) + "\n")
                   .c_str(),
                stdout);
    if (rank == 0) {
      std::fputs((summaryLine(summary) + "\n").c_str(), stdout);
      if (!options.json_path.empty()) writeJson(options.json_path, summary);
    }
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
