// plan_soak_plans RUN_DIR OUT_DIR COUNT SEED: the random plans of the plan soak
// (bench/reliability/plan_soak.sh, docs/reliability.md).
//
// Tunes the recorded run RUN_DIR as `syncopate tune` does, then writes OUT_DIR/plan-<i>.json,
// i = 1..COUNT: the plan `tune` would write had its search picked random knobs instead of the
// best ones (bucket cap, communication stream, order, priority tail, parts, group-wide waits),
// with the model's prediction for them. writePlan gives each its checksum, as `tune` does, so
// every plan is one the runtime accepts and applies. Never the one-step-delayed mode, which
// `syncopate run` refuses before the job starts. Prints a line per plan: its file and its knobs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <fmt/format.h>

#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/tuner/op_pointers.hpp"
#include "syncopate/tuner/plan.hpp"
#include "syncopate/tuner/search.hpp"
#include "syncopate/tuner/tune.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace {

using namespace syncopate;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "plan_soak_plans: %s\n", what.c_str());
  std::exit(1);
}

// The smallest all-reduce, the largest group (bytes) and the most members in a group.
struct GroupSizes {
  std::uint64_t smallest = 1, largest_group = 1;
  std::uint32_t most_members = 1;
};

GroupSizes sizesOf(const std::vector<tuner::RecordedGroup>& groups) {
  GroupSizes s;
  std::uint64_t smallest = 0;
  for (const tuner::RecordedGroup& g : groups) {
    std::uint64_t total = 0;
    for (const tuner::CollectiveArgs& a : g.members) {
      const std::uint64_t b = a.send_bytes();
      if (b > 0 && (smallest == 0 || b < smallest)) smallest = b;
      total += b;
    }
    s.largest_group = std::max(s.largest_group, total);
    s.most_members = std::max(s.most_members, static_cast<std::uint32_t>(g.members.size()));
  }
  s.smallest = std::max<std::uint64_t>(smallest, 1);
  return s;
}

// Knobs over every setting the search could pick, and more: any cap from half the smallest
// all-reduce to twice the largest group (log-uniform), any split, any tail.
tuner::Knobs randomKnobs(std::mt19937_64& rng, const GroupSizes& s) {
  auto coin = [&] { return std::bernoulli_distribution(0.5)(rng); };
  auto logUniform = [&](double lo, double hi) {
    return static_cast<std::uint64_t>(std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng)));
  };
  tuner::Knobs k;
  k.communication_stream = coin();
  k.bucket_bytes = std::bernoulli_distribution(0.2)(rng)
                       ? 0
                       : logUniform(0.5 * static_cast<double>(s.smallest), 2.0 * static_cast<double>(s.largest_group));
  k.order = coin() ? tuner::Order::Ready : tuner::Order::Program;
  // The tail reorders ready order only (the program's order is kept as it is).
  if (k.order == tuner::Order::Ready) k.priority_tail = std::uniform_int_distribution<std::uint32_t>(0, s.most_members)(rng);
  k.split_bytes = coin() ? 0 : logUniform(0.25 * static_cast<double>(s.smallest), static_cast<double>(s.largest_group));
  k.per_bucket_waits = coin();
  k.delayed = false;
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) fail("usage: plan_soak_plans RUN_DIR OUT_DIR COUNT SEED");
  const std::filesystem::path run_dir = argv[1], out_dir = argv[2];
  const int count = std::atoi(argv[3]);
  std::mt19937_64 rng(std::stoull(argv[4]));

  auto run = analyzer::loadRun(run_dir, {});
  if (!run.ok()) fail(run.message());
  analyzer::AnalysisOptions analysis_options;
  analysis_options.critical_path = false;
  auto analysis = analyzer::analyze(*run, analysis_options);
  if (!analysis.ok()) fail(analysis.message());
  auto pointers = tuner::loadOpPointers(*run);
  if (!pointers.ok()) fail(pointers.message());
  auto model = tuner::WhatIfModel::build(*run, *analysis, *pointers);
  if (!model.ok()) fail(model.message());
  auto report = tuner::tuneModel(*model, run_dir.string(), static_cast<std::int32_t>(run->ranks.size()), {});
  if (!report.ok()) fail(report.message());
  if (report->search.groups.empty()) fail(report->search.note);

  const GroupSizes sizes = sizesOf(report->search.groups);
  std::filesystem::create_directories(out_dir);
  for (int i = 1; i <= count; ++i) {
    tuner::Candidate c;
    c.knobs = randomKnobs(rng, sizes);
    const tuner::ScheduleRules rules = tuner::rulesFor(c.knobs, report->search.groups);
    c.prediction = model->predict(&rules);
    if (!c.prediction.ok) fail("the model cannot predict " + tuner::describe(c.knobs) + ": " + c.prediction.error);
    tuner::Plan plan = tuner::planFor(*report, c);
    const std::filesystem::path file = out_dir / fmt::format("plan-{}.json", i);
    if (auto written = tuner::writePlan(plan, file); !written.ok()) fail(written.message());
    std::printf("%s %s\n", file.string().c_str(), tuner::describe(c.knobs).c_str());
  }
  return 0;
}
