// The sample trainer recorded on simgpu (4 ranks under mpirun, `syncopate record`, the
// communication-heavy profile), then loaded and analysed. Each measured iteration of each rank
// is checked against dp_trainer's own model of its step (docs/dp_trainer.md, "The arithmetic"),
// applied to the iteration as it was measured rather than to an ideal one:
//   - the analyzer's iteration windows span the step times the trainer measured itself;
//   - naive mode (one stream): none of the communication is hidden, and compute and the
//     all-reduces (less the time spent waiting for other ranks) take what the profile prices;
//   - overlap mode: the communication hidden behind compute is at least what the measured step
//     saved over the naive one, and in every iteration what the model predicts, to 1%.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dp_trainer/machine_profile.hpp"
#include "dp_trainer/options.hpp"
#include "dp_trainer/step_prediction.hpp"
#include "scratch_dir.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {
namespace {

constexpr int kRanks = 4;
constexpr int kIterations = 10;
constexpr int kWarmup = 1;
constexpr int kLayers = 24;  // gpt-1.3b, dp_trainer's default configuration

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::filesystem::path profilePath() {
  return std::filesystem::path(DP_TEST_SOURCE_DIR) / "samples" / "dp_trainer" / "profiles" / "comm-heavy.json";
}

// Records the trainer in `mode` into `dir`, its output into `log`; returns the exit status.
int recordTrainer(const std::filesystem::path& dir, const std::filesystem::path& log, const std::string& mode) {
  const std::string command =
      "SIMGPU_PROFILE=" + quoted(profilePath().string()) + " " + quoted(DP_TEST_SYNCOPATE) + " record -o " +
      quoted(dir.string()) + " -- " + quoted(DP_TEST_MPIEXEC) + " -np " + std::to_string(kRanks) + " " +
      DP_TEST_MPIRUN_FLAGS + " -x LD_LIBRARY_PATH -x SIMGPU_PROFILE " + quoted(DP_TEST_DP_TRAINER) + " --mode " +
      mode + " --iterations " + std::to_string(kIterations) + " --warmup " + std::to_string(kWarmup) + " > " +
      quoted(log.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// dp_trainer's model of one step on the profile, and what the model says about overlapping:
// while a collective and a compute kernel run together, compute progresses at 1/(1 + s_c) and
// communication at 1/(1 + s_m) of full speed, so hiding O ns of communication lengthens
// compute by O·s_c/(1 + s_c) and communication by O·s_m/(1 + s_m).
struct Model {
  dp_trainer::StepPrediction step;
  double compute_stretch = 0.0;        // s_c / (1 + s_c)
  double communication_stretch = 0.0;  // s_m / (1 + s_m)

  // The naive step is compute + communication, and hiding O ns of communication saves O minus
  // both stretches: the predicted overlap step hides this much, of this much communication.
  double predictedHiddenNs() const {
    return (step.naive_ns - step.overlap_ns) / (1.0 - compute_stretch - communication_stretch);
  }
  double predictedOverlapRatio() const {
    return predictedHiddenNs() / (step.communication_ns + communication_stretch * predictedHiddenNs());
  }
};

Model model() {
  const dp_trainer::MachineProfile profile = dp_trainer::loadMachineProfile(profilePath().string());
  std::vector<const char*> argv = {"dp_trainer"};
  auto parsed = dp_trainer::parseOptions(static_cast<int>(argv.size()), argv.data());
  if (!parsed.options) throw std::runtime_error(parsed.err);
  Model m;
  m.step = dp_trainer::predictStep(profile, *parsed.options, kRanks);
  m.compute_stretch = profile.compute_slowdown / (1.0 + profile.compute_slowdown);
  m.communication_stretch = profile.communication_slowdown / (1.0 + profile.communication_slowdown);
  return m;
}

struct Recorded {
  RunModel model;
  Analysis analysis;
  std::map<std::int64_t, double> trainer_ms;  // measured iterations: the trainer's own step time (rank 0)
};

// "iter=N phase=measured time_ms=X ..." lines of the trainer's output.
std::map<std::int64_t, double> measuredTimes(const std::string& output) {
  std::map<std::int64_t, double> times;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    long long n = 0;
    double time_ms = 0.0;
    if (std::sscanf(line.c_str(), "iter=%lld phase=measured time_ms=%lf", &n, &time_ms) == 2) times[n] = time_ms;
  }
  return times;
}

bool recordAndAnalyse(const testing::ScratchDir& scratch, const std::string& mode, Recorded& out) {
  const std::filesystem::path dir = scratch / mode;
  const std::filesystem::path log = scratch / (mode + ".log");
  const int exit_code = recordTrainer(dir, log, mode);
  const std::string output = std::filesystem::exists(log) ? testing::readFile(log) : std::string();
  if (exit_code != 0) {
    ADD_FAILURE() << "syncopate record (" << mode << ") exited " << exit_code << ":\n"
                  << output.substr(output.size() > 4000 ? output.size() - 4000 : 0);
    return false;
  }
  out.trainer_ms = measuredTimes(output);
  EXPECT_EQ(out.trainer_ms.size(), static_cast<std::size_t>(kIterations)) << output;
  auto loaded = loadRun(dir);
  if (!loaded) {
    ADD_FAILURE() << mode << ": " << loaded.message();
    return false;
  }
  out.model = std::move(*loaded);
  auto analysis = analyze(out.model);
  if (!analysis) {
    ADD_FAILURE() << mode << ": " << analysis.message();
    return false;
  }
  out.analysis = std::move(*analysis);
  return true;
}

double ms(double ns) { return ns / 1e6; }

// The figures of one rank in one iteration, for failure messages.
std::string describe(const std::string& mode, const RankIterationMetrics& m) {
  const TimeBreakdown& t = m.time;
  char text[320];
  std::snprintf(text, sizeof text,
                "%s, iteration %lld, rank %lld: window %.3f ms, compute %.3f, memory %.3f, communication %.3f "
                "(hidden %.3f, exposed %.3f), waiting for other ranks %.3f, idle %.3f",
                mode.c_str(), static_cast<long long>(m.window.number), static_cast<long long>(m.rank),
                ms(t.window_ns), ms(t.compute_ns), ms(t.memory_ns), ms(t.communication_ns),
                ms(t.overlapped_communication_ns), ms(t.exposed_communication_ns), ms(m.collective_wait_ns),
                ms(t.idle_ns));
  return text;
}

void expectCommonShape(const Recorded& run) {
  EXPECT_EQ(run.model.ranks.size(), static_cast<std::size_t>(kRanks));
  EXPECT_EQ(run.analysis.iterations.source, IterationSource::Markers);
  ASSERT_EQ(run.analysis.ranks.size(), static_cast<std::size_t>(kRanks));
  for (const RankSummary& rank : run.analysis.ranks) EXPECT_EQ(rank.iterations, kIterations + kWarmup);
  // One all-reduce per layer per iteration (a bucket per layer in overlap mode at 25 MiB) plus
  // the setup broadcast, matched across all ranks.
  EXPECT_EQ(run.analysis.collectives.complete, kLayers * (kIterations + kWarmup) + 1);
  EXPECT_EQ(run.analysis.collectives.partial, 0);
  EXPECT_EQ(run.analysis.critical_paths.size(), static_cast<std::size_t>(kIterations + kWarmup));
}

// The windows tile the span the trainer measured: its step times run from a CUDA event at each
// step's start to the next one's, the windows from each step's first op (a few microseconds after
// the event, or a few milliseconds when the host is descheduled in between), so over the
// measured iterations the two totals differ only by the offsets at both ends.
void expectWindowsSpanTheTrainersSteps(const Recorded& run) {
  double trainer_total = 0.0, windows_total = 0.0;
  for (const auto& [number, trainer_ms] : run.trainer_ms) {
    const std::vector<const RankIterationMetrics*> rows = run.analysis.iteration(number);
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kRanks)) << "iteration " << number;
    for (const RankIterationMetrics* row : rows) {
      if (row->rank != 0) continue;
      trainer_total += trainer_ms;
      windows_total += ms(row->time.window_ns);
    }
  }
  EXPECT_NEAR(windows_total, trainer_total, 0.01 * trainer_total);
}

