#include "syncopate/tuner/tune.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "syncopate/analyzer/results_reader.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/schema.hpp"
#include "syncopate/tuner/free_memory.hpp"
#include "syncopate/tuner/op_pointers.hpp"
#include "syncopate/tuner/rank_subset.hpp"
#include "syncopate/tuner/sharded_buckets.hpp"
#include "syncopate/tuner/sharded_waits.hpp"
#include "syncopate/tuner/value_predictions.hpp"

namespace syncopate::tuner {

namespace {

double ms(double ns) { return ns / 1e6; }

// A bandwidth given in bytes per ns (GB/s), with a unit that keeps digits visible.
std::string bandwidthText(double bytes_per_ns) {
  if (bytes_per_ns >= 1.0) return fmt::format("{:.1f} GB/s", bytes_per_ns);
  if (bytes_per_ns >= 1e-3) return fmt::format("{:.1f} MB/s", bytes_per_ns * 1e3);
  return fmt::format("{:.1f} kB/s", bytes_per_ns * 1e6);
}

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); }

// What a predicted step gains on the replayed one: 1 - predicted / replayed (0 with no replay).
double gainOver(double replay_ms, double predicted_ms) { return replay_ms > 0 ? 1.0 - predicted_ms / replay_ms : 0.0; }

std::string interferenceText(const InterferenceEstimate& e) {
  return e.measured ? fmt::format("+{:.1f}% (measured on {} overlapped ops)", 100.0 * e.slowdown, e.samples)
                    : fmt::format("+{:.1f}% (prior: the run shows no overlap to measure it from)", 100.0 * e.slowdown);
}

// One paragraph for the plan: what the recorded schedule does and why this one is better.
std::string whyOf(const TuneReport& r, const Candidate& c) {
  const double share = r.measured_ms > 0 ? ms(r.bounds.communication_ns) / r.measured_ms : 0;
  std::string why = fmt::format(
      "Communication alone takes {:.1f} ms of a {:.1f} ms step ({:.0f}%), compute alone {:.1f} ms. ",
      ms(r.bounds.communication_ns), r.measured_ms, 100.0 * share, ms(r.bounds.compute_ns));
  bool sharded = false;
  for (const RecordedGroup& g : r.search.groups)
    for (const CollectiveArgs& a : g.members) sharded = sharded || a.type != trace::CollType::AllReduce;
  if (c.knobs.communication_stream && sharded) {
    why += "Each bucket of gradients is reduce-scattered, and each bucket of updated parameters all-gathered, on a "
           "communication stream as soon as the kernel that produces it ends, and each consumer waits only for the "
           "bucket it reads, so synchronisation runs behind the rest of the step instead of after it. ";
  } else if (c.knobs.communication_stream) {
    why += "Each bucket of gradients is all-reduced on a communication stream as soon as the kernel that produces it "
           "ends, and each consumer waits only for the bucket it reads, so synchronisation runs behind the rest of "
           "backward instead of after it. ";
  } else {
    why += fmt::format("{} keep their place in the program but are fused, paying the per-call latency fewer times. ",
                       sharded ? "Collectives" : "All-reduces");
  }
  if (c.fusion_buffer_bytes > 0) {
    why += fmt::format("Fusing them through a fusion buffer adds {} of device memory. ", bytesText(c.fusion_buffer_bytes));
  }
  why += fmt::format("Predicted step {:.1f} ms against {:.1f} ms replayed ({:.2f}x); the ideal bound (compute and "
                     "communication fully overlapped) is {:.1f} ms.",
                     ms(c.prediction.iteration_ns), r.replay_ms, r.replay_ms / ms(c.prediction.iteration_ns),
                     ms(r.bounds.ideal_ns));
  return why;
}

// How sure the model is: by the worst replay error over the measured iterations (the only
// direct evidence), and why it may be less sure than that says.
void setConfidence(TuneReport& r, const WhatIfModel& model) {
  double worst = 0;
  for (double e : r.replay_error_per_iteration) worst = std::max(worst, std::abs(e));
  r.confidence = worst <= 0.05 ? "high" : worst <= 0.15 ? "medium" : "low";
  auto& why = r.confidence_reasons;
  why.push_back(fmt::format("the replay is within {:.1f}% of the measurement on each of {} iteration(s)", 100.0 * worst,
                            r.replay_error_per_iteration.size()));
  const RunAssumptions& a = r.assumptions;
  if (a.blocking_calls_inferred > 0) {
    why.push_back(fmt::format("{} blocking call(s) name no stream or event in the trace: taken to wait, on every "
                              "stream, for the last op issued before them that had ended when they returned",
                              a.blocking_calls_inferred));
  }
  if (a.stream_waits_inferred > 0) {
    why.push_back(fmt::format("{} cudaStreamWaitEvent call(s) name no stream or event in the trace: the stream of the "
                              "next launch of their thread is taken to wait, on every other stream, for the last op "
                              "issued before them that had ended when that launch started",
                              a.stream_waits_inferred));
  }
  if (a.stream_waits_unplaced > 0) {
    why.push_back(fmt::format("{} cudaStreamWaitEvent call(s) have no launch after them on their thread: no "
                              "dependency is known for them",
                              a.stream_waits_unplaced));
  }
  if (a.p2p_without_arguments > 0) {
    why.push_back(fmt::format("{} point-to-point transfer(s) carry no peer or size: replayed with their measured "
                              "times, starting no earlier than they did (their peers arrive when they did)",
                              a.p2p_without_arguments));
  }
  std::size_t present = model.ranks(), job = present;
  for (const RecordedRank& rank : model.calls().ranks)
    for (const RecordedCall& rc : rank.calls)
      if (rc.call.kind == CallKind::Collective)
        job = std::max(job, static_cast<std::size_t>(rc.call.collective.comm_size));
  if (model.mirrorsAbsentRanks()) {
    why.push_back(fmt::format("{} of the job's {} ranks are modelled, those the others wait for (the least collective "
                              "wait in the run's analysis): the other ranks are taken to do what they do, and each "
                              "collective's timing is the whole run's",
                              present, model.jobRanks()));
  } else if (job > present) {
    why.push_back(fmt::format("{} of the job's {} or more ranks are in the run: collectives with absent ranks are "
                              "replayed with their measured times (the waits for the others included), starting no "
                              "earlier than they did (the absent ranks arrive when they did)",
                              present, job));
  }
}

// Each predicted iteration, measured and replayed, with the median and the worst error.
nlohmann::json replayPerIterationJson(const TuneReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < r.replay_error_per_iteration.size(); ++i) {
    rows.push_back({{"iteration", r.predicted_iterations[i]},
                    {"measured_ms", r.measured_per_iteration_ms[i]},
                    {"replay_ms", r.replay_per_iteration_ms[i]},
                    {"error", r.replay_error_per_iteration[i]}});
  }
  return rows;
}

// The value of a setting predicted fastest; null when none was predicted. Values within a
// microsecond of the fastest so far count as no faster (reports show microseconds; closer than
// that is the replays' float noise), so the earlier in the list wins a tie and the choice does
// not turn on noise: FSDP's BACKWARD_PRE before BACKWARD_POST when both prefetch as early.
constexpr double kTieMs = 1e-3;
const SettingPrediction* fastestSetting(const std::vector<SettingPrediction>& values) {
  const SettingPrediction* best = nullptr;
  for (const SettingPrediction& v : values) {
    if (best == nullptr || v.predicted_iteration_ms < best->predicted_iteration_ms - kTieMs) best = &v;
  }
  return best;
}

// The value of a setting predicted fastest, when it gains at least `min_gain`.
std::optional<SettingPrediction> bestSetting(const std::vector<SettingPrediction>& values, double min_gain) {
  const SettingPrediction* best = fastestSetting(values);
  if (best == nullptr || best->gain < min_gain) return std::nullopt;
  return *best;
}

std::vector<std::string> asText(const std::vector<std::uint64_t>& values) {
  std::vector<std::string> out;
  for (const std::uint64_t v : values) out.push_back(fmt::format("{}", v));
  return out;
}

SettingPrediction bucketCapSetting(std::uint64_t cap_mb, std::size_t buckets, double predicted_ms, double replay_ms) {
  SettingPrediction s;
  s.setting = "bucket_cap_mb";
  s.value = fmt::format("{}", cap_mb);
  s.how_to_apply = fmt::format("torch.nn.parallel.DistributedDataParallel(model, ..., bucket_cap_mb={})", cap_mb);
  s.buckets = buckets;
  s.predicted_iteration_ms = predicted_ms;
  s.gain = gainOver(replay_ms, predicted_ms);
  return s;
}

// DDP's first bucket, which it takes from dist._DEFAULT_FIRST_BUCKET_BYTES only while
// bucket_cap_mb is left unset (ddp_rebucket.hpp): its buckets then hold 25 MiB.
SettingPrediction firstBucketSetting(std::uint64_t bytes, std::size_t buckets, double predicted_ms, double replay_ms) {
  SettingPrediction s;
  s.setting = "_DEFAULT_FIRST_BUCKET_BYTES";
  s.value = fmt::format("{}", bytes);
  s.how_to_apply = bytes == kDdpFirstBucketBytes
                       ? "torch.nn.parallel.DistributedDataParallel(model, ...) without bucket_cap_mb (DDP's default: "
                         "a first bucket of 1 MiB, then buckets of 25 MiB)"
                       : fmt::format("torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = {} before "
                                     "torch.nn.parallel.DistributedDataParallel(model, ...) is built, without "
                                     "bucket_cap_mb (DDP reads it only then)",
                                     bytes);
  s.with = "bucket_cap_mb unset";
  s.buckets = buckets;
  s.predicted_iteration_ms = predicted_ms;
  s.gain = gainOver(replay_ms, predicted_ms);
  return s;
}

// DDP's rule for its two settings, as the report states it.
constexpr const char* kDdpRule =
    "bucket_cap_mb=N cuts every bucket, the first one too, at N; with bucket_cap_mb unset the buckets hold 25 MiB "
    "after a first one cut at torch.distributed._DEFAULT_FIRST_BUCKET_BYTES (current PyTorch's "
    "DistributedDataParallel; earlier releases cut the first bucket at _DEFAULT_FIRST_BUCKET_BYTES whatever the cap)";

// One value of DDP's settings a run's model predicts: a cap (bucket_cap_mb, the first bucket at
// the cap too) or, with the cap left unset, a first bucket; how it cuts the gradients.
enum class DdpSetting { BucketCap, FirstBucket };
struct DdpValue {
  DdpSetting setting = DdpSetting::BucketCap;
  std::uint64_t value = 0;  // MiB for a cap, bytes for a first bucket
  DdpBucketing bucketing;
  std::vector<std::uint64_t> buckets;  // the sizes it cuts
};

// Bucket sizes of the gradients `bytes` (in DDP's order) cut as `bucket_of` puts them.
std::vector<std::uint64_t> bucketSizes(const std::vector<std::uint64_t>& bytes, const std::vector<std::size_t>& bucket_of) {
  std::vector<std::uint64_t> sizes;
  for (std::size_t g = 0; g < bytes.size(); ++g) {
    if (bucket_of[g] >= sizes.size()) sizes.resize(bucket_of[g] + 1, 0);
    sizes[bucket_of[g]] += bytes[g];
  }
  return sizes;
}

