// A run tuned from its slowest ranks (rank_subset.hpp, docs/tuner.md "Large runs") predicts
// what the run tuned whole predicts: on the analyzer's 16-rank synthetic run (rank 13 computes
// 5% slower) the replay of 4 ranks equals the whole run's, and 4 ranks without the straggler
// replay faster than the run ran; on the recorded two-rank trainer of tests/fixtures one rank
// predicts every schedule the two do. Without analysis results --model-ranks is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analysed_run.hpp"
#include "scratch_dir.hpp"
#include "synthetic_run.hpp"
#include "syncopate/tuner/op_pointers.hpp"
#include "syncopate/tuner/rank_subset.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::tuner {
namespace {

using analyzer::testing::ScratchDir;

// Analyses `dir` as `syncopate analyze` does, writing analysis.sqlite; empty or why not.
std::string analyse(const std::filesystem::path& dir) {
  auto saved = analyzer::testing::analyseIntoRunDir(dir);
  return saved ? std::string() : saved.message();
}

std::string writeSyntheticRun(const std::filesystem::path& dir) {
  const trace::Status written =
      synthetic::writeSyntheticRun(dir, {.ops = 16 * 6 * synthetic::kOpsPerIteration, .ranks = 16, .ranks_per_host = 8});
  return written ? analyse(dir) : written.message();
}

TEST(RankSubset, TheSlowestRanksReplayTheWholeRun) {
  ScratchDir dir;
  ASSERT_EQ(writeSyntheticRun(dir.path()), "");
  auto results = analyzer::readStoredResults(dir.path());
  ASSERT_TRUE(results.ok()) << results.message();
  const RankSubset slowest = slowestRanks(*results, 4);
  ASSERT_EQ(slowest.ranks.size(), 4u);
  EXPECT_NE(std::find(slowest.ranks.begin(), slowest.ranks.end(), 13), slowest.ranks.end()) << "the straggler is chosen";
  EXPECT_EQ(slowest.of, 16u);

  TuneOptions whole_options;
  whole_options.model_ranks = 16;  // every rank
  auto whole = tuneRun(dir.path(), whole_options);
  ASSERT_TRUE(whole.ok()) << whole.message();
  EXPECT_FALSE(whole->modelled_ranks.has_value());
  TuneOptions some_options;
  some_options.model_ranks = 4;
  auto some = tuneRun(dir.path(), some_options);
  ASSERT_TRUE(some.ok()) << some.message();
  ASSERT_TRUE(some->modelled_ranks.has_value());
  EXPECT_EQ(some->modelled_ranks->ranks, slowest.ranks);
  EXPECT_EQ(some->modelled_ranks->of, 16u);
  EXPECT_EQ(some->ranks, 16);
  EXPECT_NEAR(some->measured_ms, whole->measured_ms, 0.001 * whole->measured_ms);
  EXPECT_NEAR(some->replay_ms, whole->replay_ms, 0.001 * whole->replay_ms);
  EXPECT_NE(std::find_if(some->confidence_reasons.begin(), some->confidence_reasons.end(),
                         [](const std::string& s) { return s.starts_with("4 of the job's 16 ranks are modelled"); }),
            some->confidence_reasons.end());
  const nlohmann::json j = tuneReportJson(*some);
  EXPECT_EQ(j["modelled_ranks"]["of"], 16);
  EXPECT_EQ(j["modelled_ranks"]["ranks"].size(), 4u);
}

TEST(RankSubset, RanksThatWaitForTheStragglerReplayFasterThanTheRunRan) {
  ScratchDir dir;
  ASSERT_EQ(writeSyntheticRun(dir.path()), "");
  auto results = analyzer::readStoredResults(dir.path());
  ASSERT_TRUE(results.ok()) << results.message();
  RankSubset fast;  // four ranks of the first host, none of them rank 13
  fast.rank_rows = {0, 1, 2, 3};
  for (analyzer::Index r : fast.rank_rows) fast.ranks.push_back(results->ranks[r].rank);
  fast.of = results->ranks.size();
  analyzer::AnalysisOptions analysis_options;
  analysis_options.critical_path = false;
  auto run = loadRankSubset(dir.path(), *results, fast, analysis_options);
  ASSERT_TRUE(run.ok()) << run.message();
  auto pointers = loadOpPointers(run->model);
  ASSERT_TRUE(pointers.ok()) << pointers.message();
  ModelOptions options;
  options.absent_ranks_mirror = true;
  auto model = WhatIfModel::build(run->model, run->analysis, *pointers, options);
  ASSERT_TRUE(model.ok()) << model.message();
  const Prediction replay = model->predict(nullptr);
  ASSERT_TRUE(replay.ok) << replay.error;
  // They mirror ranks that do not wait for rank 13's slower compute.
  EXPECT_LT(replay.iteration_ns, 0.97 * model->measuredIterationNs());
}

TEST(RankSubset, OneRankOfTheRecordedTrainerPredictsEveryScheduleTheTwoDo) {
  ScratchDir dir;
  std::filesystem::copy(std::filesystem::path(SYNCOPATE_FIXTURES_DIR) / "dp_trainer" / "input", dir.path(),
                        std::filesystem::copy_options::recursive);
  ASSERT_EQ(analyse(dir.path()), "");
  auto whole = tuneRun(dir.path(), {});
  ASSERT_TRUE(whole.ok()) << whole.message();
  TuneOptions one_options;
  one_options.model_ranks = 1;
  auto one = tuneRun(dir.path(), one_options);
  ASSERT_TRUE(one.ok()) << one.message();
  ASSERT_TRUE(one->modelled_ranks.has_value());
  EXPECT_EQ(one->modelled_ranks->ranks.size(), 1u);
  EXPECT_NEAR(one->replay_ms, whole->replay_ms, 0.005 * whole->replay_ms);
  ASSERT_EQ(one->search.candidates.size(), whole->search.candidates.size());
  ASSERT_FALSE(whole->search.candidates.empty());
  for (std::size_t i = 0; i < whole->search.candidates.size(); ++i) {
    const Candidate& a = whole->search.candidates[i];
    const Candidate& b = one->search.candidates[i];
    ASSERT_EQ(describe(a.knobs), describe(b.knobs)) << "candidate " << i;
    ASSERT_EQ(a.prediction.ok, b.prediction.ok) << describe(a.knobs);
    if (a.prediction.ok) {
      EXPECT_NEAR(b.prediction.iteration_ns, a.prediction.iteration_ns, 0.005 * a.prediction.iteration_ns) << describe(a.knobs);
    }
  }
  EXPECT_EQ(one->search.recommended, whole->search.recommended);
}

TEST(RankSubset, ModelRanksWithoutAnalysisResultsIsRefused) {
  ScratchDir dir;
  const trace::Status written =
      synthetic::writeSyntheticRun(dir.path(), {.ops = 4 * 3 * synthetic::kOpsPerIteration, .ranks = 4, .ranks_per_host = 2});
  ASSERT_TRUE(written.ok()) << written.message();
  TuneOptions options;
  options.model_ranks = 2;
  auto report = tuneRun(dir.path(), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.message(), "--model-ranks models the slowest ranks the run's analysis names: " + dir.path().string() +
                                  " has no analysis.sqlite: run 'syncopate analyze " + dir.path().string() + "' first");
}

}  // namespace
}  // namespace syncopate::tuner
