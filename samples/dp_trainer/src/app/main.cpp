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
#include "sample_common/exit_codes.hpp"
#include "sample_common/trainer_main.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <optional>

namespace {

using namespace dp_trainer;
using sample_common::kExitError;
using sample_common::Membership;
using sample_common::Watchdog;

int predict(const Options& options) {
  try {
    const MachineProfile profile = loadMachineProfile(options.profile_path);
    const StepPrediction prediction = predictStep(profile, options, options.predict_ranks);
    std::fputs(formatPrediction(profile, options, options.predict_ranks, prediction).c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fputs(fmt::format("{}: {}\n", kProgram, e.what()).c_str(), stderr);
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
  if (!parsed.options) return sample_common::reportStop(parsed);
  const Options& options = *parsed.options;
  if (options.predict) return predict(options);

  const Membership membership = sample_common::joinJobOrAbort(kProgram, options.bootstrap, options.bootstrap_timeout_s);
  const int rank = membership.rank;
  Watchdog watchdog = sample_common::rankWatchdog(kProgram, rank, options.watchdog_s);

  // Errors end the job from inside the trainer's scope: its destructor (which would wait
  // for the communicator) never runs on a failed job.
  std::optional<Trainer> trainer;
  sample_common::trainOrAbort(kProgram, rank, [&] {
    trainer.emplace(options, membership);
    const RunSummary summary = trainer->run(watchdog);
    std::fputs((countsLine(rank, "setup", summary.setup) + "\n" + countsLine(rank, "iteration", summary.per_iteration) +
                "\n" + countsLine(rank, "total", summary.total) + "\n")
                   .c_str(),
                stdout);
    if (rank == 0) {
      std::fputs((summaryLine(summary) + "\n").c_str(), stdout);
      if (!options.json_path.empty()) writeJson(options.json_path, summary);
    }
    std::fflush(stdout);
  });
  trainer.reset();
  sample_common::leaveJob(membership);
  return 0;
}