// Each cap of a grid, then each first bucket of a grid, that cuts the gradients otherwise than a
// value of its setting before it (`buckets(bucketing)`: the bucket sizes it makes).
template <class Buckets>
std::vector<DdpValue> ddpValues(Buckets&& buckets) {
  std::vector<DdpValue> values;
  const auto add = [&](DdpSetting setting, std::uint64_t value, const DdpBucketing& bucketing) {
    std::vector<std::uint64_t> made = buckets(bucketing);
    for (const DdpValue& v : values)
      if (v.setting == setting && v.buckets == made) return;
    values.push_back({setting, value, bucketing, std::move(made)});
  };
  for (const std::uint64_t mb : {1, 2, 5, 10, 25, 50, 100, 200, 400, 800})
    add(DdpSetting::BucketCap, mb, ddpBucketingForCap(mb << 20));
  // DDP's own first bucket before the others, so that a value cutting the gradients as it does
  // is shown as DDP's; then all in ascending order.
  const std::size_t caps = values.size();
  for (const std::uint64_t kib : {1024, 256, 512, 2048, 4096, 8192, 16384})
    add(DdpSetting::FirstBucket, kib << 10, ddpDefaultBucketing(kib << 10));
  std::sort(values.begin() + static_cast<std::ptrdiff_t>(caps), values.end(),
            [](const DdpValue& a, const DdpValue& b) { return a.value < b.value; });
  return values;
}

SettingPrediction ddpSetting(const DdpValue& v, double predicted_ms, double replay_ms) {
  return v.setting == DdpSetting::BucketCap ? bucketCapSetting(v.value, v.buckets.size(), predicted_ms, replay_ms)
                                            : firstBucketSetting(v.value, v.buckets.size(), predicted_ms, replay_ms);
}

// "SETTING=VALUE: why" for each value left unpredicted.
std::vector<std::string> ddpNotPredicted(const std::vector<DdpValue>& values, const ValuePredictions& each) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (each.ok(k)) continue;
    out.push_back(fmt::format("{}={}: {}",
                              values[k].setting == DdpSetting::BucketCap ? "bucket_cap_mb" : "_DEFAULT_FIRST_BUCKET_BYTES",
                              values[k].value, each.why_not[k]));
  }
  return out;
}

// The rows into the caps' and the first buckets'; the best of both, recommended when it gains
// `min_gain`.
std::optional<SettingPrediction> keepDdpRows(std::vector<SettingPrediction> rows, std::vector<SettingPrediction>& caps,
                                             std::vector<SettingPrediction>& firsts, double min_gain) {
  std::optional<SettingPrediction> best = bestSetting(rows, min_gain);
  for (SettingPrediction& row : rows) (row.setting == "bucket_cap_mb" ? caps : firsts).push_back(std::move(row));
  return best;
}

// DDP's bucket cap and first bucket, where the run shows DDP's reducer: each value predicted side
// by side on the calls DDP would make with it.
void predictDdpBucketCaps(TuneReport& r, const WhatIfModel& model, double min_gain, const TuneProgress& progress) {
  r.ddp = findDdpReducer(model.calls(), model.firstIteration(), model.lastIteration());
  if (!r.ddp.found) return;
  const std::vector<DdpValue> values = ddpValues([&](const DdpBucketing& b) {
    return bucketSizes(r.ddp.gradient_sizes, ddpBucketOf(r.ddp.gradient_sizes, b));
  });
  const ValuePredictions each =
      predictEachValue(values.size(), "predicting DDP bucket caps and first buckets", progress, [&](std::size_t k) {
        return model.withCalls(rebucketDdp(model.calls(), r.ddp, values[k].bucketing, r.ddp.gradient_as_bucket_view));
      });
  r.ddp_caps_not_predicted = ddpNotPredicted(values, each);
  std::vector<SettingPrediction> rows;
  for (std::size_t k = 0; k < values.size(); ++k)
    if (each.ok(k)) rows.push_back(ddpSetting(values[k], ms(each.predicted[k]->iteration_ns), r.replay_ms));
  r.setting = keepDdpRows(std::move(rows), r.ddp_bucket_caps, r.ddp_first_buckets, min_gain);
}

SettingPrediction bucketViewSetting(bool on, std::size_t buckets) {
  SettingPrediction s;
  s.setting = "gradient_as_bucket_view";
  s.value = on ? "True" : "False";
  s.how_to_apply = fmt::format("torch.nn.parallel.DistributedDataParallel(model, ..., gradient_as_bucket_view={})", s.value);
  s.buckets = buckets;
  return s;
}

// The rows of gradient_as_bucket_view for a run recorded with `recorded`: that value first, its
// prediction the replay.
std::vector<SettingPrediction> recordedBucketView(bool recorded, std::size_t buckets, double replay_ms) {
  SettingPrediction as_recorded = bucketViewSetting(recorded, buckets);
  as_recorded.how_to_apply = "as the run was recorded";
  as_recorded.predicted_iteration_ms = replay_ms;
  return {as_recorded};
}

// gradient_as_bucket_view=True for a run that copied its gradients back: `written(k)` models the
// run as recorded, written anew (k = 0), and without the copies (k = 1); True's step is the
// replay moved by their difference, appended to `rows`, or `not_predicted` says why not.
template <class Written>
void predictBucketViewTrue(double replay_ms, std::size_t buckets, Written&& written, std::vector<SettingPrediction>& rows,
                           std::string& not_predicted, const TuneProgress& progress) {
  const ValuePredictions each = predictEachValue(2, "predicting DDP's gradient_as_bucket_view", progress, written);
  if (!each.ok(0) || !each.ok(1)) {
    not_predicted = fmt::format("gradient_as_bucket_view=True: {}",
                                each.ok(0) ? each.why_not[1] : "the recorded calls written anew: " + each.why_not[0]);
    return;
  }
  SettingPrediction views = bucketViewSetting(true, buckets);
  views.predicted_iteration_ms = replay_ms + ms(each.predicted[1]->iteration_ns) - ms(each.predicted[0]->iteration_ns);
  views.gain = gainOver(replay_ms, views.predicted_iteration_ms);
  rows.push_back(views);
}

// The last row (True, predicted) recommended when it gains `min_gain`.
void recommendBucketView(TuneReport& r, double min_gain) {
  if (r.ddp_bucket_view.size() == 2 && r.ddp_bucket_view.back().gain >= min_gain) {
    r.ddp_bucket_view_recommended = r.ddp_bucket_view.back();
  }
}

// DDP's gradient_as_bucket_view, where the run shows DDP's reducer: the recorded value is the
// replay. True, for a run that copied its gradients back out of the buckets, is the recorded
// buckets written without those copies (and without the copies in of a communication hook; a
// division into the bucket stays, in place), moved by the difference against the recorded
// buckets written anew with them. False, for a run recorded with views, is not predicted: the
// copies it would add were never made, so no time of theirs was measured.
void predictDdpBucketView(TuneReport& r, const WhatIfModel& model, double min_gain, const TuneProgress& progress) {
  if (!r.ddp.found) return;
  const bool recorded = r.ddp.gradient_as_bucket_view;
  const std::size_t buckets = r.ddp.bucket_bytes.size();
  r.ddp_bucket_view = recordedBucketView(recorded, buckets, r.replay_ms);
  if (recorded) {
    r.ddp_bucket_view_not_predicted = "gradient_as_bucket_view=False: the run copied no gradient back out of its "
                                      "buckets, so the copies that value adds have no measured time";
    return;
  }
  predictBucketViewTrue(
      r.replay_ms, buckets,
      [&](std::size_t k) { return model.withCalls(rebucketDdp(model.calls(), r.ddp, std::nullopt, k == 1)); },
      r.ddp_bucket_view, r.ddp_bucket_view_not_predicted, progress);
  recommendBucketView(r, min_gain);
}

// DDP's gradient_as_bucket_view read from the copies back after the last bucket
// (ddp_buckets_by_size.hpp): False, and True predicted as the run without them (both written
// with the buckets' fits, for communicators whose other ranks the trace lacks). Without copies
// back nothing is read, and `not_predicted` says why. The rows go to `rows`.
void predictDdpViewsFromCopiesBack(const TuneReport& r, const WhatIfModel& model, const std::vector<CommFit>& fits,
                                   std::vector<SettingPrediction>& rows, std::string& not_predicted,
                                   const TuneProgress& progress) {
  const DdpBucketsBySize& b = r.ddp_by_size;
  if (!b.copies_back) {
    not_predicted = "gradient_as_bucket_view is not read: " + b.copies_back_why_not;
    return;
  }
  rows = recordedBucketView(false, b.bucket_bytes.size(), r.replay_ms);
  predictBucketViewTrue(
      r.replay_ms, b.bucket_bytes.size(),
      [&](std::size_t k) { return model.withCalls(k == 0 ? model.calls() : dropDdpCopiesBack(model.calls(), b), fits); },
      rows, not_predicted, progress);
}

// DDP's bucket caps and first buckets from the buckets alone (ddp_buckets_by_size.hpp), each value
// of the grids (ddpValues): its step is the replay moved by what the value changes against the
// recorded buckets rewritten the same way. For a trace (no reducer found), the best is
// recommended when it gains enough.
void predictDdpCapsBySize(TuneReport& r, const WhatIfModel& model, DdpBucketsBySize buckets, double min_gain,
                          const TuneProgress& progress) {
  r.ddp_by_size = std::move(buckets);
  const DdpBucketsBySize& b = r.ddp_by_size;
  if (!b.found) return;
  const std::vector<DdpValue> values =
      ddpValues([&](const DdpBucketing& bucketing) {
        return ddpBucketsFor(b.bucket_bytes, b.cap_bound, b.first_apart, bucketing);
      });
  const std::vector<CommFit> fits = ddpBucketFits(model, b);
  // Value 0 is the recorded buckets, rewritten the same way: the baseline.
  const ValuePredictions each = predictEachValue(
      values.size() + 1, "predicting DDP bucket caps and first buckets from the buckets", progress, [&](std::size_t k) {
        const std::optional<DdpBucketing> bucketing =
            k == 0 ? std::nullopt : std::optional<DdpBucketing>(values[k - 1].bucketing);
        return model.withCalls(rebucketDdpBySize(model.calls(), b, bucketing), fits);
      });
  const std::vector<std::optional<Prediction>>& predicted = each.predicted;
  if (!each.ok(0)) {
    r.ddp_by_size.why_not = "the recorded buckets, rewritten, could not be predicted: " + each.why_not[0];
    r.ddp_by_size.found = false;
    return;
  }
  r.ddp_by_size_baseline_ms = ms(predicted[0]->iteration_ns);
  std::vector<SettingPrediction> rows;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!each.ok(k + 1)) continue;
    rows.push_back(ddpSetting(values[k], r.replay_ms + ms(predicted[k + 1]->iteration_ns) - r.ddp_by_size_baseline_ms,
                              r.replay_ms));
  }
  std::optional<SettingPrediction> best = keepDdpRows(std::move(rows), r.ddp_caps_by_size, r.ddp_first_buckets_by_size, min_gain);
  auto& why = r.ddp_by_size_assumptions;
  why.push_back(b.cap_bound > 0
                    ? fmt::format("where gradients end inside a recorded bucket is not in the trace: anywhere within "
                                  "{} of its start, nowhere after (the recorded cap, taken as the smallest bucket "
                                  "between the first and the last, down to whole MiB)",
                                  bytesText(b.cap_bound))
                    : "where gradients end inside a recorded bucket is not in the trace, nor the recorded cap "
                      "(fewer than three buckets): anywhere");
  why.push_back("backward's launches between two buckets' all-reduces are taken to make their gradients at an even "
                "rate");
  for (const CommFit& f : fits) {
    why.push_back(fmt::format("all-reduces of another size on communicator {:016x}, whose other ranks are not in the "
                              "run, take the time of a fit of its {} recorded buckets ({:.2f} us per ring step, {} "
                              "bus bandwidth, {:.1f}% rms error), the waits for the absent ranks included",
                              static_cast<std::uint64_t>(f.comm_id), f.samples, f.latency_ns / 1e3,
                              bandwidthText(f.ns_per_byte > 0 ? 1.0 / f.ns_per_byte : 0.0),
                              100.0 * f.rms_relative_error));
  }
  why.push_back(b.first_apart
                    ? fmt::format("the recorded first bucket ({}) is taken as set apart, bucket_cap_mb unset ({}): "
                                  "its gradients end within 1 MiB of its start",
                                  bytesText(b.bucket_bytes.front()),
                                  b.cap_bound > 0 ? "under half the cap bound" : "no cap bound to tell")
                    : fmt::format("the recorded first bucket ({}) is taken as cut at the cap, bucket_cap_mb given "
                                  "(not under half the cap bound)",
                                  bytesText(b.bucket_bytes.front())));
  if (r.ddp.found) {
    // Beside the reducer's reading, the one a trace gets: to compare the two on one run.
    predictDdpViewsFromCopiesBack(r, model, fits, r.ddp_bucket_view_by_size, r.ddp_bucket_view_by_size_not_predicted,
                                  progress);
    return;
  }
  r.setting = std::move(best);
  predictDdpViewsFromCopiesBack(r, model, fits, r.ddp_bucket_view, r.ddp_bucket_view_not_predicted, progress);
  recommendBucketView(r, min_gain);
}