// Every nanosecond of a window is compute, memory, exposed communication or idle (memory may
// overlap the others: the check copy runs beside the next forward, a few microseconds).
void expectBreakdownCoversTheWindow(const std::string& mode, const RankIterationMetrics& row) {
  const TimeBreakdown& t = row.time;
  EXPECT_NEAR(ms(t.compute_ns + t.memory_ns + t.exposed_communication_ns + t.idle_ns), ms(t.window_ns),
              0.001 * ms(t.window_ns))
      << describe(mode, row);
}

// A rank's GPU time in an iteration, less the time its collectives waited for other ranks.
double busyNs(const RankIterationMetrics& row) {
  return static_cast<double>(row.time.window_ns - row.time.idle_ns - row.collective_wait_ns);
}

// Naive mode issues everything on one stream, so no communication can hide; with nothing
// overlapping there is no interference, and compute and the all-reduces take the profile's time
// in every iteration, however late a rank was (waiting for a late rank is not the all-reduce's).
TEST(RecordedDpTrainer, NaiveModeExposesAllItsCommunication) {
  testing::ScratchDir scratch;
  Recorded naive;
  ASSERT_TRUE(recordAndAnalyse(scratch, "naive", naive));
  expectCommonShape(naive);
  expectWindowsSpanTheTrainersSteps(naive);

  const Model m = model();
  for (const auto& measured : naive.trainer_ms) {
    for (const RankIterationMetrics* row : naive.analysis.iteration(measured.first)) {
      const TimeBreakdown& t = row->time;
      const std::string figures = describe("naive", *row);
      EXPECT_LE(t.overlapped_communication_ns, t.communication_ns / 1000) << figures;
      EXPECT_GE(t.exposed_communication_ns, t.communication_ns - t.communication_ns / 1000) << figures;
      EXPECT_NEAR(ms(t.compute_ns + t.memory_ns), ms(m.step.compute_ns), 0.01 * ms(m.step.compute_ns)) << figures;
      EXPECT_NEAR(ms(t.communication_ns - row->collective_wait_ns), ms(m.step.communication_ns),
                  0.01 * ms(m.step.communication_ns))
          << figures;
      expectBreakdownCoversTheWindow("naive", *row);
    }
  }
  // The critical path is the trainer's one stream: compute and communication, and little else
  // unless the host fell behind (then launch and host time join it, rightly): the median iteration.
  std::vector<double> on_gpu_share;
  for (const CriticalPath& path : naive.analysis.critical_paths) {
    const auto on_gpu = path.attribution[static_cast<std::size_t>(PathCategory::Compute)] +
                        path.attribution[static_cast<std::size_t>(PathCategory::Communication)];
    on_gpu_share.push_back(static_cast<double>(on_gpu) / static_cast<double>(path.length()));
  }
  std::sort(on_gpu_share.begin(), on_gpu_share.end());
  EXPECT_GT(on_gpu_share[on_gpu_share.size() / 2], 0.95);
}

