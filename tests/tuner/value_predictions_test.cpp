// A setting's values predicted side by side (value_predictions.hpp): each value's replay, and why
// a value whose rewrite failed or threw is left out.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "synthetic_trainer.hpp"
#include "syncopate/tuner/value_predictions.hpp"

namespace syncopate::tuner {
namespace {

TEST(ValuePredictions, EachValueIsReplayedAndAValueLeftOutSaysWhy) {
  testing::SyntheticTrainer t;
  t.mode = testing::SyntheticTrainer::Mode::Zero1;
  const testing::ModelledRun m = testing::modelRun(t);
  std::set<std::size_t> done;
  const ValueProgress progress = [&](std::string_view what, std::size_t finished, std::size_t count) {
    EXPECT_EQ(what, "predicting caps");
    EXPECT_EQ(count, 3u);
    done.insert(finished);
  };
  const ValuePredictions each = predictEachValue(3, "predicting caps", progress, [&](std::size_t k) {
    if (k == 1) return trace::Result<WhatIfModel>(trace::failure("the reducer is not in step 3"));
    if (k == 2) throw std::runtime_error("std::bad_alloc");
    return m.model.withCalls(m.model.calls());  // the recorded calls: the replay
  });
  ASSERT_TRUE(each.ok(0)) << each.why_not[0];
  EXPECT_EQ(each.predicted[0]->iteration_ns, m.model.predict(nullptr).iteration_ns);
  EXPECT_TRUE(each.why_not[0].empty());
  EXPECT_FALSE(each.ok(1));
  EXPECT_FALSE(each.ok(2));
  EXPECT_EQ(each.notPredicted("bucket_cap_mb", {"1", "5", "25"}),
            (std::vector<std::string>{"bucket_cap_mb=5: the reducer is not in step 3",
                                      "bucket_cap_mb=25: the prediction failed: std::bad_alloc"}));
  EXPECT_EQ(done, (std::set<std::size_t>{1, 2, 3}));
}

}  // namespace
}  // namespace syncopate::tuner