// The fastest of DDP's predicted values, caps and first buckets alike; null when none was predicted.
const SettingPrediction* fastestDdpValue(const std::vector<SettingPrediction>& caps,
                                         const std::vector<SettingPrediction>& firsts) {
  const SettingPrediction* cap = fastestSetting(caps);
  const SettingPrediction* first = fastestSetting(firsts);
  if (cap == nullptr || first == nullptr) return cap != nullptr ? cap : first;
  return first->predicted_iteration_ms < cap->predicted_iteration_ms - kTieMs ? first : cap;
}

// One line per predicted value of DDP's settings (with the other setting's value it was predicted
// with, if any), the recommended one marked, then DDP's rule.
std::string ddpRowsText(const std::vector<SettingPrediction>& caps, const std::vector<SettingPrediction>& firsts,
                        const std::optional<SettingPrediction>& recommended) {
  std::string t;
  for (const auto* rows : {&caps, &firsts}) {
    for (const SettingPrediction& s : *rows) {
      const std::string value = s.setting + "=" + s.value + (s.with.empty() ? "" : ", " + s.with);
      t += fmt::format("  {:<58} {:3} buckets  {:9.3f} ms  {:>7}{}\n", value, s.buckets, s.predicted_iteration_ms,
                       percent(s.gain),
                       recommended && recommended->setting == s.setting && recommended->value == s.value
                           ? "   <- recommended"
                           : "");
    }
  }
  return t + fmt::format("  as DDP applies them: {}\n", kDdpRule);
}

// DDP's gradient_as_bucket_view as read (the first row), each value's prediction, and the line
// to change.
std::string ddpBucketViewText(const TuneReport& r) {
  std::string t = "DDP's gradient_as_bucket_view:\n";
  for (const SettingPrediction& s : r.ddp_bucket_view) {
    t += fmt::format("  {:<31} {:9.3f} ms  {:>7}{}\n", s.setting + "=" + s.value, s.predicted_iteration_ms,
                     percent(s.gain),
                     r.ddp_bucket_view_recommended && s.value == r.ddp_bucket_view_recommended->value ? "   <- recommended"
                     : &s == &r.ddp_bucket_view.front()                                              ? "   (recorded)"
                                                                                                      : "");
  }
  if (!r.ddp_bucket_view_not_predicted.empty()) t += fmt::format("  not predicted: {}\n", r.ddp_bucket_view_not_predicted);
  if (r.ddp_bucket_view_recommended) t += fmt::format("Set it: {}\n", r.ddp_bucket_view_recommended->how_to_apply);
  return t;
}

// The caps predicted from DDP's buckets alone, with what that assumed.
std::string ddpBySizeText(const TuneReport& r) {
  if (!r.ddp_by_size.found) return {};
  std::string t = fmt::format("DDP's bucket_cap_mb and first bucket from its {} buckets alone (the recorded buckets "
                              "rewritten: {:.3f} ms):\n",
                              r.ddp_by_size.bucket_bytes.size(), r.ddp_by_size_baseline_ms);
  t += ddpRowsText(r.ddp_caps_by_size, r.ddp_first_buckets_by_size, r.ddp.found ? std::nullopt : r.setting);
  for (const std::string& a : r.ddp_by_size_assumptions) t += fmt::format("  assumed: {}\n", a);
  if (!r.ddp.found) t += ddpBucketViewText(r);
  return t;
}

// NCCL_MAX_CTAS: what a user sets without Syncopate, every collective on at most that many
// channels; the best count is recommended when it gains enough on the recorded schedule.
void predictNcclMaxCtas(TuneReport& r, const WhatIfModel& model, double min_gain) {
  for (const auto& [count, ns] : predictMaxCtas(model)) {
    SettingPrediction s;
    s.setting = "NCCL_MAX_CTAS";
    s.value = fmt::format("{}", count);
    s.how_to_apply = fmt::format("export NCCL_MAX_CTAS={} in the job's environment (every collective on at most {} "
                                 "channel{})",
                                 count, count, count == 1 ? "" : "s");
    s.predicted_iteration_ms = ms(ns);
    s.gain = gainOver(r.replay_ms, s.predicted_iteration_ms);
    r.nccl_max_ctas.push_back(std::move(s));
  }
  r.max_ctas_setting = bestSetting(r.nccl_max_ctas, min_gain);
}

// CUDA_DEVICE_MAX_CONNECTIONS: each count of work queues above the recorded one, up to CUDA's
// default, predicted on the recorded schedule; the best is recommended when it gains enough.
// Counts are tried from the default down, so that of counts predicted alike (a job with fewer
// streams than queues) the recommendation is the default, which a user applies by unsetting the
// variable.
void predictCudaConnections(TuneReport& r, const WhatIfModel& model, double min_gain) {
  if (model.connections() == 0) return;  // not set: CUDA's default, which the model takes as a queue per stream
  r.recorded_connections = model.connections();
  for (std::uint32_t count = kCudaDefaultConnections; count > r.recorded_connections; count /= 2) {
    const Prediction p = model.predict(nullptr, false, nullptr, count);
    if (!p.ok) continue;
    SettingPrediction s;
    s.setting = "CUDA_DEVICE_MAX_CONNECTIONS";
    s.value = fmt::format("{}", count);
    s.how_to_apply =
        count == kCudaDefaultConnections
            ? fmt::format("unset CUDA_DEVICE_MAX_CONNECTIONS in the job's environment (CUDA's default, {} work queues "
                          "per device), or export CUDA_DEVICE_MAX_CONNECTIONS={}; keep it where Megatron-LM's "
                          "tensor-parallel overlap asks for 1",
                          count, count)
            : fmt::format("export CUDA_DEVICE_MAX_CONNECTIONS={} in the job's environment ({} work queues per device; "
                          "CUDA reads it when it makes a context)",
                          count, count);
    s.predicted_iteration_ms = ms(p.iteration_ns);
    s.gain = gainOver(r.replay_ms, s.predicted_iteration_ms);
    r.cuda_max_connections.push_back(std::move(s));
  }
  r.connections_setting = bestSetting(r.cuda_max_connections, min_gain);
  const Interference& interference = model.interference();
  if (!r.cuda_max_connections.empty() && (!interference.compute.measured || !interference.communication.measured)) {
    r.connections_assumption = fmt::format(
        "with more queues, communication overlaps computation where the recording shows too little overlap to "
        "measure what that costs: compute {}, communication {} (`--interference C,M` sets them)",
        interferenceText(interference.compute), interferenceText(interference.communication));
  }
}

// Whether the report recommends nothing: no plan and no setting (its note then says why).
bool recommendsNothing(const TuneReport& r) {
  return !r.plan && !r.setting && !r.ddp_bucket_view_recommended && !r.max_ctas_setting && !r.connections_setting &&
         r.sharded_recommended.empty() && r.fsdp_recommended.empty();
}

// FSDP's settings (fsdp_settings.hpp): the run's calls written as each value issues them, each
// predicted with the others as recorded; the best of each recommended when it gains enough.
// limit_all_gathers=False is predicted and never recommended: the host then runs ahead, and the
// caching allocator holds the gathered parameters of more units at once, memory the model does
// not count.
void predictFsdp(TuneReport& r, const WhatIfModel& model, double min_gain, const TuneProgress& progress) {
  r.fsdp = findFsdp(model.calls(), model.firstIteration());
  if (!r.fsdp.found) return;
  const FsdpSettings& recorded = r.fsdp.recorded;
  // Each value of each setting, the others as recorded.
  struct Value {
    std::vector<SettingPrediction>* rows;
    const char* setting;
    std::string value, recorded_value;
    FsdpSettings settings;
    std::size_t written = 0;  // its index among the runs written below
  };
  const auto truth = [](bool on) { return std::string(on ? "True" : "False"); };
  std::vector<Value> values;
  for (FsdpBackwardPrefetch prefetch : {FsdpBackwardPrefetch::Pre, FsdpBackwardPrefetch::Post, FsdpBackwardPrefetch::None}) {
    FsdpSettings settings = recorded;
    settings.backward_prefetch = prefetch;
    values.push_back({&r.fsdp_backward_prefetch, "backward_prefetch", toString(prefetch),
                      toString(recorded.backward_prefetch), settings});
  }
  if (r.fsdp.forward_prefetch_applies) {
    for (bool on : {false, true}) {
      FsdpSettings settings = recorded;
      settings.forward_prefetch = on;
      values.push_back({&r.fsdp_forward_prefetch, "forward_prefetch", truth(on), truth(recorded.forward_prefetch), settings});
    }
  }
  for (bool on : {true, false}) {
    FsdpSettings settings = recorded;
    settings.limit_all_gathers = on;
    values.push_back({&r.fsdp_limit_all_gathers, "limit_all_gathers", truth(on), truth(recorded.limit_all_gathers), settings});
  }
  // The recorded values written anew first (what each value's step is measured against), then
  // every value the run did not have, side by side.
  std::vector<FsdpSettings> written{recorded};
  for (Value& v : values) {
    if (v.value == v.recorded_value) continue;
    v.written = written.size();
    written.push_back(v.settings);
  }
  const ValuePredictions each = predictEachValue(written.size(), "predicting FSDP's settings", progress, [&](std::size_t k) {
    auto calls = fsdpSettingsCalls(model.calls(), model.firstIteration(), model.lastIteration(), r.fsdp, written[k]);
    if (!calls.ok()) return trace::Result<WhatIfModel>(calls.status());
    return model.withCalls(std::move(calls).value());
  });
  if (!each.ok(0)) {
    r.fsdp_not_predicted.push_back(fmt::format("every value: the recorded values written anew: {}", each.why_not[0]));
    return;
  }
  r.fsdp_rewritten_ms = ms(each.predicted[0]->iteration_ns);
  for (const Value& v : values) {
    SettingPrediction s;
    s.setting = v.setting;
    s.value = v.value;
    s.buckets = r.fsdp.forward_gathers;
    if (v.value == v.recorded_value) {
      s.how_to_apply = "as the run was recorded";
      s.predicted_iteration_ms = r.replay_ms;
      v.rows->insert(v.rows->begin(), s);
      continue;
    }
    const std::size_t k = v.written;
    if (!each.ok(k)) {
      r.fsdp_not_predicted.push_back(fmt::format("{}={}: {}", v.setting, v.value, each.why_not[k]));
      continue;
    }
    s.how_to_apply = fsdpHowTo(v.setting, v.value);
    s.predicted_iteration_ms = r.replay_ms + (ms(each.predicted[k]->iteration_ns) - r.fsdp_rewritten_ms);
    s.gain = gainOver(r.replay_ms, s.predicted_iteration_ms);
    v.rows->push_back(s);
  }
  for (const std::vector<SettingPrediction>* rows : {&r.fsdp_backward_prefetch, &r.fsdp_forward_prefetch}) {
    if (std::optional<SettingPrediction> best = bestSetting(*rows, min_gain)) r.fsdp_recommended.push_back(*best);
  }
  if (!recorded.limit_all_gathers) {
    if (std::optional<SettingPrediction> best = bestSetting(r.fsdp_limit_all_gathers, min_gain)) {
      r.fsdp_recommended.push_back(*best);
    }
  }
}