// Overlap mode all-reduces each bucket on its own stream beside the backward pass. The model
// (docs/dp_trainer.md) says what hiding communication buys: a step that ran the naive step's
// compute and communication in `busy` ns hid at least naive - busy of communication (exactly
// that if nothing slowed down while overlapping, more when interference was charged).
//
// simgpu decides every op's time in model time, whatever the machine's load (docs/simgpu.md,
// "Decided in model time, whatever the load"), so every measured iteration of every rank hides
// what the model predicts: 46.87 ms of 80.03 ms of communication, a ratio of 0.586
// (docs/analyzer.md, "A recorded run"), each held to 1%.
TEST(RecordedDpTrainer, OverlapModeHidesWhatItsStepsSaved) {
  testing::ScratchDir scratch;
  Recorded overlap;
  ASSERT_TRUE(recordAndAnalyse(scratch, "overlap", overlap));
  expectCommonShape(overlap);
  expectWindowsSpanTheTrainersSteps(overlap);

  const Model m = model();
  const double hidden_ms = ms(m.predictedHiddenNs());
  const double ratio = m.predictedOverlapRatio();
  for (const auto& measured : overlap.trainer_ms) {
    for (const RankIterationMetrics* row : overlap.analysis.iteration(measured.first)) {
      const TimeBreakdown& t = row->time;
      const std::string figures = describe("overlap", *row);
      EXPECT_GE(ms(t.overlapped_communication_ns), ms(m.step.naive_ns - busyNs(*row)) - 0.005 * ms(m.step.naive_ns))
          << figures;
      EXPECT_NEAR(ms(t.overlapped_communication_ns), hidden_ms, 0.01 * hidden_ms) << figures;
      EXPECT_NEAR(t.overlapRatio(), ratio, 0.01 * ratio) << figures;
      expectBreakdownCoversTheWindow("overlap", *row);
    }
  }
}

}  // namespace
}  // namespace syncopate::analyzer
