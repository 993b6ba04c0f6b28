// How long the tuner takes on a large run: a synthetic naive data-parallel run of R ranks
// (default 64) with L layers and N iterations is analysed, modelled and searched, as `syncopate
// tune` does after loading. Prints the sizes and the wall time of each stage. --sharded records
// a ZeRO-1 run instead (a reduce-scatter and an all-gather per layer).
//   tuner_search_scale [ranks] [layers] [iterations] [--sharded]
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "synthetic_trainer.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/tuner/search.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace syncopate;
  using Mode = tuner::testing::SyntheticTrainer::Mode;
  tuner::testing::SyntheticTrainer t;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--sharded") {
      t.mode = Mode::Zero1;
    } else {
      sizes.push_back(std::atoi(argv[i]));
    }
  }
  t.ranks = sizes.size() > 0 ? sizes[0] : 64;
  t.layers = sizes.size() > 1 ? sizes[1] : 24;
  t.iterations = sizes.size() > 2 ? sizes[2] : 10;
  t.latency_ns = 10'000;
  t.ns_per_byte = 90'000.0 / (1.5 * 4.0 * (1 << 20));
  // Sharded, every layer's bucket is split evenly among the ranks.
  if (sizes.size() > 3 || t.ranks < 2 || t.layers < 2 || t.iterations < 4 ||
      (t.mode == Mode::Zero1 && t.layer_floats % static_cast<std::uint64_t>(t.ranks) != 0)) {
    fmt::print(stderr,
               "usage: tuner_search_scale [ranks>=2] [layers>=2] [iterations>=4] [--sharded]\n"
               "  --sharded needs ranks to divide {} (the elements of a layer)\n",
               t.layer_floats);
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  tuner::testing::SyntheticRun run = tuner::testing::makeRun(t);
  const double generate = since(start);

  start = std::chrono::steady_clock::now();
  analyzer::AnalysisOptions options;
  options.critical_path = false;
  auto analysis = analyzer::analyze(run.model, options);
  if (!analysis.ok()) {
    fmt::print(stderr, "{}\n", analysis.message());
    return 1;
  }
  const double analyse = since(start);

  start = std::chrono::steady_clock::now();
  auto model = tuner::WhatIfModel::build(run.model, *analysis, run.pointers);
  if (!model.ok()) {
    fmt::print(stderr, "{}\n", model.message());
    return 1;
  }
  const double build = since(start);

  start = std::chrono::steady_clock::now();
  auto result = tuner::search(*model);
  if (!result.ok()) {
    fmt::print(stderr, "{}\n", result.message());
    return 1;
  }
  const double searched = since(start);
  fmt::print("ranks={} layers={} iterations={}{} ops={} simulated_ops_per_prediction={}\n", t.ranks, t.layers,
             t.iterations, t.mode == Mode::Zero1 ? " sharded" : "",
             run.model.ops.size(), result->baseline.simulated_ops);
  fmt::print("generate_s={:.3f} analyse_s={:.3f} model_s={:.3f} search_s={:.3f} candidates={} per_prediction_ms={:.1f}\n",
             generate, analyse, build, searched, result->candidates.size() + 1,
             1e3 * searched / static_cast<double>(result->candidates.size() + 1));
  fmt::print("replay_ms={:.3f} measured_ms={:.3f} recommended={}\n", result->baseline.iteration_ns / 1e6,
             model->measuredIterationNs() / 1e6,
             result->recommended >= 0 ? tuner::describe(result->candidates[static_cast<std::size_t>(result->recommended)].knobs)
                                      : std::string("none"));
  return 0;
}