// A sharded optimizer's settings (sharded_overlap.hpp): the recorded value of each is the replay;
// "on", for a run that had it off, is predicted, and so is both on when both were off.
std::vector<SettingPrediction>& shardedRows(TuneReport& r, ShardedOverlap which) {
  return which == ShardedOverlap::GradReduce ? r.overlap_grad_reduce : r.overlap_param_gather;
}

void predictShardedOverlap(TuneReport& r, const WhatIfModel& model, double min_gain, bool param_gather_setting) {
  r.sharded = findShardedOptimizer(model);
  if (!r.sharded.found) return;
  // Collectives issued in line are moved by schedule rules; ones waited for at once by rewriting
  // the calls around them (sharded_waits.hpp). Both settings at once need both issued alike.
  const auto predicted = [&](bool grad_reduce, bool param_gather) -> trace::Result<double> {
    const Placement reduce = r.sharded.reduce_placement, gather = r.sharded.gather_placement;
    const bool waited = (grad_reduce && reduce == Placement::WaitedAtOnce) || (param_gather && gather == Placement::WaitedAtOnce);
    const bool in_line = (grad_reduce && reduce == Placement::InLine) || (param_gather && gather == Placement::InLine);
    if (waited && in_line) return trace::failure("the reduce-scatters and the all-gathers were issued differently");
    Prediction p;
    if (waited) {
      auto calls = overlapWaitedCollectives(model, r.sharded, grad_reduce, param_gather);
      if (!calls.ok()) return calls.status();
      auto rewritten = model.withCalls(std::move(calls).value());
      if (!rewritten.ok()) return rewritten.status();
      p = rewritten->predict(nullptr);
    } else {
      const ScheduleRules rules = shardedOverlapRules(r.search.groups, r.sharded, grad_reduce, param_gather);
      p = model.predict(&rules);
    }
    if (!p.ok) return trace::failure(p.error);
    return ms(p.iteration_ns);
  };
  for (ShardedOverlap which : {ShardedOverlap::GradReduce, ShardedOverlap::ParamGather}) {
    const bool reduce = which == ShardedOverlap::GradReduce;
    SettingPrediction recorded;
    recorded.setting = settingName(which);
    recorded.value = r.sharded.recordedValue(which);
    recorded.how_to_apply = "as the run was recorded";
    recorded.buckets = reduce ? r.sharded.reduce_scatters : r.sharded.all_gathers;
    recorded.predicted_iteration_ms = r.replay_ms;
    std::vector<SettingPrediction>& rows = shardedRows(r, which);
    rows.push_back(recorded);
    // Turning one off is not predicted: the model moves collectives onto its stream, never back.
    if (r.sharded.overlapped(which) || recorded.buckets == 0) continue;
    const trace::Result<double> on = predicted(reduce, !reduce);
    if (!on.ok()) {
      r.sharded_not_predicted.push_back(fmt::format("{}=on: {}", recorded.setting, on.message()));
      continue;
    }
    SettingPrediction s = recorded;
    s.value = "on";
    s.how_to_apply = shardedOverlapHowTo(which, {});
    s.predicted_iteration_ms = *on;
    s.gain = gainOver(r.replay_ms, *on);
    rows.push_back(s);
    if (!reduce && !param_gather_setting) continue;
    if (std::optional<SettingPrediction> best = bestSetting(rows, min_gain)) r.sharded_recommended.push_back(*best);
  }
  if (r.overlap_grad_reduce.size() == 2 && r.overlap_param_gather.size() == 2) {
    const trace::Result<double> both = predicted(true, true);
    if (both.ok()) r.sharded_both_on_ms = *both;
    else r.sharded_not_predicted.push_back(fmt::format("both on: {}", both.message()));
  }
}

// Each cut of the sharded optimizer's tensors into buckets (cuts[k]: gradients', parameters')
// with the settings `on` names turned on, for collectives waited for at once: the calls
// sharded_waits.hpp writes for the settings, rewritten with each cut (cuts[0], the recorded
// buckets, is the settings' own run rewritten).
ValuePredictions predictSizesWithOverlapsOn(
    const TuneReport& r, const WhatIfModel& model, const ShardedLayout& recorded, ShardedOverlaps on,
    const std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>>& cuts, const TuneProgress& progress) {
  const auto refused = [&](const std::string& why) {
    return ValuePredictions{std::vector<std::optional<Prediction>>(cuts.size()), std::vector<std::string>(cuts.size(), why)};
  };
  const bool reduces_in_line = on.grad_reduce && r.sharded.reduce_placement != Placement::WaitedAtOnce;
  const bool gathers_in_line = on.param_gather && r.sharded.gather_placement != Placement::WaitedAtOnce;
  if (reduces_in_line || gathers_in_line) {
    return refused(fmt::format("the {} were issued in line, where a setting is a schedule of the model rather than a "
                               "rewrite of the calls, and a schedule is not combined with another cut of the buckets",
                               reduces_in_line && gathers_in_line ? "reduce-scatters and the all-gathers"
                               : reduces_in_line                  ? "reduce-scatters"
                                                                  : "all-gathers"));
  }
  auto calls = overlapWaitedCollectives(model, r.sharded, on.grad_reduce, on.param_gather);
  if (!calls.ok()) return refused(calls.message());
  auto overlapped = model.withCalls(std::move(calls).value());
  if (!overlapped.ok()) return refused(overlapped.message());
  const ShardedOptimizerRun optimizer = findShardedOptimizer(*overlapped);
  if (!optimizer.found) return refused(optimizer.why_not);
  const ShardedLayout layout = findShardedLayout(*overlapped, optimizer);
  if (!layout.found) return refused(layout.why_not);
  // The cuts are of the recorded run's tensors; the rewritten run must show the same ones.
  if (layout.tensorBytes(false) != recorded.tensorBytes(false) || layout.tensorBytes(true) != recorded.tensorBytes(true)) {
    return refused("the run with the settings on shows other tensors in its buckets than the recorded run");
  }
  const std::string what = fmt::format("predicting the sharded optimizer's bucket sizes with {}", on.with());
  return predictEachValue(cuts.size(), what.c_str(), progress, [&](std::size_t k) {
    auto rebucketed = rebucketSharded(*overlapped, optimizer, layout, cuts[k].first, cuts[k].second);
    if (!rebucketed.ok()) return trace::Result<WhatIfModel>(rebucketed.status());
    return overlapped->withCalls(std::move(rebucketed).value());
  });
}

// A sharded optimizer's bucket size (sharded_buckets.hpp), in elements: each size of a grid that
// buckets the tensors otherwise than a smaller one, its step the replay moved by what the size
// changes against the recorded buckets rewritten the same way (so that what the rewriting itself
// changes, the fitted collective times, cancels out); the best recommended when it gains enough.
void predictShardedBucketSizes(TuneReport& r, const WhatIfModel& model, double min_gain, const TuneProgress& progress) {
  const ShardedLayout layout = findShardedLayout(model, r.sharded);
  if (!layout.found) {
    r.sharded_buckets_why_not = layout.why_not;
    return;
  }
  const std::vector<std::uint64_t> gradients = layout.tensorBytes(false), parameters = layout.tensorBytes(true);
  std::vector<std::uint64_t> sizes{0};  // 0: the recorded buckets
  std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> cuts{
      {layout.recordedBucketOf(false), layout.recordedBucketOf(true)}};
  for (const std::uint64_t millions : {1, 2, 5, 10, 20, 40, 80, 160, 320}) {
    const std::uint64_t elements = millions * 1'000'000;
    auto cut = std::pair{shardedBucketOf(gradients, layout.gradient_element_bytes, elements),
                         shardedBucketOf(parameters, layout.parameter_element_bytes, elements)};
    if (std::find(cuts.begin() + 1, cuts.end(), cut) != cuts.end()) continue;
    cuts.push_back(std::move(cut));
    sizes.push_back(elements);
  }
  const ValuePredictions each =
      predictEachValue(sizes.size(), "predicting the sharded optimizer's bucket sizes", progress, [&](std::size_t k) {
        auto calls = rebucketSharded(model, r.sharded, layout, cuts[k].first, cuts[k].second);
        if (!calls.ok()) return trace::Result<WhatIfModel>(calls.status());
        return model.withCalls(std::move(calls).value());
      });
  const std::vector<std::optional<Prediction>>& predicted = each.predicted;
  if (!each.ok(0)) {
    // The rewrite's own sentence when it refused (the same for every size), else what failed.
    r.sharded_buckets_why_not =
        predicted[0] ? "the recorded buckets, rewritten, could not be predicted: " + each.why_not[0] : each.why_not[0];
    return;
  }
  r.sharded_buckets_not_predicted = each.notPredicted(kShardedBucketSize, asText(sizes));
  r.sharded_buckets_baseline_ms = ms(predicted[0]->iteration_ns);
  // Each size's step against the recorded buckets' in the same rewrite, on the step of the run
  // with the recorded buckets (the replay, or the overlaps' own prediction: both together's where
  // both are on).
  const auto addRows = [&](const ValuePredictions& values, const std::string& with, double recorded_buckets_ms) {
    for (std::size_t k = 1; k < sizes.size(); ++k) {
      if (!values.ok(k)) continue;
      SettingPrediction s;
      s.setting = kShardedBucketSize;
      s.value = fmt::format("{}", sizes[k]);
      s.with = with;
      s.how_to_apply = shardedBucketSizeHowTo(sizes[k], {}, ShardedOverlaps::namedIn(with));
      s.buckets = cuts[k].first.empty() ? 0 : cuts[k].first.back() + 1;
      s.predicted_iteration_ms =
          recorded_buckets_ms + ms(values.predicted[k]->iteration_ns) - ms(values.predicted[0]->iteration_ns);
      s.gain = gainOver(r.replay_ms, s.predicted_iteration_ms);
      r.sharded_bucket_sizes.push_back(std::move(s));
    }
  };
  addRows(each, {}, r.replay_ms);
  // With the overlaps on too that the tuner recommends turning on, on their own prediction (both
  // together's where both are). Megatron-LM takes --overlap-param-gather only with
  // --overlap-grad-reduce, so a size with the first has the second on too; where both together
  // cannot be predicted, overlap_grad_reduce alone is tried, if recommended.
  // A setting recommended "on" is its rows' last, the prediction with it on.
  const auto recommendedOn = [&](ShardedOverlap which) {
    return std::any_of(r.sharded_recommended.begin(), r.sharded_recommended.end(),
                       [&](const SettingPrediction& s) { return s.setting == settingName(which) && s.value == "on"; });
  };
  const ShardedOverlaps recommended{recommendedOn(ShardedOverlap::GradReduce), recommendedOn(ShardedOverlap::ParamGather)};
  const bool grad_reduce_recorded_on = r.sharded.overlapped(ShardedOverlap::GradReduce);
  std::vector<std::pair<ShardedOverlaps, double>> tries;  // the overlaps, their own prediction
  if (recommended.param_gather) {
    tries.push_back({{!grad_reduce_recorded_on, true},
                     grad_reduce_recorded_on ? r.overlap_param_gather.back().predicted_iteration_ms : r.sharded_both_on_ms});
  }
  if (recommended.grad_reduce) tries.push_back({{true, false}, r.overlap_grad_reduce.back().predicted_iteration_ms});
  double on_ms = 0;
  for (const auto& [overlaps, own_ms] : tries) {
    const std::string with = overlaps.with();
    if (own_ms <= 0) {
      r.sharded_buckets_not_predicted.push_back(fmt::format("every size with {}: the settings together could not be "
                                                            "predicted",
                                                            with));
      continue;
    }
    const ValuePredictions overlapped = predictSizesWithOverlapsOn(r, model, layout, overlaps, cuts, progress);
    if (!overlapped.ok(0)) {
      r.sharded_buckets_not_predicted.push_back(fmt::format("every size with {}: {}", with, overlapped.why_not[0]));
      continue;
    }
    for (const std::string& why : overlapped.notPredicted(kShardedBucketSize, asText(sizes)))
      r.sharded_buckets_not_predicted.push_back(fmt::format("with {}, {}", with, why));
    addRows(overlapped, with, own_ms);
    on_ms = own_ms;
    break;
  }
  // The fastest size of those that go with the recommendations: with the overlaps on where they
  // are recommended (the size must then add to their own prediction), else as recorded (gaining
  // over the replay); none while an overlap is recommended that no size could be predicted with.
  std::vector<SettingPrediction> fitting;
  std::copy_if(r.sharded_bucket_sizes.begin(), r.sharded_bucket_sizes.end(), std::back_inserter(fitting),
               [&](const SettingPrediction& s) { return s.with.empty() != recommended.any(); });
  if (const SettingPrediction* best = fastestSetting(fitting)) {
    if (gainOver(recommended.any() ? on_ms : r.replay_ms, best->predicted_iteration_ms) >= min_gain) {
      r.sharded_recommended.push_back(*best);
    }
  }
}

