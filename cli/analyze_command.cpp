// syncopate analyze DIR [--json] [--iteration-marker NAME] [--top N] [--no-critical-path] [--no-save] [--timings]
//                       [--distributed | --single-process] [--memory-limit BYTES]
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "allocation_policy.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "host_memory.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/distributed_analysis.hpp"
#include "syncopate/analyzer/mpi_session.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/analyzer/streamed_analysis.hpp"
#include "syncopate/trace/json_text.hpp"

namespace syncopate::cli {

namespace {

struct AnalyzeArgs {
  std::string dir;
  bool json = false;
  std::string marker;
  std::size_t top = 10;
  bool no_critical_path = false;
  bool no_save = false;
  bool timings = false;
  bool distributed = false;
  bool single_process = false;
  std::optional<std::uint64_t> memory_limit;
};

// The share of the memory the machine has available that the model may take by default: the
// estimate counts the model's large tables, and the analysis adds its own working sets on top.
constexpr double kDefaultMemoryShare = 0.8;

// --memory-limit (0: no limit), else the default share of what the machine has available (no
// limit when that cannot be read).
std::uint64_t memoryLimit(const AnalyzeArgs& args) {
  if (args.memory_limit) return *args.memory_limit;
  const std::optional<std::uint64_t> available = availableHostMemory();
  return available ? static_cast<std::uint64_t>(static_cast<double>(*available) * kDefaultMemoryShare) : 0;
}

// The phases' wall and CPU time and the peak memory at each one's end, on stderr (stdout stays
// the report, JSON included).
void printTimings(const analyzer::PhaseTimings& timings) {
  double wall = 0, cpu = 0, peak = 0;
  fmt::print(stderr, "{:<28} {:>8} {:>8} {:>8}\n", "phase", "wall s", "CPU s", "peak MiB");
  for (const auto& p : timings.phases()) {
    fmt::print(stderr, "{:<28} {:>8.2f} {:>8.2f} {:>8.0f}\n", p.name, p.wall_s, p.cpu_s, p.peak_rss_mib);
    wall += p.wall_s, cpu += p.cpu_s, peak = std::max(peak, p.peak_rss_mib);
  }
  fmt::print(stderr, "{:<28} {:>8.2f} {:>8.2f} {:>8.0f}\n", "total", wall, cpu, peak);
}

// The run's stores with their rows counted, when its model would pass `limit` (0: none); nothing
// when it fits, or when its stores cannot be counted (loadRun's own sentence then says why).
std::optional<std::vector<analyzer::StoreRowCount>> countedOverLimit(const std::string& dir, std::uint64_t limit) {
  if (limit == 0) return std::nullopt;
  auto counts = analyzer::countStoreRows(dir);
  if (!counts) return std::nullopt;
  std::uint64_t ops = 0, calls = 0;
  for (const auto& c : *counts) ops += c.ops, calls += c.api_calls;
  if (analyzer::modelBytesEstimate(ops, calls) <= limit) return std::nullopt;
  return std::move(counts).value();
}

analyzer::MpiSession startMpi() {
  auto mpi = analyzer::MpiSession::start();
  if (!mpi) fail("analyze", mpi.message());
  return std::move(mpi).value();
}

// A failure all processes share is printed once, by the root; every process ends with status 1.
template <class T>
void failTogether(const analyzer::MpiSession& mpi, const trace::Result<T>& result) {
  if (result) return;
  if (mpi.root()) fail("analyze", result.message());
  throw CLI::RuntimeError(1);
}

// " 1 2 3": a figure of each process, for --timings.
template <class T>
std::string perProcess(const std::vector<T>& values, T divisor = 1) {
  std::string out;
  for (T v : values) out += fmt::format(" {}", v / divisor);
  return out;
}

// Under an MPI launcher: each process analyses the ranks whose stores it read (and walks their
// legs of the critical path), and the root only what the ranks share (docs/analyzer.md,
// "Distributed analysis"). Every process but the root returns nullopt.
std::optional<std::pair<analyzer::RunModel, analyzer::Analysis>> analyzeDistributed(const analyzer::MpiSession& mpi,
                                                                                    const AnalyzeArgs& args,
                                                                                    const analyzer::LoadOptions& load,
                                                                                    const analyzer::AnalysisOptions& options) {
  auto done = analyzer::analyzeRunDistributed(mpi, args.dir, load, options);
  failTogether(mpi, done);
  if (!mpi.root()) return std::nullopt;
  if (args.timings)
    fmt::print(stderr, "distributed analysis: {} processes, stores read and analysed per process:{}, in batches:{}; the "
                       "root's model of what the ranks share: {:.1f} MiB;{} {} bytes exchanged; peak RSS per process (MB):{}\n",
               mpi.size(), perProcess(done->stores_per_process), perProcess(done->batches_per_process),
               static_cast<double>(done->model_bytes) / (1 << 20),
               options.critical_path ? fmt::format(" the critical path in {} legs over {} rounds;", done->path_legs,
                                                   done->path_rounds)
                                     : std::string(),
               done->bytes_exchanged, perProcess(done->peak_rss_kb, 1024L));
  return std::make_pair(std::move(*done->model), std::move(*done->analysis));
}

void run(const AnalyzeArgs& args) {
  // A launcher's variables are inherited: a job's script that runs `syncopate analyze` on one of
  // its ranks passes them on, and that one process must not join an MPI job of its own.
  const bool launched = !args.single_process && analyzer::startedByMpiLauncher();
  if (args.distributed && !launched)
    fail("analyze", "--distributed needs the processes of an MPI job: start it with mpirun or srun (for example "
                    "'mpirun -n 2 syncopate analyze DIR'); this process was not started by an MPI launcher "
                    "(none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set)");
  preferFewerPageFaultsForRun(args.dir);
  Progress progress("analyze");
  analyzer::PhaseTimings timings;
  analyzer::PhaseTimings* timed = args.timings ? &timings : nullptr;
  analyzer::LoadOptions load;
  load.timings = timed;
  load.memory_limit = memoryLimit(args);
  load.progress = [&](std::string_view what, std::size_t done, std::size_t total) { progress(what, done, total); };
  analyzer::AnalysisOptions options;
  options.iterations.marker = args.marker;
  options.critical_path = !args.no_critical_path;
  std::optional<analyzer::RunModel> model;
  std::optional<analyzer::Analysis> analysis;
  // A job of one process has no one to share the run with: it analyses as a plain `analyze`,
  // which reads on more threads and holds no summaries beside the model.
  std::optional<analyzer::MpiSession> mpi;
  if (launched) mpi.emplace(startMpi());
  if (mpi && mpi->size() > 1) {
    auto done = analyzeDistributed(*mpi, args, load, options);
    if (!done) return;  // not the root: its ranks' results are sent
    model = std::move(done->first);
    analysis = std::move(done->second);
  } else {
    // The load refuses a run over the limit before reading a row; without the critical path
    // such a run is then counted and analysed in batches. (Counting every run first would also
    // leave the heap of a run that fits fragmented by a thousand stores opened and closed: 300 MB
    // more at the peak of the 1 024-rank benchmark run.)
    auto loaded = analyzer::loadRun(args.dir, load);
    progress.finish();
    auto counted = loaded ? std::nullopt : countedOverLimit(args.dir, load.memory_limit);
    if (counted && args.no_critical_path) {
      auto streamed = analyzer::analyzeRunStreamed(*counted, load, options);
      if (!streamed) fail("analyze", streamed.message());
      fmt::print(stderr, "syncopate analyze: the run is larger than the {:.2f} MiB it may use (--memory-limit): analysed in "
                         "{} batches of its stores, each store read twice (docs/analyzer.md, \"Memory\")\n",
                 static_cast<double>(load.memory_limit) / (1 << 20), streamed->batches);
      model = std::move(streamed->model);
      analysis = std::move(streamed->analysis);
    } else {
      if (counted)
        fail("analyze", loaded.message() + "; or analyse it without the critical path (--no-critical-path), in batches of "
                                           "stores that fit");
      if (!loaded) fail("analyze", loaded.message());
      model = std::move(loaded).value();
      auto analysed = analyzer::analyze(*model, options, timed);
      if (!analysed) fail("analyze", analysed.message());
      analysis = std::move(analysed).value();
    }
  }

  if (timed) timed->start("report");

  analyzer::ReportOptions report;
  report.top_kernels = args.top;
  report.run_dir = args.dir;
  const nlohmann::json doc = analyzer::analysisToJson(*model, *analysis, report);
  if (!args.no_save) {
    if (timed) timed->start("save results");
    if (trace::Status s = analyzer::writeAnalysisResults(args.dir, *model, *analysis, doc); !s)
      fail("analyze", s.message() + " (use --no-save to analyse a read-only run directory)");
  }
  if (timed) timed->start("print");
  if (args.json)
    fmt::print("{}\n", trace::jsonText(doc, 2));
  else
    fmt::print("{}", analyzer::analysisToText(*model, *analysis, report));
  if (timed) {
    timed->stop();
    std::fflush(stdout);
    printTimings(timings);
  }
}

}  // namespace

void addAnalyzeCommand(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "Where the time went, per rank and iteration: compute, hidden and exposed communication, idle, "
                 "stragglers and the critical path. Results are also saved in DIR (analysis.json, analysis.sqlite).");
  sub->add_option("dir", args->dir, "run directory (recorded or imported)")->required();
  sub->add_flag("--json", args->json, "print the results as JSON (schema in docs/analyzer.md)");
  sub->add_option("--iteration-marker", args->marker,
                  "NVTX range that marks an iteration: a range named NAME, 'NAME ...' or 'NAME#N' "
                  "(default: PyTorch's ProfilerStep#N; without markers, iterations are found from the repeating op pattern)");
  sub->add_option("--top", args->top, "how many ops to list by total time")->capture_default_str();
  sub->add_flag("--no-critical-path", args->no_critical_path, "skip the critical path");
  sub->add_flag("--no-save", args->no_save, "do not write analysis.json and analysis.sqlite into DIR");
  sub->add_flag("--timings", args->timings, "print the wall and CPU time of each phase (loading, analysis, output) on stderr");
  sub->add_flag("--distributed", args->distributed,
                "insist on analysing across the processes of an MPI job (started by mpirun or srun, it does so "
                "anyway): each reads the stores it can see and analyses their ranks, the first combines them and "
                "writes the results");
  sub->add_flag("--single-process", args->single_process,
                "analyse in this process alone, even where MPI launcher variables are set (a training job's own "
                "script calling syncopate analyze on one of its ranks inherits them)")
      ->excludes("--distributed");
  sub->add_option("--memory-limit", args->memory_limit,
                  "the memory the run's model may take in one process (under mpirun or srun, each process's ranks), "
                  "e.g. 16GiB (KB, MB, GB are 1024-based, as for tune); a run that needs more is refused before it "
                  "is read, or, with --no-critical-path, analysed in batches of stores that fit; 0: no limit "
                  "(default: 80% of the memory this machine has available)")
      ->transform(CLI::AsSizeValue(false));
  sub->callback([args] { run(*args); });
}

}  // namespace syncopate::cli
