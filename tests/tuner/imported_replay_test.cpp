// The model of imported traces, whose waits are bare runtime calls: on a hand-made Kineto trace
// (tests/fixtures/kineto_waits) with exactly known waits and times, and on the real traces of
// distributed jobs in ../shared/traces/kineto, read in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "shared_traces.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/tuner/inferred_waits.hpp"
#include "syncopate/tuner/tune.hpp"

namespace syncopate::tuner {
namespace {

using analyzer::testing::ScratchDir;

// One rank of a two-rank job, two steps of 100 µs. In each, at o µs: gemm_bwd on stream 7
// [o+10, o+40) (launched at o); cudaEventRecord, cudaStreamWaitEvent at o+15; the all-reduce on
// stream 20 [o+40, o+70) (launched at o+20); cudaEventRecord, cudaStreamWaitEvent at o+30;
// sgd_update on stream 7 [o+70, o+95) (launched at o+35); cudaStreamSynchronize [o+50, o+95).
// A last cudaStreamWaitEvent at 300 µs has no launch after it. No call names a stream or event.
const std::filesystem::path kHandMade = SYNCOPATE_FIXTURES_DIR "/kineto_waits/input/rank-0.json";

std::filesystem::path importInto(const ScratchDir& dir, const std::vector<std::filesystem::path>& files) {
  const std::filesystem::path run = dir / "run";
  auto report = analyzer::importKineto(files, run);
  EXPECT_TRUE(report.ok()) << report.message();
  return run;
}

// "gemm_bwd@0": an op by its name (up to its parameters) and its start in µs from the first op.
std::string opText(const analyzer::RunModel& m, analyzer::Index op, std::int64_t t0) {
  const std::string_view name = m.str(m.ops.name[op]);
  return std::string(name.substr(0, name.find('('))) + "@" + std::to_string((m.ops.start[op] - t0) / 1000);
}

std::string waitText(const analyzer::RunModel& m, const InferredWait& w, std::int64_t t0) {
  std::vector<std::string> after;
  for (analyzer::Index op : w.after) after.push_back(opText(m, op, t0));
  std::sort(after.begin(), after.end());
  std::string text = w.kind == InferredWait::Kind::HostBlocks
                         ? "the host"
                         : "stream " + std::to_string(m.streams[w.stream].handle);
  text += " waits for";
  for (const std::string& a : after) text += " " + a;
  return text;
}

TEST(InferredWaits, BareRuntimeCallsOfAHandMadeTraceWaitForWhatEndedBeforeTheWaitWasOver) {
  ScratchDir dir;
  auto model = analyzer::loadRun(importInto(dir, {kHandMade}));
  ASSERT_TRUE(model.ok()) << model.message();
  const analyzer::RunModel& m = *model;
  std::int64_t t0 = m.ops.start[0];
  for (analyzer::Index op = 0; op < m.ops.size(); ++op) t0 = std::min(t0, m.ops.start[op]);

  const InferredWaits waits = inferWaits(m, issueTimes(m));
  EXPECT_EQ(waits.blocking_calls, 2u);
  EXPECT_EQ(waits.stream_waits, 4u);
  EXPECT_EQ(waits.stream_waits_unplaced, 1u);  // the last wait: no launch follows it
  ASSERT_EQ(waits.per_rank.size(), 1u);
  std::vector<std::string> got;
  for (const InferredWait& w : waits.per_rank[0]) got.push_back(waitText(m, w, t0));
  // The all-reduce's stream waits for the gemm (ended when the all-reduce started), the
  // update's stream for the all-reduce; the sync returned when the update ended, so it can
  // have waited for both streams' last ops, and for no later one.
  const std::vector<std::string> expected = {
      "stream 20 waits for gemm_bwd@0",
      "stream 7 waits for ncclKernel_AllReduce_RING_LL_Sum_float@30",
      "the host waits for ncclKernel_AllReduce_RING_LL_Sum_float@30 sgd_update@60",
      "stream 20 waits for gemm_bwd@100",
      "stream 7 waits for ncclKernel_AllReduce_RING_LL_Sum_float@130",
      "the host waits for ncclKernel_AllReduce_RING_LL_Sum_float@130 sgd_update@160",
  };
  EXPECT_EQ(got, expected);
}

TEST(ImportedReplay, HandMadeTraceReplaysEachIterationAsMeasured) {
  ScratchDir dir;
  auto report = tuneRun(importInto(dir, {kHandMade}), TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  // Step 1 runs from its gemm (110 µs) to step 2's (210 µs); step 2, the last, to its own
  // last op (295 µs). The last gets there only through the inferred waits: without them the
  // update would start at 245 µs (its launch at 235 plus the 10 µs launch latency), before the
  // all-reduce it waits for ended (270 µs).
  EXPECT_EQ(report->predicted_iterations, (std::vector<std::int64_t>{1, 2}));
  ASSERT_EQ(report->replay_per_iteration_ms.size(), 2u);
  EXPECT_NEAR(report->measured_per_iteration_ms[0], 0.100, 1e-9);
  EXPECT_NEAR(report->measured_per_iteration_ms[1], 0.085, 1e-9);
  EXPECT_NEAR(report->replay_per_iteration_ms[0], 0.100, 1e-9);
  EXPECT_NEAR(report->replay_per_iteration_ms[1], 0.085, 1e-9);
  EXPECT_NEAR(report->replay_error, 0.0, 1e-9);
  EXPECT_FALSE(report->model_buffers_known);
  EXPECT_EQ(report->assumptions.collectives_without_buffers, 2u);
  EXPECT_EQ(report->confidence, "high");

  const nlohmann::json json = tuneReportJson(*report);
  ASSERT_TRUE(json.contains("replay_error"));
  EXPECT_TRUE(json["recommendations"].is_array());
  EXPECT_TRUE(json["recommendations"].empty());
  EXPECT_NE(json["recommendations_note"].get<std::string>().find("no buffer addresses"), std::string::npos);
  EXPECT_TRUE(json["candidates"].empty());
}

// The replay-error table of docs/tuner.md ("Imported traces"): every trace of a distributed
// job in ../shared/traces/kineto, its median and worst iteration, in percent to 0.01.
struct DocumentedReplay {
  const char* folder;
  double median_percent, worst_percent;
  const char* confidence;
};
constexpr DocumentedReplay kDocumented[] = {
    {"trace_filter", 0.45, 0.90, "high"},
    {"nccl_parser_config", 0.00, 0.00, "high"},
    {"negative_queue_length_values_check", -0.00, -2.41, "high"},
    {"df_index_resolver", -0.00, 0.00, "high"},
    {"trace_diff/control", 0.20, 0.70, "high"},
    {"trace_diff/test", 0.57, 1.90, "high"},
};
TEST(ImportedReplay, EveryDistributedTraceOfTheSharedFolderIsReplayedAsDocumented) {
  for (const DocumentedReplay& d : kDocumented) {
    SCOPED_TRACE(d.folder);
    const std::filesystem::path folder = std::filesystem::path("kineto") / d.folder;
    ASSERT_TRUE(analyzer::testing::tracesPresent(folder));
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(analyzer::testing::tracesDir() / folder))
      if (entry.path().string().ends_with(".json.gz")) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ScratchDir dir;
    auto report = tuneRun(importInto(dir, files), TuneOptions{});
    ASSERT_TRUE(report.ok()) << report.message();

    const nlohmann::json json = tuneReportJson(*report);
    ASSERT_TRUE(json.contains("replay_error"));
    EXPECT_TRUE(json["recommendations"].empty());
    EXPECT_FALSE(json["recommendations_note"].get<std::string>().empty());

    std::vector<double> errors = report->replay_error_per_iteration;
    ASSERT_FALSE(errors.empty());
    std::sort(errors.begin(), errors.end());
    const double median = (errors[(errors.size() - 1) / 2] + errors[errors.size() / 2]) / 2;
    const double worst = *std::max_element(report->replay_error_per_iteration.begin(),
                                           report->replay_error_per_iteration.end(),
                                           [](double a, double b) { return std::abs(a) < std::abs(b); });
    EXPECT_NEAR(100 * median, d.median_percent, 0.005);
    EXPECT_NEAR(100 * worst, d.worst_percent, 0.005);
    EXPECT_EQ(report->confidence, d.confidence);
  }
}

std::vector<std::filesystem::path> sharedTrace(const std::string& folder_name) {
  const std::filesystem::path folder = std::filesystem::path("kineto") / folder_name;
  EXPECT_TRUE(analyzer::testing::tracesPresent(folder));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(analyzer::testing::tracesDir() / folder))
    if (entry.path().string().ends_with(".json.gz")) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// DDP read from the traces themselves: its forward ranges, and its buckets, the all-reduces a step
// launches after its forward, in launch order. nccl_parser_config's five (DDP's default 25 MiB cap:
// the full ones just over it); trace_diff's control and test differ in their buckets (3 and 6 a
// step, sizes not in those traces); trace_filter's all-reduces have no NCCL kernel in the trace.
TEST(ImportedReplay, DdpAndItsBucketsAreReadFromTheTraces) {
  struct Expected {
    const char* folder;
    std::size_t forwards;
    std::vector<std::uint64_t> buckets;
  };
  const std::vector<Expected> expected{
      {"nccl_parser_config", 6, {8196000, 31502336, 26255360, 26550272, 9724160}},
      {"trace_diff/control", 6, {0, 0, 0}},
      {"trace_diff/test", 6, {0, 0, 0, 0, 0, 0}},
      {"trace_filter", 4, {}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.folder);
    ScratchDir dir;
    auto report = tuneRun(importInto(dir, sharedTrace(e.folder)), TuneOptions{});
    ASSERT_TRUE(report.ok()) << report.message();
    ASSERT_EQ(report->frameworks.size(), 1u);
    const DetectedFramework& ddp = report->frameworks.front();
    EXPECT_EQ(ddp.name, "PyTorch DDP");
    EXPECT_EQ(ddp.evidence, std::to_string(e.forwards) + " DistributedDataParallel.forward ranges");
    EXPECT_EQ(ddp.bucket_bytes, e.buckets);
  }
  ScratchDir dir;
  auto report = tuneRun(importInto(dir, sharedTrace("nccl_parser_config")), TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  const nlohmann::json settings = tuneReportJson(*report)["framework"]["detected"][0]["settings"];
  EXPECT_EQ(settings["bucket_cap_mb"].get<std::string>().substr(0, 15), "at most 25.0 (t");
  // Its first bucket, 7.82 MiB against buckets of 25 MiB and more, was set apart: DDP's defaults.
  EXPECT_EQ(settings["first bucket"].get<std::string>().substr(0, 59),
            "7.82 MiB, set apart (under half the others' cap): bucket_ca");
}

// DDP's bucket_cap_mb and first bucket predicted from a trace's buckets alone: nccl_parser_config's
// 5, whose cap is taken as 25 MiB (the least middle bucket, 25.04 MiB, down to whole MiB) and
// whose first bucket (7.82 MiB, under the cap) as DDP's first apart, at 1 MiB: the cap left unset.
// Each cap of the grid that buckets otherwise cuts the first bucket at the cap too (25 MiB: 4
// buckets), each first bucket of the grid is predicted with the cap unset, and DDP's default
// first bucket gives back the recorded buckets and so the replay. The step is the host's
// (launch-bound): no value gains 2%, and the note says so. The traces whose buckets have no
// size, or no NCCL kernel, say why nothing is predicted.
TEST(ImportedReplay, DdpBucketCapIsPredictedFromTheBucketsOfATrace) {
  ScratchDir dir;
  auto report = tuneRun(importInto(dir, sharedTrace("nccl_parser_config")), TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  const TuneReport& r = *report;
  ASSERT_TRUE(r.ddp_by_size.found) << r.ddp_by_size.why_not;
  EXPECT_EQ(r.ddp_by_size.bucket_bytes, (std::vector<std::uint64_t>{8196000, 31502336, 26255360, 26550272, 9724160}));
  EXPECT_EQ(r.ddp_by_size.cap_bound, 25u << 20);
  std::vector<std::string> caps, firsts;
  for (const SettingPrediction& s : r.ddp_caps_by_size) {
    caps.push_back(s.value);
    if (s.value == "25") {
      EXPECT_EQ(s.buckets, 4u);
    }
  }
  for (const SettingPrediction& s : r.ddp_first_buckets_by_size) {
    firsts.push_back(s.value);
    EXPECT_EQ(s.with, "bucket_cap_mb unset");
    if (s.value == "1048576") {
      EXPECT_EQ(s.buckets, 5u);
      EXPECT_DOUBLE_EQ(s.predicted_iteration_ms, r.replay_ms);
    }
  }
  EXPECT_EQ(caps, (std::vector<std::string>{"1", "2", "5", "10", "25", "50", "100"}));
  // 2 and 4 MiB end the first bucket where 1 MiB does, at its recorded end.
  EXPECT_EQ(firsts, (std::vector<std::string>{"262144", "524288", "1048576", "8388608", "16777216"}));
  EXPECT_FALSE(r.setting.has_value());
  const nlohmann::json j = tuneReportJson(r);
  EXPECT_TRUE(j["recommendations"].empty());
  EXPECT_EQ(j["framework"]["ddp"]["from_bucket_sizes"]["bucket_caps"].size(), 7u);
  EXPECT_EQ(j["framework"]["ddp"]["from_bucket_sizes"]["first_buckets"].size(), 5u);
  EXPECT_NE(r.recommendations_note.find("DDP's bucket_cap_mb and first bucket, predicted from the 5 buckets of its "
                                        "steps, gain less than 2% at any value"),
            std::string::npos)
      << r.recommendations_note;

  const std::vector<std::pair<const char*, const char*>> why_not{
      {"trace_diff/control", "the buckets' sizes are not in the trace"},
      {"trace_filter", "shows no all-reduce kernel after its DDP forward"}};
  for (const auto& [folder, why] : why_not) {
    SCOPED_TRACE(folder);
    ScratchDir other;
    auto tuned = tuneRun(importInto(other, sharedTrace(folder)), TuneOptions{});
    ASSERT_TRUE(tuned.ok()) << tuned.message();
    EXPECT_FALSE(tuned->ddp_by_size.found);
    EXPECT_NE(tuned->ddp_by_size.why_not.find(why), std::string::npos) << tuned->ddp_by_size.why_not;
    EXPECT_NE(tuned->recommendations_note.find(why), std::string::npos) << tuned->recommendations_note;
  }
}

// gradient_as_bucket_view read from a trace: nccl_parser_config's autograd thread copies the 5
// buckets' 102 228 128 bytes back to the gradients in 161 copies after each step's last bucket
// (DDP's default, False), so True is predicted as the steps without them: faster, by their GPU
// time and the host time of their launches, under the 2% a recommendation needs.
TEST(ImportedReplay, GradientAsBucketViewIsReadFromATracesCopiesBack) {
  ScratchDir dir;
  auto report = tuneRun(importInto(dir, sharedTrace("nccl_parser_config")), TuneOptions{});
  ASSERT_TRUE(report.ok()) << report.message();
  const TuneReport& r = *report;
  ASSERT_TRUE(r.ddp_by_size.copies_back) << r.ddp_by_size.copies_back_why_not;
  for (const std::vector<DdpBucketCalls>& iterations : r.ddp_by_size.ranks)
    for (const DdpBucketCalls& it : iterations) EXPECT_EQ(it.copies_back.size(), 161u) << "iteration " << it.iteration;
  ASSERT_EQ(r.ddp_bucket_view.size(), 2u) << r.ddp_bucket_view_not_predicted;
  EXPECT_EQ(r.ddp_bucket_view[0].value, "False");
  EXPECT_DOUBLE_EQ(r.ddp_bucket_view[0].predicted_iteration_ms, r.replay_ms);
  EXPECT_EQ(r.ddp_bucket_view[1].value, "True");
  EXPECT_GT(r.ddp_bucket_view[1].gain, 0.0);
  EXPECT_LT(r.ddp_bucket_view[1].gain, 0.02);
  EXPECT_FALSE(r.ddp_bucket_view_recommended.has_value());
  EXPECT_NE(r.recommendations_note.find("; DDP's gradient_as_bucket_view=True, its copies back dropped, gains +0.7% "
                                        "(under 2%)"),
            std::string::npos)
      << r.recommendations_note;
  const nlohmann::json view = tuneReportJson(r)["framework"]["ddp"]["gradient_as_bucket_view"];
  EXPECT_FALSE(view["recorded"].get<bool>());
  EXPECT_EQ(view["values"].size(), 2u);
  EXPECT_EQ(view["values"][1]["how_to_apply"],
            "torch.nn.parallel.DistributedDataParallel(model, ..., gradient_as_bucket_view=True)");
}

}  // namespace
}  // namespace syncopate::tuner