std::string channelsWhy(const TuneReport& r) {
  return fmt::format(" NCCL channels: {} (recorded on {}), so that collectives take fewer SMs from the compute they "
                     "overlap while one channel's {} keeps them as fast; applied through NCCL's tuner plugin.",
                     channelRulesText(r.channels.chosen), r.channels.recorded_channels,
                     bandwidthText(r.channels.per_channel_bytes_per_ns));
}

// The recommended schedule's plan with the channel counts that gain on top of it.
void addChannels(Plan& plan, const TuneReport& r) {
  if (r.channels.chosen.empty()) return;
  plan.channels = r.channels.chosen;
  plan.prediction.iteration_ms = r.channels.predicted_iteration_ms;
  plan.prediction.speedup = r.replay_ms / r.channels.predicted_iteration_ms;
  plan.why += channelsWhy(r);
}

// A plan of channel counts alone: the schedule stays the program's (no group is planned, so the
// runtime reorders nothing).
Plan channelsOnlyPlan(const TuneReport& r) {
  Candidate as_recorded;
  as_recorded.knobs.communication_stream = false;
  as_recorded.knobs.order = Order::Program;
  as_recorded.prediction.iteration_ns = r.replay_ms * 1e6;
  Plan plan = planFor(r, as_recorded);
  plan.groups.clear();
  plan.why = fmt::format("The schedule stays as the program issues it.{} Predicted step {:.1f} ms against {:.1f} ms "
                         "replayed.",
                         channelsWhy(r), r.channels.predicted_iteration_ms, r.replay_ms);
  plan.channels = r.channels.chosen;
  plan.prediction.iteration_ms = r.channels.predicted_iteration_ms;
  plan.prediction.speedup = r.replay_ms / r.channels.predicted_iteration_ms;
  return plan;
}

}  // namespace

void nameShardedSettings(TuneReport& r) {
  const auto framework = std::find_if(r.frameworks.begin(), r.frameworks.end(), [](const DetectedFramework& f) {
    return f.name == "Megatron-LM" || f.name == "DeepSpeed";
  });
  if (framework == r.frameworks.end()) return;
  // Only the values the run did not have: the recorded one says so.
  const auto rename = [&](SettingPrediction& s) {
    if (s.setting == kShardedBucketSize) {
      s.how_to_apply = shardedBucketSizeHowTo(std::stoull(s.value), framework->name, ShardedOverlaps::namedIn(s.with));
      return;
    }
    const ShardedOverlap which =
        s.setting == settingName(ShardedOverlap::GradReduce) ? ShardedOverlap::GradReduce : ShardedOverlap::ParamGather;
    if (s.value != r.sharded.recordedValue(which)) s.how_to_apply = shardedOverlapHowTo(which, framework->name);
  };
  for (SettingPrediction& s : r.overlap_grad_reduce) rename(s);
  for (SettingPrediction& s : r.overlap_param_gather) rename(s);
  for (SettingPrediction& s : r.sharded_bucket_sizes) rename(s);
  for (SettingPrediction& s : r.sharded_recommended) rename(s);
}

trace::Result<TuneReport> tuneModel(const WhatIfModel& model, std::string run_dir, std::int32_t ranks,
                                    const TuneOptions& options, const TuneProgress& progress) {
  TuneReport r;
  r.run_dir = std::move(run_dir);
  r.ranks = ranks;
  r.predicted_iterations = model.predictedIterations();
  r.measured_ms = ms(model.measuredIterationNs());
  r.bounds = model.bounds();
  r.interference = model.interference();
  r.communication = model.communication();
  r.launch_latency_ns = model.hostTimings().launch_latency_ns;
  r.assumptions = model.calls().assumptions;
  r.model_buffers_known = model.calls().buffersKnown();
  r.memory_limit.bytes = options.search.memory_limit;
  r.memory_limit.source = options.search.memory_limit > 0 ? "--memory-limit" : "none known";
  if (model.calls().buffersKnown()) {
    auto result = search(model, options.search, [&](std::size_t done, std::size_t total) {
      if (progress) progress("searching", done, total);
    });
    if (!result.ok()) return result.status();
    r.search = std::move(result).value();
  } else {
    if (progress) progress("replaying", 0, 1);
    r.search.baseline = model.predict(nullptr);
    if (!r.search.baseline.ok) {
      return trace::failure("the replay of the recorded schedule failed: " + r.search.baseline.error);
    }
    r.search.note =
        "an imported trace carries no buffer addresses, so no schedule of the runtime can be predicted for it (which "
        "kernels make and read a collective's data is not known): the replay of the recorded schedule and the "
        "framework's settings are what this report predicts";
  }
  r.replay_ms = ms(r.search.baseline.iteration_ns);
  r.replay_error = r.measured_ms > 0 ? (r.replay_ms - r.measured_ms) / r.measured_ms : 0;
  const std::vector<double>& replayed = r.search.baseline.per_iteration_ns;
  for (std::size_t i = 0; i < replayed.size() && i < model.measuredPerIteration().size(); ++i) {
    const double measured = ms(model.measuredPerIteration()[i]);
    const double replay = ms(replayed[i]);
    r.measured_per_iteration_ms.push_back(measured);
    r.replay_per_iteration_ms.push_back(replay);
    r.replay_error_per_iteration.push_back(measured > 0 ? (replay - measured) / measured : 0);
  }
  setConfidence(r, model);
  predictDdpBucketCaps(r, model, options.search.min_gain, progress);
  predictDdpBucketView(r, model, options.search.min_gain, progress);
  if (r.ddp.found) predictDdpCapsBySize(r, model, ddpBucketsOfReducer(model.calls(), r.ddp), options.search.min_gain, progress);
  if (model.calls().buffersKnown()) {
    const Candidate* schedule =
        r.search.recommended >= 0 ? &r.search.candidates[static_cast<std::size_t>(r.search.recommended)] : nullptr;
    const ScheduleRules rules = schedule != nullptr ? rulesFor(schedule->knobs, r.search.groups) : ScheduleRules{};
    if (progress) progress("predicting NCCL channel counts", 0, 1);
    r.channels = searchChannels(model, schedule != nullptr ? &rules : nullptr,
                                schedule != nullptr ? kChannelMinGain : options.search.min_gain);
  } else {
    r.channels.why_not = "channel counts are predicted for runs recorded with `syncopate record`, whose NCCL plugins "
                         "report them; an imported trace carries none";
  }
  predictCudaConnections(r, model, options.search.min_gain);
  if (model.calls().buffersKnown()) {
    predictNcclMaxCtas(r, model, options.search.min_gain);
    predictShardedOverlap(r, model, options.search.min_gain, options.param_gather_setting);
    if (r.sharded.found) predictShardedBucketSizes(r, model, options.search.min_gain, progress);
    predictFsdp(r, model, options.search.min_gain, progress);
  } else {
    r.fsdp.why_not = "where FSDP issues its all-gathers is read from the units' buffers, known only for runs recorded "
                     "with `syncopate record`; an imported trace carries no buffer addresses";
    r.sharded.why_not = "which kernels write the gradients a reduce-scatter reduces is known only for runs recorded "
                        "with `syncopate record`; an imported trace carries no buffer addresses";
  }
  if (r.search.recommended >= 0) {
    r.plan = planFor(r, r.search.candidates[static_cast<std::size_t>(r.search.recommended)]);
    addChannels(*r.plan, r);
  } else if (!r.channels.chosen.empty() && r.replay_ms > 0 &&
             1.0 - r.channels.predicted_iteration_ms / r.replay_ms >= options.search.min_gain) {
    r.plan = channelsOnlyPlan(r);
  } else if (!r.search.note.empty() && r.measured_ms > 0) {
    // Why nothing is worth a plan, in the run's own terms: how far the step is from what no
    // schedule can beat.
    const double ideal_ms = ms(r.bounds.ideal_ns);
    r.search.note += fmt::format("; the measured step ({:.3f} ms) is {:.1f}% above the ideal bound ({:.3f} ms, "
                                 "compute and communication fully overlapped), the most any schedule could gain",
                                 r.measured_ms, 100.0 * (r.measured_ms - ideal_ms) / r.measured_ms, ideal_ms);
  }
  if (recommendsNothing(r)) r.recommendations_note = r.search.note;
  return r;
}

