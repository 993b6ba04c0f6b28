#include "syncopate/tuner/framework_detect.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "syncopate/tuner/ddp_buckets_by_size.hpp"
#include "syncopate/tuner/knobs.hpp"

namespace syncopate::tuner {
namespace {

using analyzer::Index;

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool containsNoCase(std::string_view s, std::string_view word) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::search(s.begin(), s.end(), word.begin(), word.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != s.end();
}

// When an op was asked for: its launch call's start, else its own start.
std::int64_t launchedAt(const analyzer::RunModel& m, Index op) {
  const Index call = m.launchOf(op);
  return call != analyzer::kNone ? m.api_calls.start[call] : m.ops.start[op];
}

// One step's DDP buckets on rank row `r`: the all-reduces launched after the step's DDP forward
// ended and before the step's host range ended, in launch order. Empty when no step of the rank
// has a DDP forward followed by an all-reduce.
std::vector<std::uint64_t> ddpBuckets(const analyzer::RunModel& m, const analyzer::Analysis& a, Index r,
                                      const std::vector<Index>& forwards) {
  if (r >= a.iterations.per_rank.size()) return {};
  const analyzer::RankInfo& rank = m.ranks[r];
  std::vector<std::pair<std::int64_t, std::uint64_t>> all_reduces;  // (launched, bytes) of the rank
  for (Index c = 0; c < m.collectives.size(); ++c) {
    const Index op = m.collectives.op[c];
    if (op < rank.first_op || op >= rank.first_op + rank.op_count) continue;
    if (m.collectives.coll_type[c] != trace::CollType::AllReduce) continue;
    // A size the trace does not give (Kineto without record_param_comms' sizes) counts as 0.
    all_reduces.emplace_back(launchedAt(m, op), static_cast<std::uint64_t>(std::max<std::int64_t>(m.collectives.bytes[c], 0)));
  }
  std::sort(all_reduces.begin(), all_reduces.end());
  for (const analyzer::RankIteration& step : a.iterations.per_rank[r]) {
    for (Index f : forwards) {
      if (m.ranges.rank[f] != r || m.ranges.start[f] < step.host_start || m.ranges.start[f] >= step.host_end) continue;
      std::vector<std::uint64_t> buckets;
      for (const auto& [at, bytes] : all_reduces) {
        if (at >= m.ranges.end[f] && at < step.host_end) buckets.push_back(bytes);
      }
      if (!buckets.empty()) return buckets;
    }
  }
  return {};
}

DetectedFramework ddp(const analyzer::RunModel& m, const analyzer::Analysis& a, const std::vector<Index>& forwards) {
  DetectedFramework d;
  d.name = "PyTorch DDP";
  d.evidence = fmt::format("{} DistributedDataParallel.forward range{}", forwards.size(), forwards.size() == 1 ? "" : "s");
  for (Index r = 0; r < m.ranks.size() && d.bucket_bytes.empty(); ++r) d.bucket_bytes = ddpBuckets(m, a, r, forwards);
  if (d.bucket_bytes.empty()) {
    d.settings.push_back({"buckets per step", "none seen: no step launches an all-reduce after its DDP forward"});
    return d;
  }
  std::uint64_t total = 0;
  std::string sizes;
  for (std::uint64_t b : d.bucket_bytes) {
    total += b;
    sizes += (sizes.empty() ? "" : ", ") + bytesText(b);
  }
  const bool sized = std::find(d.bucket_bytes.begin(), d.bucket_bytes.end(), 0u) == d.bucket_bytes.end();
  if (!sized) {
    d.settings.push_back({"buckets per step", fmt::format("{} (their sizes are not in the trace)", d.bucket_bytes.size())});
    d.settings.push_back({"bucket_cap_mb", "not bounded by the run: the buckets' sizes are not in the trace"});
    return d;
  }
  d.settings.push_back({"buckets per step", fmt::format("{} ({} in all: {})", d.bucket_bytes.size(), bytesText(total), sizes)});
  if (d.bucket_bytes.size() >= 3) {
    const std::uint64_t least_full = *std::min_element(d.bucket_bytes.begin() + 1, d.bucket_bytes.end() - 1);
    d.settings.push_back({"bucket_cap_mb", fmt::format("at most {:.1f} (the smallest bucket between the first and the last; "
                                                       "DDP closes a bucket once it holds the cap)",
                                                       static_cast<double>(least_full) / (1 << 20))});
    d.settings.push_back(
        {"first bucket",
         ddpFirstBucketSetApart(d.bucket_bytes)
             ? fmt::format("{}, set apart (under half the others' cap): bucket_cap_mb unset, DDP's defaults, the first "
                           "bucket closed at torch.distributed._DEFAULT_FIRST_BUCKET_BYTES",
                           bytesText(d.bucket_bytes.front()))
             : fmt::format("{}, cut at the cap like the others: bucket_cap_mb given", bytesText(d.bucket_bytes.front()))});
  } else {
    d.settings.push_back({"bucket_cap_mb", "not bounded by the run: fewer than three buckets a step"});
  }
  return d;
}

}  // namespace

std::vector<DetectedFramework> detectFrameworks(const analyzer::RunModel& m, const analyzer::Analysis& a) {
  std::vector<Index> ddp_forwards;
  std::map<std::string, std::pair<std::size_t, std::string>> named;  // framework -> (ranges, an example)
  for (Index i = 0; i < m.ranges.size(); ++i) {
    const std::string_view name = m.str(m.ranges.name[i]);
    if (startsWith(name, "DistributedDataParallel.forward")) ddp_forwards.push_back(i);
    const char* framework = startsWith(name, "FullyShardedDataParallel") || startsWith(name, "FSDP::") ? "PyTorch FSDP"
                            : containsNoCase(name, "megatron")                                          ? "Megatron-LM"
                            : containsNoCase(name, "deepspeed")                                         ? "DeepSpeed"
                                                                                                        : nullptr;
    if (framework == nullptr) continue;
    auto& [count, example] = named[framework];
    if (count++ == 0) example = std::string(name);
  }
  std::vector<DetectedFramework> out;
  if (!ddp_forwards.empty()) out.push_back(ddp(m, a, ddp_forwards));
  for (const auto& [framework, seen] : named) {
    DetectedFramework d;
    d.name = framework;
    d.evidence = fmt::format("{} range{} named like \"{}\"", seen.first, seen.first == 1 ? "" : "s", seen.second);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace syncopate::tuner
