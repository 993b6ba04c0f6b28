#include "syncopate/tuner/ddp_buckets_by_size.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "comm_samples.hpp"
#include "syncopate/tuner/calls_writer.hpp"

namespace syncopate::tuner {

namespace {

using analyzer::Index;

// Events of the buckets rebucketDdpBySize() writes (never a real cudaEvent_t, nor the model's
// inferred ones, kInferredEventBit, nor rebucketDdp()'s).
constexpr std::uint64_t kBySizeEventBit = 1ull << 61;

bool isBucketReduce(const RecordedCall& rc) {
  return rc.call.kind == CallKind::Collective && rc.call.collective.type == trace::CollType::AllReduce;
}

bool isComputeLaunch(const RecordedCall& rc, StreamHandle comm_stream) {
  const CallKind k = rc.call.kind;
  return (k == CallKind::Kernel || k == CallKind::Memcpy || k == CallKind::Memset) && rc.call.stream != comm_stream;
}

// Whether every iteration of every rank has rank row 0's first buckets, and their sizes known.
void checkBuckets(const RecordedRun& run, DdpBucketsBySize& b) {
  for (std::size_t rr = 0; rr < b.ranks.size(); ++rr) {
    for (const DdpBucketCalls& it : b.ranks[rr]) {
      std::vector<std::uint64_t> sizes;
      for (std::size_t i : it.reduces) sizes.push_back(run.ranks[rr].calls[i].call.collective.send_bytes());
      if (b.bucket_bytes.empty() && rr == 0) b.bucket_bytes = sizes;
      if (std::find(sizes.begin(), sizes.end(), 0u) != sizes.end()) {
        b.why_not = "the buckets' sizes are not in the trace";
        return;
      }
      if (sizes != b.bucket_bytes) {
        b.why_not = fmt::format("rank {} iteration {} has other buckets than rank {} iteration {} ({} against {}): "
                                "DDP rebuilt them, or they are not DDP's",
                                run.ranks[rr].rank, it.iteration, run.ranks[0].rank, b.ranks[0].front().iteration,
                                sizes.size(), b.bucket_bytes.size());
        return;
      }
    }
  }
  b.cap_bound = ddpCapBound(b.bucket_bytes);
  b.first_apart = ddpFirstBucketSetApart(b.bucket_bytes);
  b.found = true;
}

// The bytes a copy moves: its destination's where its buffers were recorded, else its op's in
// the model (a trace's, which carries sizes but no addresses); 0 when neither says.
std::uint64_t copyBytes(const RecordedRank& rank, const RecordedCall& rc, const analyzer::RunModel* m) {
  if (rc.touch_count > 0) return rank.touches[rc.touch_begin].bytes;
  if (m == nullptr || rc.op == analyzer::kNone) return 0;
  return static_cast<std::uint64_t>(std::max<std::int64_t>(m->ops.bytes[rc.op], 0));
}

// In each iteration, the copies the buckets' thread launches first after the last bucket's
// all-reduce, as long as they add up to the buckets' bytes: DDP copying the averaged gradients
// back (gradient_as_bucket_view=False). Found only where every iteration of every rank has them.
void findCopiesBack(const RecordedRun& run, const analyzer::RunModel* m, DdpBucketsBySize& b) {
  if (!b.found) return;
  std::uint64_t bucket_total = 0;
  for (const std::uint64_t bytes : b.bucket_bytes) bucket_total += bytes;
  for (std::size_t rr = 0; rr < b.ranks.size(); ++rr) {
    const RecordedRank& rank = run.ranks[rr];
    for (DdpBucketCalls& it : b.ranks[rr]) {
      const RecordedCall& last = rank.calls[it.reduces.back()];
      std::uint64_t copied = 0;
      for (std::size_t i = it.reduces.back() + 1; i < rank.calls.size() && copied < bucket_total; ++i) {
        const RecordedCall& rc = rank.calls[i];
        if (rc.iteration != it.iteration) break;
        if (rc.thread != last.thread || rc.call.kind != CallKind::Memcpy) continue;
        const std::uint64_t bytes = copyBytes(rank, rc, m);
        if (bytes == 0) break;
        copied += bytes;
        it.copies_back.push_back(i);
      }
      if (copied != bucket_total) {
        b.copies_back_why_not = fmt::format(
            "rank {} iteration {}: the copies after the last bucket's all-reduce ({} of them, {} bytes) are not the "
            "buckets' {} bytes copied back (gradient_as_bucket_view=True, or the trace leaves them out)",
            rank.rank, it.iteration, it.copies_back.size(), copied, bucket_total);
        for (auto& iterations : b.ranks)
          for (DdpBucketCalls& each : iterations) each.copies_back.clear();
        return;
      }
    }
  }
  b.copies_back = true;
}

// A call written in place of the buckets' own, made by `thread` in `iteration`.
RecordedCall synthesized(CallKind kind, StreamHandle stream, std::uint64_t event, Index thread, std::int64_t iteration) {
  RecordedCall rc;
  rc.call.kind = kind;
  rc.call.stream = stream;
  rc.call.event = event;
  rc.thread = thread;
  rc.iteration = iteration;
  return rc;
}

// What one iteration of one rank becomes: the calls dropped, those written before a call, and
// those written in a call's place at its host time.
struct Rewrite {
  std::vector<bool> dropped;
  std::map<std::size_t, std::vector<RecordedCall>> before;  // each call's end: the host time it takes
  std::map<std::size_t, RecordedCall> in_place_of;
};

// The rank's calls with `w` applied. Host time moves with the calls: later calls later by a
// written call's host time, earlier by a dropped call's.
RecordedRank written(const RecordedRank& rank, const Rewrite& w) {
  CallsWriter r(rank);
  std::int64_t shift = 0;
  const auto writeBefore = [&](std::size_t i) {
    const auto before = w.before.find(i);
    if (before == w.before.end()) return;
    for (RecordedCall rc : before->second) {
      const std::int64_t host = rc.end;
      rc.start = rank.calls[i - 1].end + shift;
      rc.end = rc.start + host;
      shift += host;
      r.append(std::move(rc), false);
    }
  };
  for (std::size_t i = 0; i < rank.calls.size(); ++i) {
    writeBefore(i);
    if (w.dropped[i]) {
      shift -= rank.calls[i].end - rank.calls[i].start;
      continue;
    }
    if (auto replacing = w.in_place_of.find(i); replacing != w.in_place_of.end()) {
      RecordedCall rc = replacing->second;
      rc.start = rank.calls[i].start + shift;
      rc.end = rank.calls[i].end + shift;
      r.append(std::move(rc), false);
      continue;
    }
    RecordedCall rc = rank.calls[i];
    rc.start += shift;
    rc.end += shift;
    r.append(std::move(rc), true);
  }
  writeBefore(rank.calls.size());
  return r.finish();
}

// One recorded bucket's calls: its all-reduce, the stream waits placed for it just before (the
// event each waits for is recorded on the compute stream), and the host time they took.
struct RecordedBucket {
  std::size_t all_reduce = 0;
  std::vector<std::size_t> waits;
  std::int64_t host_ns = 0;
};

RecordedBucket recordedBucket(const RecordedRank& rank, std::size_t all_reduce, StreamHandle comm_stream) {
  RecordedBucket out;
  out.all_reduce = all_reduce;
  out.host_ns = rank.calls[all_reduce].end - rank.calls[all_reduce].start;
  for (std::size_t k = all_reduce; k-- > 0;) {
    const RecordedCall& rc = rank.calls[k];
    if (rc.call.kind == CallKind::EventRecord) continue;
    if (rc.call.kind != CallKind::StreamWait || rc.call.stream != comm_stream) break;
    out.waits.push_back(k);
    out.host_ns += rc.end - rc.start;
  }
  return out;
}

void rewriteIteration(const RecordedRank& rank, const DdpBucketCalls& it, const DdpBucketsBySize& recorded,
                      const std::optional<DdpBucketing>& bucketing, Rewrite& w) {
  const std::vector<std::size_t>& reduces = it.reduces;
  const RecordedCall& first = rank.calls[reduces.front()];
  const StreamHandle comm_stream = first.call.stream;
  // Backward's launches on the buckets' thread before the last bucket, in order.
  std::vector<std::size_t> launches;
  for (std::size_t i = 0; i < reduces.back(); ++i) {
    const RecordedCall& rc = rank.calls[i];
    if (rc.iteration == it.iteration && rc.thread == first.thread && isComputeLaunch(rc, comm_stream))
      launches.push_back(i);
  }
  if (launches.empty()) return;  // nothing to place new buckets after: the iteration stays as recorded
  // Per recorded bucket: its bytes, where it ends, how many launches came before it, its calls.
  std::vector<std::uint64_t> sizes, ends;
  std::vector<std::size_t> launched_before;
  std::vector<RecordedBucket> buckets;
  std::uint64_t total = 0;
  for (std::size_t i : reduces) {
    sizes.push_back(rank.calls[i].call.collective.send_bytes());
    total += sizes.back();
    ends.push_back(total);
    launched_before.push_back(static_cast<std::size_t>(std::lower_bound(launches.begin(), launches.end(), i) - launches.begin()));
    buckets.push_back(recordedBucket(rank, i, comm_stream));
  }
  const std::vector<std::uint64_t> written =
      bucketing ? ddpBucketsFor(sizes, recorded.cap_bound, recorded.first_apart, *bucketing) : sizes;
  const std::uint64_t elem = std::max<std::uint64_t>(1, trace::dataTypeSize(first.call.collective.dtype));
  std::vector<bool> in_place(reduces.size(), false);
  struct NewBucket {
    std::size_t before_call;
    StreamHandle ready_on;  // the stream of the launch that made its bytes
    RecordedCall all_reduce;
  };
  std::vector<NewBucket> new_buckets;
  std::uint64_t at = 0;
  std::size_t b = 0, after_launches = 0, after_call = 0;
  for (std::size_t j = 0; j < written.size(); ++j) {
    at += written[j];
    while (b + 1 < ends.size() && ends[b] < at) ++b;
    // Launches before the bucket is ready: along the recorded bucket it ends in, by its bytes.
    const std::uint64_t lo = b == 0 ? 0 : ends[b - 1];
    const std::size_t k0 = b == 0 ? 0 : launched_before[b - 1], k1 = launched_before[b];
    const double along = ends[b] > lo ? static_cast<double>(at - lo) / static_cast<double>(ends[b] - lo) : 1.0;
    const auto k = k0 + static_cast<std::size_t>(std::ceil(along * static_cast<double>(k1 - k0) - 1e-9));
    after_launches = std::max({after_launches, k, std::size_t{1}});
    RecordedCall all_reduce = synthesized(CallKind::Collective, comm_stream, 0, first.thread, it.iteration);
    all_reduce.call.collective = first.call.collective;
    all_reduce.call.collective.count = written[j] / elem;
    // Matched across ranks by the same number on each: apart from every recorded one.
    all_reduce.collective_seq = -(2 + it.iteration * 65536 + static_cast<std::int64_t>(j));  // -1 is none
    if (at == ends[b] && after_launches == launched_before[b]) {
      // It ends where recorded bucket b ends, after the same launch: written in that all-reduce's
      // place, at its host time, after its waits. So the recorded buckets rewritten (the
      // baseline) are the recorded calls at their recorded times, each all-reduce written as a
      // new one is (timed as new ones are).
      in_place[b] = true;
      w.in_place_of[buckets[b].all_reduce] = all_reduce;
      after_call = buckets[b].all_reduce + 1;
      continue;
    }
    // After the launch that made its bytes, and after the bucket before it.
    const std::size_t anchor = launches[std::min(after_launches, launches.size()) - 1];
    after_call = std::max(anchor + 1, after_call);
    new_buckets.push_back({after_call, rank.calls[anchor].call.stream, all_reduce});
  }
  // A recorded bucket no new one was written in place of is dropped with its waits, and the host
  // time they took is shared among the new buckets' all-reduces, to the nanosecond.
  std::int64_t dropped_host_ns = 0;
  for (std::size_t r = 0; r < buckets.size(); ++r) {
    if (in_place[r]) continue;
    w.dropped[buckets[r].all_reduce] = true;
    for (std::size_t k : buckets[r].waits) w.dropped[k] = true;
    dropped_host_ns += buckets[r].host_ns;
  }
  const auto shares = static_cast<std::int64_t>(new_buckets.size());
  for (std::int64_t n = 0; n < shares; ++n) {
    NewBucket& nb = new_buckets[static_cast<std::size_t>(n)];
    const std::uint64_t ready = kBySizeEventBit | static_cast<std::uint64_t>(n);
    auto& calls = w.before[nb.before_call];
    calls.push_back(synthesized(CallKind::EventRecord, nb.ready_on, ready, first.thread, it.iteration));
    calls.push_back(synthesized(CallKind::StreamWait, comm_stream, ready, first.thread, it.iteration));
    // Its host time; placed in time when written out.
    nb.all_reduce.end = dropped_host_ns * (n + 1) / shares - dropped_host_ns * n / shares;
    calls.push_back(nb.all_reduce);
  }
}

}  // namespace

// Every bucket but the first (which may have been capped apart) and the last (what was left)
// holds the cap or more, so the cap is at most the least of them; taken as that, down to whole
// MiB, as caps are set.
std::uint64_t ddpCapBound(const std::vector<std::uint64_t>& buckets) {
  if (buckets.size() < 3) return 0;
  const std::uint64_t least = *std::min_element(buckets.begin() + 1, buckets.end() - 1);
  return least >= (1u << 20) ? least >> 20 << 20 : least;
}

// DDP's first bucket set apart (the cap unset) closes at the first gradient past 1 MiB, mostly
// well short of the others; cut at the cap, it is about as large as they are.
bool ddpFirstBucketSetApart(const std::vector<std::uint64_t>& buckets) {
  const std::uint64_t bound = ddpCapBound(buckets);
  return bound == 0 || buckets.front() < bound / 2;
}

DdpBucketsBySize ddpBucketsOfForwards(const RecordedRun& run, const analyzer::RunModel& m, std::int64_t first,
                                      std::int64_t last) {
  DdpBucketsBySize out;
  if (run.ranks.empty() || first > last) {
    out.why_not = "the run has no modelled iteration";
    return out;
  }
  std::map<Index, std::vector<std::pair<std::int64_t, std::int64_t>>> forwards;  // rank row -> (start, end)
  for (Index i = 0; i < m.ranges.size(); ++i) {
    const std::string_view name = m.str(m.ranges.name[i]);
    if (name.substr(0, 31) == "DistributedDataParallel.forward") forwards[m.ranges.rank[i]].emplace_back(m.ranges.start[i], m.ranges.end[i]);
  }
  for (const RecordedRank& rank : run.ranks) {
    auto& f = forwards[rank.rank];
    std::sort(f.begin(), f.end());
    std::vector<DdpBucketCalls> iterations;
    for (std::int64_t n = first; n <= last; ++n) {
      // The iteration's calls span [begin, end) of the rank's; its forward starts among them.
      std::int64_t begin = std::numeric_limits<std::int64_t>::max(), end = std::numeric_limits<std::int64_t>::min();
      for (const RecordedCall& rc : rank.calls)
        if (rc.iteration == n) begin = std::min(begin, rc.start), end = std::max(end, rc.end);
      const auto fwd = std::find_if(f.begin(), f.end(), [&](const auto& r) { return r.first >= begin && r.first < end; });
      if (fwd == f.end()) {
        out.why_not = fmt::format("rank {} iteration {} has no DistributedDataParallel.forward range", rank.rank, n);
        return out;
      }
      DdpBucketCalls it;
      it.iteration = n;
      for (std::size_t i = 0; i < rank.calls.size(); ++i)
        if (rank.calls[i].iteration == n && isBucketReduce(rank.calls[i]) && rank.calls[i].start >= fwd->second) it.reduces.push_back(i);
      if (it.reduces.empty()) {
        out.why_not = fmt::format("rank {} iteration {} shows no all-reduce kernel after its DDP forward", rank.rank, n);
        return out;
      }
      iterations.push_back(std::move(it));
    }
    out.ranks.push_back(std::move(iterations));
  }
  checkBuckets(run, out);
  findCopiesBack(run, &m, out);
  return out;
}

DdpBucketsBySize ddpBucketsOfReducer(const RecordedRun& run, const DdpReducer& reducer) {
  DdpBucketsBySize out;
  if (!reducer.found) {
    out.why_not = reducer.why_not;
    return out;
  }
  for (const std::vector<DdpIteration>& iterations : reducer.ranks) {
    std::vector<DdpBucketCalls> rows;
    for (const DdpIteration& it : iterations) {
      DdpBucketCalls row;
      row.iteration = it.iteration;
      for (const DdpBucket& b : it.buckets) row.reduces.push_back(b.reduce);
      rows.push_back(std::move(row));
    }
    out.ranks.push_back(std::move(rows));
  }
  checkBuckets(run, out);
  findCopiesBack(run, nullptr, out);
  return out;
}

std::vector<std::uint64_t> ddpBucketsFor(const std::vector<std::uint64_t>& recorded, std::uint64_t cap_bound,
                                         bool first_apart, const DdpBucketing& bucketing) {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> ends;
  for (std::uint64_t s : recorded) ends.push_back(total += s);
  // The first place at or past `target` where a gradient can end: within a recorded bucket,
  // anywhere up to its limit past its start (the cap bound; for a first bucket set apart, DDP's
  // default first limit of 1 MiB), else only at its end.
  const auto closeAt = [&](std::uint64_t target) {
    for (std::size_t b = 0; b < ends.size(); ++b) {
      if (ends[b] < target) continue;
      const std::uint64_t start = b == 0 ? 0 : ends[b - 1];
      const std::uint64_t limit = b == 0 && first_apart ? kDdpFirstBucketBytes
                                  : cap_bound == 0        ? ends[b] - start
                                                          : cap_bound;
      return target < start + limit ? target : ends[b];
    }
    return total;
  };
  std::vector<std::uint64_t> out;
  for (std::uint64_t held = 0; held < total;) {
    const std::uint64_t limit = out.empty() ? bucketing.first_bytes : bucketing.cap_bytes;
    const std::uint64_t close = closeAt(held + std::max<std::uint64_t>(limit, 1));
    out.push_back(close - held);
    held = close;
  }
  return out;
}

RecordedRun rebucketDdpBySize(const RecordedRun& run, const DdpBucketsBySize& b,
                              const std::optional<DdpBucketing>& bucketing) {
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  for (std::size_t rr = 0; rr < run.ranks.size(); ++rr) {
    const RecordedRank& rank = run.ranks[rr];
    Rewrite w;
    w.dropped.assign(rank.calls.size(), false);
    for (const DdpBucketCalls& it : b.ranks[rr]) rewriteIteration(rank, it, b, bucketing, w);
    out.ranks.push_back(written(rank, w));
  }
  return out;
}

RecordedRun dropDdpCopiesBack(const RecordedRun& run, const DdpBucketsBySize& b) {
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  for (std::size_t rr = 0; rr < run.ranks.size(); ++rr) {
    Rewrite w;
    w.dropped.assign(run.ranks[rr].calls.size(), false);
    for (const DdpBucketCalls& it : b.ranks[rr])
      for (std::size_t i : it.copies_back) w.dropped[i] = true;
    out.ranks.push_back(written(run.ranks[rr], w));
  }
  return out;
}

std::vector<CommFit> ddpBucketFits(const WhatIfModel& model, const DdpBucketsBySize& b) {
  CommSamples samples;
  for (std::size_t rr = 0; rr < b.ranks.size(); ++rr) {
    for (const DdpBucketCalls& it : b.ranks[rr]) {
      for (std::size_t i : it.reduces) {
        const RecordedCall& rc = model.calls().ranks[rr].calls[i];
        const CollectiveArgs& a = rc.call.collective;
        const auto comm = static_cast<std::int64_t>(a.comm);
        if (rc.op == analyzer::kNone || model.communication().find(comm) != nullptr) continue;
        addCommSample(samples, comm, a.type, static_cast<std::int64_t>(a.count), a.dtype, a.comm_size,
                      model.standaloneNs(rc.op));
      }
    }
  }
  return fitEachCommunicator(samples);
}

}  // namespace syncopate::tuner