namespace {

// What the model is built from: every rank's rows, or only the slowest ranks' (rank_subset.hpp).
struct TunedRun {
  analyzer::RunModel model;
  analyzer::Analysis analysis;
  std::optional<ModelledRanks> modelled;
};

trace::Result<TunedRun> loadForTuning(const std::filesystem::path& run_dir, const TuneOptions& options,
                                      const analyzer::AnalysisOptions& analysis_options, const TuneProgress& progress) {
  const auto loading = [&](std::string_view, std::size_t done, std::size_t total) {
    if (progress) progress("loading", done, total);
  };
  std::optional<std::size_t> count = options.model_ranks;
  if (!count) {
    auto stores = trace::listStores(run_dir);
    if (stores.ok() && stores->size() > kModelEveryRankUpTo) count = kSlowestRanksModelled;
  }
  if (count) {
    auto results = analyzer::readStoredResults(run_dir);
    if (!results && options.model_ranks)
      return trace::failure("--model-ranks models the slowest ranks the run's analysis names: " + results.message());
    // A large run never analysed is modelled whole, as before it was large.
    if (results && *count < results->ranks.size()) {
      const RankSubset subset = slowestRanks(*results, *count);
      if (subset.rank_rows.empty())
        return trace::failure("the run's analysis gives no rank an iteration, so no rank can be modelled: run "
                              "'syncopate analyze " + run_dir.string() + "' and look at its iterations");
      auto run = loadRankSubset(run_dir, *results, subset, analysis_options, loading);
      if (!run) return run.status();
      return TunedRun{std::move(run->model), std::move(run->analysis), ModelledRanks{subset.ranks, subset.of}};
    }
  }
  analyzer::LoadOptions load;
  load.progress = loading;
  auto model = analyzer::loadRun(run_dir, load);
  if (!model.ok()) return model.status();
  auto analysis = analyzer::analyze(*model, analysis_options);
  if (!analysis.ok()) return analysis.status();
  return TunedRun{std::move(model).value(), std::move(analysis).value(), std::nullopt};
}

}  // namespace

trace::Result<TuneReport> tuneRun(const std::filesystem::path& run_dir, const TuneOptions& options,
                                  const TuneProgress& progress) {
  analyzer::AnalysisOptions analysis_options;
  analysis_options.iterations.marker = options.iteration_marker;
  analysis_options.critical_path = false;  // the model does not need it
  auto run = loadForTuning(run_dir, options, analysis_options, progress);
  if (!run) return run.status();
  const analyzer::RunModel* model = &run->model;
  const analyzer::Analysis* analysis = &run->analysis;
  auto pointers = loadOpPointers(*model);
  if (!pointers.ok()) return pointers.status();
  // The memory a plan may add: the user's limit, else what every rank left free.
  TuneOptions resolved = options;
  std::string limit_source = "--memory-limit";
  if (options.memory_limit) {
    resolved.search.memory_limit = *options.memory_limit;
  } else {
    auto free = recordedFreeMemory(*model);
    if (!free.ok()) return free.status();
    if (free->has_value()) {
      const FreeMemory& f = **free;
      resolved.search.memory_limit = std::max<std::uint64_t>(f.bytes, 1);
      limit_source = fmt::format("free in the recording (rank {}: {} of {} never held)", f.rank,
                                 bytesText(f.bytes), bytesText(f.device_bytes));
    }
  }
  const std::vector<DetectedFramework> frameworks = detectFrameworks(*model, *analysis);
  resolved.param_gather_setting = std::none_of(frameworks.begin(), frameworks.end(),
                                               [](const DetectedFramework& f) { return f.name == "DeepSpeed"; });
  if (progress) progress("modelling", 0, 1);
  ModelOptions model_options = options.model;
  model_options.absent_ranks_mirror = run->modelled.has_value();
  auto whatif = WhatIfModel::build(*model, *analysis, *pointers, model_options);
  if (!whatif.ok()) return whatif.status();
  auto channels = readRecordedChannels(*model);
  if (!channels.ok()) return channels.status();
  whatif->setChannels(std::move(channels).value());
  auto connections = readRecordedConnections(*model);
  if (!connections.ok()) return connections.status();
  if (connections->set) whatif->setConnections(connections->connections);
  const std::size_t job_ranks = run->modelled ? run->modelled->of : model->ranks.size();
  auto report = tuneModel(*whatif, run_dir.string(), static_cast<std::int32_t>(job_ranks), resolved, progress);
  if (!report.ok()) return report;
  report->modelled_ranks = run->modelled;
  report->connections_set = connections->set;
  report->connections_note = connections->note;
  if (resolved.search.memory_limit > 0) report->memory_limit.source = limit_source;
  report->frameworks = frameworks;
  nameShardedSettings(*report);
  const bool ddp_seen = std::any_of(report->frameworks.begin(), report->frameworks.end(),
                                    [](const DetectedFramework& f) { return f.name == "PyTorch DDP"; });
  if (!report->ddp.found && ddp_seen) {
    predictDdpCapsBySize(*report, *whatif,
                         ddpBucketsOfForwards(whatif->calls(), *model, whatif->firstIteration(), whatif->lastIteration()),
                         resolved.search.min_gain, progress);
    TuneReport& r = *report;
    if (!recommendsNothing(r)) {
      r.recommendations_note.clear();
    } else if (const SettingPrediction* best = fastestDdpValue(r.ddp_caps_by_size, r.ddp_first_buckets_by_size);
               r.ddp_by_size.found && best) {
      r.recommendations_note += fmt::format("; DDP's bucket_cap_mb and first bucket, predicted from the {} buckets of "
                                            "its steps, gain less than {:.0f}% at any value (the best, {}={}: {})",
                                            r.ddp_by_size.bucket_bytes.size(), 100.0 * resolved.search.min_gain,
                                            best->setting, best->value, percent(best->gain));
    } else {
      r.recommendations_note += fmt::format("; the trace shows PyTorch DDP, whose bucket_cap_mb cannot be predicted "
                                            "from it: {}",
                                            r.ddp_by_size.why_not);
    }
    if (r.ddp_bucket_view.size() == 2 && !r.ddp_bucket_view_recommended && recommendsNothing(r)) {
      r.recommendations_note += fmt::format("; DDP's gradient_as_bucket_view=True, its copies back dropped, gains {} "
                                            "(under {:.0f}%)",
                                            percent(r.ddp_bucket_view.back().gain), 100.0 * resolved.search.min_gain);
    }
  }
  return report;
}

Plan planFor(const TuneReport& r, const Candidate& c) {
  Plan p;
  p.source_run = r.run_dir;
  p.ranks = r.ranks;
  p.predicted_iterations = r.predicted_iterations;
  p.created_by = fmt::format("syncopate {}", trace::toolVersion());
  p.knobs = c.knobs;
  p.prediction.baseline_measured_ms = r.measured_ms;
  p.prediction.baseline_replay_ms = r.replay_ms;
  p.prediction.replay_error = r.replay_error;
  p.prediction.iteration_ms = ms(c.prediction.iteration_ns);
  p.prediction.speedup = r.replay_ms / ms(c.prediction.iteration_ns);
  p.prediction.ideal_ms = ms(r.bounds.ideal_ns);
  p.prediction.compute_ms = ms(r.bounds.compute_ns);
  p.prediction.communication_ms = ms(r.bounds.communication_ns);
  p.why = whyOf(r, c);
  p.compute_slowdown = r.interference.compute.slowdown;
  p.communication_slowdown = r.interference.communication.slowdown;
  p.interference_measured = r.interference.compute.measured && r.interference.communication.measured;
  p.groups = rulesFor(c.knobs, r.search.groups).groups;
  return p;
}

nlohmann::json tuneReportJson(const TuneReport& r) {
  using nlohmann::json;
  json j;
  j["run"] = r.run_dir;
  j["ranks"] = r.ranks;
  if (r.modelled_ranks) {
    j["modelled_ranks"] = {{"ranks", r.modelled_ranks->ranks},
                           {"of", r.modelled_ranks->of},
                           {"chosen_by", "least collective wait per iteration: the ranks the others wait for"}};
  }
  j["predicted_iterations"] = r.predicted_iterations;
  j["measured_iteration_ms"] = r.measured_ms;
  j["replay_iteration_ms"] = r.replay_ms;
  j["replay_error"] = r.replay_error;
  j["replay_per_iteration"] = replayPerIterationJson(r);
  j["confidence"] = r.confidence;
  j["confidence_reasons"] = r.confidence_reasons;
  j["assumptions"] = {{"collectives_without_buffers", r.assumptions.collectives_without_buffers},
                      {"p2p_without_arguments", r.assumptions.p2p_without_arguments},
                      {"blocking_calls_inferred", r.assumptions.blocking_calls_inferred},
                      {"stream_waits_inferred", r.assumptions.stream_waits_inferred},
                      {"stream_waits_unplaced", r.assumptions.stream_waits_unplaced}};
  j["compute_ms"] = ms(r.bounds.compute_ns);
  j["communication_ms"] = ms(r.bounds.communication_ns);
  j["ideal_iteration_ms"] = ms(r.bounds.ideal_ns);
  j["communication_share"] = r.measured_ms > 0 ? ms(r.bounds.communication_ns) / r.measured_ms : 0.0;
  j["interference"] = {
      {"compute_slowdown", r.interference.compute.slowdown},
      {"compute_measured", r.interference.compute.measured},
      {"communication_slowdown", r.interference.communication.slowdown},
      {"communication_measured", r.interference.communication.measured}};
  json fits = json::array();
  for (const CommFit& f : r.communication.fits) {
    fits.push_back({{"comm_id", fmt::format("{:016x}", static_cast<std::uint64_t>(f.comm_id))},
                    {"latency_us_per_step", f.latency_ns / 1e3},
                    {"bus_bandwidth_gbps", f.ns_per_byte > 0 ? 1.0 / f.ns_per_byte : 0.0},
                    {"latency_identified", f.latency_identified},
                    {"calls", f.samples},
                    {"fit_error", f.rms_relative_error}});
  }
  j["collective_fits"] = fits;
  j["launch_latency_us"] = r.launch_latency_ns / 1e3;
  json candidates = json::array();
  for (std::size_t i = 0; i < r.search.candidates.size(); ++i) {
    const Candidate& c = r.search.candidates[i];
    json row = {{"schedule", describe(c.knobs)},
                {"knobs", knobsJson(c.knobs)},
                {"changes_training_mathematics", c.knobs.delayed},
                {"recommended", static_cast<int>(i) == r.search.recommended}};
    row["fusion_buffer_bytes"] = c.fusion_buffer_bytes;
    if (c.prediction.ok) {
      row["predicted_iteration_ms"] = ms(c.prediction.iteration_ns);
      row["gain"] = c.gain;
    } else {
      row["error"] = c.prediction.error;
    }
    candidates.push_back(row);
  }
  j["candidates"] = candidates;
  j["memory_limit"] = {{"bytes", r.memory_limit.bytes},
                       {"source", r.memory_limit.source},
                       {"schedules_over_limit", r.search.over_memory_limit}};
  j["recommended"] = r.search.recommended;
  if (!r.search.note.empty()) j["note"] = r.search.note;
  json recommendations = json::array();
  if (r.plan && !r.plan->groups.empty()) {
    recommendations.push_back(
        {{"setting", "gradient synchronisation schedule (Syncopate's runtime)"},
         {"value", describe(r.plan->knobs)},
         {"how_to_apply", "syncopate run --plan PLAN -o DIR2 -- <the same command>, PLAN being plan_file"},
         {"predicted_iteration_ms", r.plan->prediction.iteration_ms},
         {"gain", r.search.candidates[static_cast<std::size_t>(r.search.recommended)].gain}});
  }
  auto settingJson = [](const SettingPrediction& s) {
    json out{{"setting", s.setting},           {"value", s.value},
             {"how_to_apply", s.how_to_apply}, {"predicted_iteration_ms", s.predicted_iteration_ms},
             {"gain", s.gain},                 {"buckets", s.buckets}};
    if (!s.with.empty()) out["with"] = s.with;
    return out;
  };
  auto settingsJson = [&](const std::vector<SettingPrediction>& values) {
    json out = json::array();
    for (const SettingPrediction& s : values) out.push_back(settingJson(s));
    return out;
  };
  if (r.setting) recommendations.push_back(settingJson(*r.setting));
  if (r.ddp_bucket_view_recommended) recommendations.push_back(settingJson(*r.ddp_bucket_view_recommended));
  if (r.max_ctas_setting) recommendations.push_back(settingJson(*r.max_ctas_setting));
  if (r.connections_setting) recommendations.push_back(settingJson(*r.connections_setting));
  for (const SettingPrediction& s : r.sharded_recommended) recommendations.push_back(settingJson(s));
  for (const SettingPrediction& s : r.fsdp_recommended) recommendations.push_back(settingJson(s));
  if (r.plan && !r.plan->channels.empty()) {
    recommendations.push_back(
        {{"setting", "nccl_channels"},
         {"value", channelRulesText(r.plan->channels)},
         {"how_to_apply", "syncopate run --plan PLAN (through NCCL's tuner plugin), or NCCL's example tuner plugin "
                          "with NCCL_TUNER_CONFIG_FILE=nccl_tuner_conf, the file beside the plan"},
         {"predicted_iteration_ms", r.channels.predicted_iteration_ms},
         {"gain", gainOver(r.replay_ms, r.channels.predicted_iteration_ms)}});
  }
  j["recommendations"] = recommendations;
  auto ruleJson = [](const ChannelRule& rule) {
    return json{{"collective", trace::toString(rule.collective)},
                {"min_bytes", rule.min_bytes},
                {"max_bytes", rule.max_bytes},
                {"channels", rule.channels}};
  };
  json channels = {{"searched", r.channels.searched},
                   {"recorded_channels", r.channels.recorded_channels},
                   {"per_channel_bandwidth_gbps", r.channels.per_channel_bytes_per_ns},
                   {"per_channel_source", r.channels.per_channel_source}};
  json fitted = json::array();
  for (const auto& [comm, fit] : r.channels.fitted) {
    json by_count = json::array();
    for (const auto& [count, bandwidth] : fit.bandwidth_by_count) {
      by_count.push_back({{"channels", count}, {"bus_bandwidth_gbps", bandwidth}});
    }
    fitted.push_back({{"comm_id", fmt::format("{:016x}", static_cast<std::uint64_t>(comm))},
                      {"per_channel_bandwidth_gbps", fit.per_channel_bytes_per_ns},
                      {"lower_bound_only", fit.bounded_only},
                      {"bandwidth_by_count", by_count}});
  }
  channels["fitted"] = fitted;
  if (r.channels.searched) {
    json rows = json::array();
    for (const ChannelCandidate& c : r.channels.candidates) {
      json row = ruleJson(c.rule);
      row["predicted_iteration_ms"] = c.predicted_iteration_ms;
      row["gain"] = c.gain;
      rows.push_back(std::move(row));
    }
    json chosen = json::array();
    for (const ChannelRule& rule : r.channels.chosen) chosen.push_back(ruleJson(rule));
    channels["schedule_ms"] = r.channels.schedule_ms;
    channels["candidates"] = rows;
    channels["chosen"] = chosen;
    channels["predicted_iteration_ms"] = r.channels.predicted_iteration_ms;
    channels["gain"] = r.channels.gain;
  } else {
    channels["why_not"] = r.channels.why_not;
  }
  j["channels"] = channels;
  json ddp = {{"found", r.ddp.found}};
  if (r.ddp.found || r.ddp_by_size.found) ddp["rule"] = kDdpRule;
  if (r.ddp.found) {
    ddp["buckets"] = r.ddp.bucket_bytes.size();
    ddp["bucket_bytes"] = r.ddp.bucket_bytes;
    ddp["gradients"] = r.ddp.gradient_sizes.size();
    ddp["gradient_bytes"] = r.ddp.gradient_bytes;
    ddp["bucket_caps"] = settingsJson(r.ddp_bucket_caps);
    ddp["first_buckets"] = settingsJson(r.ddp_first_buckets);
    if (!r.ddp_caps_not_predicted.empty()) ddp["not_predicted"] = r.ddp_caps_not_predicted;
  } else {
    ddp["why_not"] = r.ddp.why_not;
  }
  if (r.ddp_by_size.found) {
    ddp["from_bucket_sizes"] = {{"first_buckets", settingsJson(r.ddp_first_buckets_by_size)},
                                {"copies_back", r.ddp_by_size.copies_back},
                                {"buckets", r.ddp_by_size.bucket_bytes.size()},
                                {"bucket_bytes", r.ddp_by_size.bucket_bytes},
                                {"cap_bound_bytes", r.ddp_by_size.cap_bound},
                                {"recorded_buckets_rewritten_ms", r.ddp_by_size_baseline_ms},
                                {"bucket_caps", settingsJson(r.ddp_caps_by_size)},
                                {"assumptions", r.ddp_by_size_assumptions}};
    if (r.ddp.found) {
      json view = {{"values", settingsJson(r.ddp_bucket_view_by_size)}};
      if (!r.ddp_bucket_view_by_size_not_predicted.empty()) view["not_predicted"] = r.ddp_bucket_view_by_size_not_predicted;
      ddp["from_bucket_sizes"]["gradient_as_bucket_view"] = view;
    }
  } else if (!r.ddp_by_size.why_not.empty()) {
    ddp["from_bucket_sizes"] = {{"why_not", r.ddp_by_size.why_not}};
  }
  // From the reducer's copies in a recorded run, else from a trace's copies back.
  if (r.ddp.found || r.ddp_by_size.found) {
    json view = {{"values", settingsJson(r.ddp_bucket_view)}};
    if (!r.ddp_bucket_view.empty()) view["recorded"] = r.ddp_bucket_view.front().value == "True";
    if (!r.ddp_bucket_view_not_predicted.empty()) view["not_predicted"] = r.ddp_bucket_view_not_predicted;
    ddp["gradient_as_bucket_view"] = view;
  }
  const json max_ctas = settingsJson(r.nccl_max_ctas);
  json detected = json::array();
  for (const DetectedFramework& f : r.frameworks) {
    json settings = json::object();
    for (const FrameworkSetting& s : f.settings) settings[s.name] = s.value;
    json row = {{"name", f.name}, {"evidence", f.evidence}, {"settings", settings}};
    if (!f.bucket_bytes.empty()) row["bucket_bytes"] = f.bucket_bytes;
    detected.push_back(std::move(row));
  }
  json sharded = {{"found", r.sharded.found}};
  if (r.sharded.found) {
    sharded["reduce_scatters"] = r.sharded.reduce_scatters;
    sharded["gradient_bytes"] = r.sharded.gradient_bytes;
    sharded["all_gathers"] = r.sharded.all_gathers;
    sharded["parameter_bytes"] = r.sharded.parameter_bytes;
    sharded["reduce_scatters_issued"] = toString(r.sharded.reduce_placement);
    sharded["all_gathers_issued"] = toString(r.sharded.gather_placement);
    sharded["overlap_grad_reduce"] = settingsJson(r.overlap_grad_reduce);
    sharded["overlap_param_gather"] = settingsJson(r.overlap_param_gather);
    if (r.sharded_buckets_why_not.empty()) {
      sharded["bucket_size"] = {{"recorded_buckets_rewritten_ms", r.sharded_buckets_baseline_ms},
                                {"values", settingsJson(r.sharded_bucket_sizes)}};
      if (!r.sharded_buckets_not_predicted.empty()) {
        sharded["bucket_size"]["not_predicted"] = r.sharded_buckets_not_predicted;
      }
    } else {
      sharded["bucket_size"] = {{"why_not", r.sharded_buckets_why_not}};
    }
    if (!r.sharded_not_predicted.empty()) sharded["not_predicted"] = r.sharded_not_predicted;
    if (r.sharded_both_on_ms > 0) {
      sharded["both_on"] = {{"predicted_iteration_ms", r.sharded_both_on_ms},
                            {"gain", gainOver(r.replay_ms, r.sharded_both_on_ms)}};
    }
  } else {
    sharded["why_not"] = r.sharded.why_not;
  }
  json fsdp = {{"found", r.fsdp.found}};
  if (r.fsdp.found) {
    const FsdpSettings& recorded = r.fsdp.recorded;
    fsdp["forward_gathers"] = r.fsdp.forward_gathers;
    fsdp["backward_gathers"] = r.fsdp.backward_gathers;
    fsdp["reduce_scatters"] = r.fsdp.reduce_scatters;
    fsdp["parameter_bytes"] = r.fsdp.parameter_bytes;
    fsdp["recorded"] = {{"backward_prefetch", toString(recorded.backward_prefetch)},
                        {"forward_prefetch", recorded.forward_prefetch},
                        {"limit_all_gathers", recorded.limit_all_gathers}};
    fsdp["recorded_rewritten_ms"] = r.fsdp_rewritten_ms;
    fsdp["backward_prefetch"] = settingsJson(r.fsdp_backward_prefetch);
    fsdp["forward_prefetch"] = settingsJson(r.fsdp_forward_prefetch);
    fsdp["limit_all_gathers"] = settingsJson(r.fsdp_limit_all_gathers);
    if (!r.fsdp_not_predicted.empty()) fsdp["not_predicted"] = r.fsdp_not_predicted;
  } else {
    fsdp["why_not"] = r.fsdp.why_not;
  }
  json max_connections = {{"recorded", r.recorded_connections},
                           {"set", r.connections_set},
                           {"values", settingsJson(r.cuda_max_connections)}};
  if (!r.connections_note.empty()) max_connections["note"] = r.connections_note;
  if (!r.connections_assumption.empty()) max_connections["assumed"] = r.connections_assumption;
  j["framework"] = {{"detected", detected},
                    {"ddp", ddp},
                    {"sharded", sharded},
                    {"fsdp", fsdp},
                    {"nccl", {{"max_ctas", max_ctas}}},
                    {"cuda", {{"max_connections", max_connections}}}};
  if (!r.recommendations_note.empty()) j["recommendations_note"] = r.recommendations_note;
  if (r.plan) {
    json channel_rules = json::array();
    for (const ChannelRule& rule : r.plan->channels) channel_rules.push_back(ruleJson(rule));
    j["plan"] = {{"schedule", r.plan->groups.empty() ? "as the program issues it" : describe(r.plan->knobs)},
                 {"channels", channel_rules},
                 {"predicted_iteration_ms", r.plan->prediction.iteration_ms},
                 {"speedup", r.plan->prediction.speedup},
                 {"fusion_buffer_bytes",
                  r.search.recommended >= 0
                      ? r.search.candidates[static_cast<std::size_t>(r.search.recommended)].fusion_buffer_bytes
                      : 0},
                 {"why", r.plan->why}};
  }
  return j;
}

std::string tuneReportText(const TuneReport& r, std::size_t max_rows) {
  std::string t = fmt::format("run {}: {} ranks, iterations {}-{} modelled\n", r.run_dir, r.ranks,
                              r.predicted_iterations.empty() ? 0 : r.predicted_iterations.front(),
                              r.predicted_iterations.empty() ? 0 : r.predicted_iterations.back());
  if (r.modelled_ranks) {
    t += fmt::format("  modelled from the {} slowest of its {} ranks (the least collective wait): rank{} {}\n",
                     r.modelled_ranks->ranks.size(), r.modelled_ranks->of, r.modelled_ranks->ranks.size() == 1 ? "" : "s",
                     fmt::join(r.modelled_ranks->ranks, ", "));
  }
  t += fmt::format("  measured iteration     {:9.3f} ms\n", r.measured_ms);
  t += fmt::format("  replay (the model)     {:9.3f} ms   error {}\n", r.replay_ms, percent(r.replay_error));
  if (r.replay_error_per_iteration.size() > 1) {
    for (std::size_t i = 0; i < r.replay_error_per_iteration.size(); ++i) {
      t += fmt::format("    iteration {:<8}     {:9.3f} ms measured, {:9.3f} ms replayed, error {}\n",
                       r.predicted_iterations[i], r.measured_per_iteration_ms[i], r.replay_per_iteration_ms[i],
                       percent(r.replay_error_per_iteration[i]));
    }
  }
  t += fmt::format("  confidence: {}\n", r.confidence);
  for (const std::string& why : r.confidence_reasons) t += fmt::format("    - {}\n", why);
  t += fmt::format("  compute alone          {:9.3f} ms\n", ms(r.bounds.compute_ns));
  t += fmt::format("  communication alone    {:9.3f} ms   ({:.0f}% of the step)\n", ms(r.bounds.communication_ns),
                   r.measured_ms > 0 ? 100.0 * ms(r.bounds.communication_ns) / r.measured_ms : 0.0);
  t += fmt::format("  ideal bound            {:9.3f} ms   (both fully overlapped)\n", ms(r.bounds.ideal_ns));
  t += fmt::format("  interference: compute {}, communication {}\n", interferenceText(r.interference.compute),
                   interferenceText(r.interference.communication));
  for (const CommFit& f : r.communication.fits) {
    t += fmt::format("  collectives on communicator {:016x}: {:.2f} us per ring step{}, {} bus bandwidth "
                     "(fit error {:.1f}% over {} calls)\n",
                     static_cast<std::uint64_t>(f.comm_id), f.latency_ns / 1e3,
                     f.latency_identified ? "" : " (not identifiable: one shape of call)",
                     bandwidthText(f.ns_per_byte > 0 ? 1.0 / f.ns_per_byte : 0.0), 100.0 * f.rms_relative_error,
                     f.samples);
  }
  for (const DetectedFramework& f : r.frameworks) {
    t += fmt::format("  framework: {} ({})\n", f.name, f.evidence);
    for (const FrameworkSetting& s : f.settings) t += fmt::format("    {}: {}\n", s.name, s.value);
  }
  if (!r.model_buffers_known) {
    t += ddpBySizeText(r);
    if (r.setting) t += fmt::format("\nRecommended: {}\n", r.setting->how_to_apply);
    if (r.ddp_bucket_view_recommended) t += fmt::format("\nRecommended: {}\n", r.ddp_bucket_view_recommended->how_to_apply);
    if (recommendsNothing(r)) t += fmt::format("\nNo recommendation: {}.\n", r.recommendations_note);
    return t;
  }
  t += "\n   #  predicted ms     gain  schedule\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < r.search.candidates.size() && shown < max_rows; ++i) {
    const Candidate& c = r.search.candidates[i];
    if (!c.prediction.ok) continue;
    ++shown;
    t += fmt::format("  {:2}  {:12.3f}  {:>7}  {}{}\n", i + 1, ms(c.prediction.iteration_ns), percent(c.gain),
                     describe(c.knobs),
                     static_cast<int>(i) == r.search.recommended ? "   <- recommended"
                     : c.knobs.delayed                          ? "   (never recommended)"
                                                                : "");
  }
  t += fmt::format("  ({} schedules predicted", r.search.candidates.size());
  if (r.search.over_memory_limit > 0) {
    t += fmt::format("; {} left out, their fusion buffer over the memory limit of {}, {}", r.search.over_memory_limit,
                     bytesText(r.memory_limit.bytes), r.memory_limit.source);
  }
  t += ")\n\n";
  if (r.ddp.found) {
    t += fmt::format("DDP's reducer: {} buckets of {} gradients ({}) an iteration; bucket_cap_mb and the first "
                     "bucket predicted:\n",
                     r.ddp.bucket_bytes.size(), r.ddp.gradient_sizes.size(), bytesText(r.ddp.gradient_bytes));
    t += ddpRowsText(r.ddp_bucket_caps, r.ddp_first_buckets, r.setting);
    for (const std::string& why : r.ddp_caps_not_predicted) t += fmt::format("  not predicted: {}\n", why);
    if (r.setting) t += fmt::format("Set it: {}\n", r.setting->how_to_apply);
    t += ddpBucketViewText(r) + "\n";
    if (const std::string by_size = ddpBySizeText(r); !by_size.empty()) t += by_size + "\n";
  }
  if (r.sharded.found) {
    t += fmt::format("Sharded optimizer: {} gradient reduce-scatters ({}, {}), {} parameter all-gathers ({}, {}); "
                     "predicted:\n",
                     r.sharded.reduce_scatters, bytesText(r.sharded.gradient_bytes),
                     toString(r.sharded.reduce_placement), r.sharded.all_gathers, bytesText(r.sharded.parameter_bytes),
                     toString(r.sharded.gather_placement));
    const auto recommended = [&](const SettingPrediction& s) {
      return std::any_of(r.sharded_recommended.begin(), r.sharded_recommended.end(),
                         [&](const SettingPrediction& o) { return o.setting == s.setting && o.value == s.value && o.with == s.with; });
    };
    for (const auto* rows : {&r.overlap_grad_reduce, &r.overlap_param_gather}) {
      for (const SettingPrediction& s : *rows) {
        t += fmt::format("  {:<25} {:9.3f} ms  {:>7}{}\n", s.setting + "=" + s.value, s.predicted_iteration_ms,
                         percent(s.gain), recommended(s) ? "   <- recommended" : "");
      }
    }
    if (r.sharded_both_on_ms > 0) {
      t += fmt::format("  both on                   {:9.3f} ms  {:>7}\n", r.sharded_both_on_ms,
                       percent(gainOver(r.replay_ms, r.sharded_both_on_ms)));
    }
    for (const std::string& why : r.sharded_not_predicted) t += fmt::format("  not predicted: {}\n", why);
    if (!r.sharded_buckets_why_not.empty()) t += fmt::format("  bucket size not predicted: {}\n", r.sharded_buckets_why_not);
    for (const SettingPrediction& s : r.sharded_bucket_sizes) {
      t += fmt::format("  {:<25} {:3} buckets  {:9.3f} ms  {:>7}{}{}\n", s.setting + "=" + s.value, s.buckets,
                       s.predicted_iteration_ms, percent(s.gain), s.with.empty() ? "" : "   with " + s.with,
                       recommended(s) ? "   <- recommended" : "");
    }
    for (const std::string& why : r.sharded_buckets_not_predicted) t += fmt::format("  not predicted: {}\n", why);
    for (const SettingPrediction& s : r.sharded_recommended) t += fmt::format("Set {}: {}\n", s.setting, s.how_to_apply);
    t += "\n";
  }
  if (r.fsdp.found) {
    const FsdpSettings& recorded = r.fsdp.recorded;
    t += fmt::format("PyTorch FSDP: {} units gathered for forward and {} again for backward ({} a forward), {} "
                     "reduce-scatters; recorded backward_prefetch={}, forward_prefetch={}, limit_all_gathers={}; "
                     "predicted:\n",
                     r.fsdp.forward_gathers, r.fsdp.backward_gathers, bytesText(r.fsdp.parameter_bytes),
                     r.fsdp.reduce_scatters, toString(recorded.backward_prefetch), recorded.forward_prefetch ? "True" : "False",
                     recorded.limit_all_gathers ? "True" : "False");
    const auto recommended = [&](const SettingPrediction& s) {
      return std::any_of(r.fsdp_recommended.begin(), r.fsdp_recommended.end(),
                         [&](const SettingPrediction& o) { return o.setting == s.setting && o.value == s.value; });
    };
    for (const auto* rows : {&r.fsdp_backward_prefetch, &r.fsdp_forward_prefetch, &r.fsdp_limit_all_gathers}) {
      for (const SettingPrediction& s : *rows) {
        t += fmt::format("  {:<31} {:9.3f} ms  {:>7}{}\n", s.setting + "=" + s.value, s.predicted_iteration_ms,
                         percent(s.gain), recommended(s) ? "   <- recommended" : "");
      }
    }
    for (const std::string& why : r.fsdp_not_predicted) t += fmt::format("  not predicted: {}\n", why);
    for (const SettingPrediction& s : r.fsdp_recommended) t += fmt::format("Set {}: {}\n", s.setting, s.how_to_apply);
    t += "\n";
  }
  if (r.channels.searched) {
    t += fmt::format("NCCL channels (recorded on {}, {} a channel), on top of {}:\n", r.channels.recorded_channels,
                     bandwidthText(r.channels.per_channel_bytes_per_ns),
                     r.search.recommended >= 0 ? "the recommended schedule" : "the recorded schedule");
    for (const ChannelCandidate& c : r.channels.candidates) {
      t += fmt::format("  {:<14} {:>21}  on {:2} channels  {:9.3f} ms  {:>7}\n", trace::toString(c.rule.collective),
                       bytesText(c.rule.min_bytes) + "-" + bytesText(c.rule.max_bytes), c.rule.channels,
                       c.predicted_iteration_ms, percent(c.gain));
    }
    t += r.channels.chosen.empty() ? "  no count gains enough\n\n"
                                   : fmt::format("  chosen: {}\n\n", channelRulesText(r.channels.chosen));
    if (!r.nccl_max_ctas.empty()) {
      t += "NCCL_MAX_CTAS, on the recorded schedule:\n";
      for (const SettingPrediction& s : r.nccl_max_ctas) {
        t += fmt::format("  NCCL_MAX_CTAS={:<3} {:9.3f} ms  {:>7}{}\n", s.value, s.predicted_iteration_ms, percent(s.gain),
                         r.max_ctas_setting && r.max_ctas_setting->value == s.value ? "   <- recommended" : "");
      }
      t += "\n";
    }
  } else if (!r.channels.why_not.empty()) {
    t += fmt::format("NCCL channels not searched: {}.\n\n", r.channels.why_not);
  }
  if (!r.cuda_max_connections.empty()) {
    t += fmt::format("CUDA_DEVICE_MAX_CONNECTIONS ({} recorded), on the recorded schedule:\n", r.recorded_connections);
    for (const SettingPrediction& s : r.cuda_max_connections) {
      t += fmt::format("  CUDA_DEVICE_MAX_CONNECTIONS={:<3} {:9.3f} ms  {:>7}{}\n", s.value, s.predicted_iteration_ms,
                       percent(s.gain),
                       r.connections_setting && r.connections_setting->value == s.value ? "   <- recommended" : "");
    }
    if (r.connections_setting) t += fmt::format("  to apply: {}\n", r.connections_setting->how_to_apply);
    if (!r.connections_assumption.empty()) t += fmt::format("  assumed: {}\n", r.connections_assumption);
    t += "\n";
  }
  if (!r.connections_note.empty()) t += fmt::format("CUDA_DEVICE_MAX_CONNECTIONS: {}.\n\n", r.connections_note);
  if (r.plan) {
    const double gap = r.measured_ms - r.plan->prediction.ideal_ms;
    t += fmt::format("Recommended: {}{}.\n{}\n", r.plan->groups.empty() ? "the program's own schedule" : describe(r.plan->knobs),
                     r.plan->channels.empty() ? "" : ", NCCL channels " + channelRulesText(r.plan->channels), r.plan->why);
    if (gap > 0) {
      t += fmt::format("It would close {:.0f}% of the {:.1f} ms between the measured step and the ideal bound.\n",
                       100.0 * (r.measured_ms - r.plan->prediction.iteration_ms) / gap, gap);
    }
  } else {
    t += "No plan recommended: " + r.search.note + ".\n";
  }
  return t;
}

}  // namespace syncopate::tuner
