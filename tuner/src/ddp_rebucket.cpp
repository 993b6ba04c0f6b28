#include "syncopate/tuner/ddp_rebucket.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "syncopate/tuner/calls_writer.hpp"

namespace syncopate::tuner {

namespace {

// Events of the buckets rebucketDdp() writes (never a real cudaEvent_t, nor the model's
// inferred ones, kInferredEventBit).
constexpr std::uint64_t kDdpEventBit = 1ull << 62;

struct RankShape {
  std::vector<DdpIteration> iterations;
  std::string why_not;
};

// The nearest call before (step -1) or after (step +1) call i made by the same host thread.
std::size_t sameThread(const RecordedRank& rank, std::size_t i, int step) {
  const analyzer::Index thread = rank.calls[i].thread;
  for (std::size_t k = i;;) {
    if (step < 0 && k == 0) return kNoCall;
    k = step < 0 ? k - 1 : k + 1;
    if (k >= rank.calls.size()) return kNoCall;
    if (rank.calls[k].thread == thread) return k;
  }
}

// A bucket's all-reduce: in place, on a stream C that waited for an event the same thread had
// just recorded on another stream, followed by an event recorded on C.
std::optional<DdpBucket> bucketAt(const RecordedRank& rank, std::size_t i) {
  const Call& c = rank.calls[i].call;
  if (c.kind != CallKind::Collective || c.collective.type != trace::CollType::AllReduce) return std::nullopt;
  if (c.collective.send == 0 || c.collective.send != c.collective.recv) return std::nullopt;
  DdpBucket b;
  b.reduce = i;
  b.wait = sameThread(rank, i, -1);
  if (b.wait == kNoCall) return std::nullopt;
  const Call& wait = rank.calls[b.wait].call;
  if (wait.kind != CallKind::StreamWait || wait.stream != c.stream) return std::nullopt;
  b.ready = sameThread(rank, b.wait, -1);
  if (b.ready == kNoCall) return std::nullopt;
  const Call& ready = rank.calls[b.ready].call;
  if (ready.kind != CallKind::EventRecord || ready.event != wait.event || ready.stream == c.stream) return std::nullopt;
  b.done = sameThread(rank, i, +1);
  if (b.done == kNoCall) return std::nullopt;
  const Call& done = rank.calls[b.done].call;
  if (done.kind != CallKind::EventRecord || done.stream != c.stream) return std::nullopt;
  b.done_event = done.event;
  b.lo = c.collective.send;
  b.hi = b.lo + c.collective.send_bytes();
  return b;
}

const Touch* touchOf(const RecordedRank& rank, std::size_t i, std::uint32_t k) {
  const RecordedCall& rc = rank.calls[i];
  return rc.touch_count > k ? &rank.touches[rc.touch_begin + k] : nullptr;
}

// Gradients put in their buckets by kernels (DDP without a communication hook divides each into
// its slot, at::mul_out, or with gradient_as_bucket_view in place, div_ on the slot backward
// wrote): the slots are the addresses those kernels were given in each bucket, in address
// order, each gradient up to the next (the bucket's last to its end), in once the last kernel
// given its slot is issued. False where a bucket's first byte was given to no kernel.
bool gradientsFromKernels(DdpIteration& shape, const std::map<std::uint64_t, std::size_t>& written_by) {
  for (std::size_t k = 0; k < shape.buckets.size(); ++k) {
    const DdpBucket& b = shape.buckets[k];
    auto slot = written_by.lower_bound(b.lo);
    if (slot == written_by.end() || slot->first != b.lo) return false;
    for (; slot != written_by.end() && slot->first < b.hi; ++slot) {
      const auto next = std::next(slot);
      const std::uint64_t end = next != written_by.end() && next->first < b.hi ? next->first : b.hi;
      shape.gradients.push_back({slot->second, kNoCall, k, end - slot->first, false});
    }
  }
  return true;
}

// A copy on the compute stream out of a bucket after its all-reduce: a gradient's way back.
struct CopyOut {
  std::size_t call = kNoCall;
  std::uint64_t address = 0, bytes = 0;
};

// The reducer's shape in iteration n of a rank, or why it is not there.
std::optional<DdpIteration> shapeOf(const RecordedRank& rank, std::int64_t n, std::string& why_not) {
  DdpIteration shape;
  shape.iteration = n;
  std::vector<std::size_t> calls;
  for (std::size_t i = 0; i < rank.calls.size(); ++i)
    if (rank.calls[i].iteration == n) calls.push_back(i);
  for (std::size_t i : calls)
    if (auto b = bucketAt(rank, i)) shape.buckets.push_back(*b);
  if (shape.buckets.empty()) {
    why_not = fmt::format("iteration {} issues no all-reduce the way DDP's reducer does (in place, on a stream that "
                          "waits for an event recorded just before on the compute stream)",
                          n);
    return std::nullopt;
  }
  const StreamHandle compute = rank.calls[shape.buckets.front().ready].call.stream;
  const StreamHandle comm = rank.calls[shape.buckets.front().reduce].call.stream;
  for (const DdpBucket& b : shape.buckets) {
    if (rank.calls[b.ready].call.stream != compute || rank.calls[b.reduce].call.stream != comm) {
      why_not = fmt::format("iteration {}'s bucket all-reduces use more than one pair of streams", n);
      return std::nullopt;
    }
  }
  auto bucketHolding = [&](std::uint64_t address) -> DdpBucket* {
    for (DdpBucket& b : shape.buckets)
      if (address >= b.lo && address < b.hi) return &b;
    return nullptr;
  };
  // On the compute stream: copies into a bucket before its all-reduce (DDP with a communication
  // hook copies its gradients in), the kernels given an address in a bucket before its
  // all-reduce (without a hook DDP divides them in), copies out of a bucket after its done event,
  // and the wait for each bucket after backward.
  std::map<std::uint64_t, std::size_t> copied_to;   // address in a bucket -> its gradient
  std::map<std::uint64_t, std::size_t> written_by;  // address in a bucket -> the last kernel given it
  std::vector<CopyOut> copies_out;
  std::vector<std::uint64_t> filled(shape.buckets.size(), 0);
  for (std::size_t i : calls) {
    const Call& c = rank.calls[i].call;
    if (c.stream != compute) continue;
    if (c.kind == CallKind::StreamWait) {
      for (DdpBucket& b : shape.buckets) {
        if (c.event == b.done_event && i > b.reduce && b.final_wait == kNoCall) {
          b.final_wait = i;
          shape.first_final_wait = std::min(shape.first_final_wait, i);
        }
      }
    } else if (c.kind == CallKind::Kernel) {
      for (std::uint32_t k = 0; k < rank.calls[i].touch_count; ++k) {
        const std::uint64_t address = rank.touches[rank.calls[i].touch_begin + k].address;
        if (const DdpBucket* b = bucketHolding(address); b != nullptr && i < b->reduce) written_by[address] = i;
      }
    } else if (const Touch *dst = touchOf(rank, i, 0), *src = touchOf(rank, i, 1);
               c.kind == CallKind::Memcpy && dst != nullptr && src != nullptr) {
      if (DdpBucket* b = bucketHolding(dst->address); b != nullptr && i < b->reduce) {
        if (dst->address + dst->bytes > b->hi || !copied_to.emplace(dst->address, shape.gradients.size()).second) {
          why_not = fmt::format("iteration {}: a copy into a bucket overruns it or writes a slot twice", n);
          return std::nullopt;
        }
        const auto bucket = static_cast<std::size_t>(b - shape.buckets.data());
        filled[bucket] += dst->bytes;
        shape.gradients.push_back({i, kNoCall, bucket, dst->bytes, true});
      } else if (const DdpBucket* from = bucketHolding(src->address); from != nullptr && i > from->done) {
        copies_out.push_back({i, src->address, src->bytes});
      }
    }
  }
  for (std::size_t k = 0; k < shape.buckets.size(); ++k) {
    if (shape.buckets[k].final_wait == kNoCall) {
      why_not = fmt::format("iteration {}: the compute stream never waits for bucket {}'s all-reduce after backward", n, k);
      return std::nullopt;
    }
  }
  // DDP assigns gradients to buckets in its parameters' order (reversed), which is also their
  // order within the buckets: the buffers' layout, not the order backward readied them in.
  std::map<std::uint64_t, std::size_t> gradient_at;  // a gradient's address -> its index in layout order
  if (!copied_to.empty()) {
    std::vector<DdpGradient> in_layout;
    for (const auto& slot : copied_to) in_layout.push_back(shape.gradients[slot.second]);
    std::stable_sort(in_layout.begin(), in_layout.end(),
                     [](const DdpGradient& a, const DdpGradient& b) { return a.bucket < b.bucket; });
    shape.gradients = std::move(in_layout);
    for (std::size_t k = 0; k < shape.buckets.size(); ++k) {
      if (filled[k] != shape.buckets[k].hi - shape.buckets[k].lo) {
        why_not = fmt::format("iteration {}: bucket {} is not filled exactly by the copies into it", n, k);
        return std::nullopt;
      }
    }
  } else if (!gradientsFromKernels(shape, written_by)) {
    why_not = fmt::format("iteration {}: a bucket is neither filled by copies of gradients nor written from its start "
                          "by a kernel before its all-reduce",
                          n);
    return std::nullopt;
  }
  std::uint64_t at_bucket_start = 0;
  for (std::size_t g = 0; g < shape.gradients.size(); ++g) {
    const DdpBucket& b = shape.buckets[shape.gradients[g].bucket];
    if (g == 0 || shape.gradients[g].bucket != shape.gradients[g - 1].bucket) at_bucket_start = b.lo;
    gradient_at[at_bucket_start] = g;
    at_bucket_start += shape.gradients[g].bytes;
  }
  // Each gradient copied back out whole once (gradient_as_bucket_view=False), or none is
  // (True: the gradients are the buckets' views).
  for (const CopyOut& out : copies_out) {
    auto g = gradient_at.find(out.address);
    if (g == gradient_at.end() || shape.gradients[g->second].copy_out != kNoCall ||
        shape.gradients[g->second].bytes != out.bytes) {
      why_not = fmt::format("iteration {}: a copy out of a bucket is not one gradient's", n);
      return std::nullopt;
    }
    shape.gradients[g->second].copy_out = out.call;
  }
  if (!copies_out.empty() && copies_out.size() != shape.gradients.size()) {
    why_not = fmt::format("iteration {}: {} of the {} gradients are copied back out of their buckets", n,
                          copies_out.size(), shape.gradients.size());
    return std::nullopt;
  }
  return shape;
}

RankShape rankShape(const RecordedRank& rank, std::int64_t first, std::int64_t last) {
  RankShape out;
  for (std::int64_t n = first; n <= last; ++n) {
    auto shape = shapeOf(rank, n, out.why_not);
    if (!shape) {
      out.iterations.clear();
      return out;
    }
    out.iterations.push_back(std::move(*shape));
  }
  return out;
}

}  // namespace

std::vector<std::size_t> ddpBucketOf(const std::vector<std::uint64_t>& gradient_bytes, const DdpBucketing& bucketing) {
  std::vector<std::size_t> bucket_of;
  std::size_t bucket = 0;
  std::uint64_t held = 0;
  for (const std::uint64_t bytes : gradient_bytes) {
    bucket_of.push_back(bucket);
    held += bytes;
    if (held >= (bucket == 0 ? bucketing.first_bytes : bucketing.cap_bytes)) {
      ++bucket;
      held = 0;
    }
  }
  return bucket_of;
}

DdpReducer findDdpReducer(const RecordedRun& run, std::int64_t first, std::int64_t last) {
  DdpReducer out;
  if (!run.buffersKnown()) {
    out.why_not = "the run carries no buffer addresses (an imported trace), so where its gradients go into the buckets cannot be told";
    return out;
  }
  if (run.ranks.empty() || first > last) {
    out.why_not = "the run has no modelled iteration";
    return out;
  }
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    RankShape shape = rankShape(run.ranks[r], first, last);
    if (shape.iterations.empty()) {
      out.why_not = fmt::format("rank {}: {}", run.ranks[r].rank, shape.why_not);
      return out;
    }
    for (const DdpIteration& it : shape.iterations) {
      const bool views = it.gradients.front().copy_out == kNoCall;
      if (r == 0 && it.iteration == first) out.gradient_as_bucket_view = views;
      if (views != out.gradient_as_bucket_view) {
        out.why_not = fmt::format("rank {}: iteration {} {} its gradients where rank {}'s iteration {} {}",
                                  run.ranks[r].rank, it.iteration, views ? "copies none of" : "copies", run.ranks[0].rank,
                                  first, views ? "copies them" : "copies none (gradient_as_bucket_view=True)");
        return out;
      }
    }
    if (r == 0) {
      const DdpIteration& it = shape.iterations.front();
      for (const DdpBucket& b : it.buckets) out.bucket_bytes.push_back(b.hi - b.lo);
      for (const DdpGradient& g : it.gradients) {
        out.gradient_bytes += g.bytes;
        out.gradient_sizes.push_back(g.bytes);
      }
    }
    out.ranks.push_back(std::move(shape.iterations));
  }
  out.found = true;
  return out;
}

RecordedRun rebucketDdp(const RecordedRun& run, const DdpReducer& reducer, const std::optional<DdpBucketing>& bucketing,
                        bool gradient_as_bucket_view) {
  if (reducer.gradient_as_bucket_view && !gradient_as_bucket_view) {
    throw std::invalid_argument("a run recorded with gradient_as_bucket_view=True made no gradient copies to time");
  }
  const bool drop_copies = gradient_as_bucket_view && !reducer.gradient_as_bucket_view;
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  for (std::size_t rr = 0; rr < run.ranks.size(); ++rr) {
    const RecordedRank& rank = run.ranks[rr];
    // Per call: what to drop, what to write before it and after it.
    CallEdits edits(rank.calls.size());
    for (const DdpIteration& it : reducer.ranks[rr]) {
      const DdpBucket& model = it.buckets.front();
      const RecordedCall& reduce = rank.calls[model.reduce];
      const StreamHandle compute = rank.calls[model.ready].call.stream;
      const StreamHandle comm = reduce.call.stream;
      for (const DdpBucket& b : it.buckets)
        for (std::size_t i : {b.ready, b.wait, b.reduce, b.done, b.final_wait}) edits.dropped[i] = true;
      std::vector<std::uint64_t> sizes;
      std::vector<std::size_t> bucket_of;
      for (const DdpGradient& g : it.gradients) {
        sizes.push_back(g.bytes);
        bucket_of.push_back(g.bucket);
        if (drop_copies && g.copied_in) edits.dropped[g.in] = true;
        if (drop_copies) edits.dropped[g.copy_out] = true;
      }
      if (bucketing) bucket_of = ddpBucketOf(sizes, *bucketing);
      const std::size_t buckets = bucket_of.empty() ? 0 : bucket_of.back() + 1;
      std::vector<std::size_t> last_in(buckets, 0), first_out(buckets, kNoCall);
      std::vector<std::uint64_t> bytes(buckets, 0);
      for (std::size_t g = 0; g < it.gradients.size(); ++g) {
        const std::size_t j = bucket_of[g];
        last_in[j] = std::max(last_in[j], it.gradients[g].in);
        // With views, every bucket is waited for where the recorded waits began.
        first_out[j] = gradient_as_bucket_view ? it.first_final_wait : std::min(first_out[j], it.gradients[g].copy_out);
        bytes[j] += it.gradients[g].bytes;
      }
      // The reducer launches its buckets in order: one whose gradients are in before an earlier
      // bucket's waits for that one's launch.
      for (std::size_t j = 1; j < buckets; ++j) last_in[j] = std::max(last_in[j], last_in[j - 1]);
      const std::uint64_t elem = std::max<std::uint64_t>(1, trace::dataTypeSize(reduce.call.collective.dtype));
      for (std::size_t j = 0; j < buckets; ++j) {
        const std::uint64_t ready = kDdpEventBit | (2 * j), done = kDdpEventBit | (2 * j + 1);
        const RecordedCall& anchor = rank.calls[last_in[j]];
        auto& calls = edits.after[last_in[j]];
        calls.push_back({writtenAt(anchor, true, CallKind::EventRecord, compute, ready)});
        calls.push_back({writtenAt(anchor, true, CallKind::StreamWait, comm, ready)});
        RecordedCall all_reduce = writtenAt(anchor, true, CallKind::Collective, comm, 0);
        all_reduce.call.collective = reduce.call.collective;
        all_reduce.call.collective.count = bytes[j] / elem;
        // Matched across ranks by the same number on each: apart from every recorded one.
        all_reduce.collective_seq = -(2 + it.iteration * 65536 + static_cast<std::int64_t>(j));  // -1 is none
        calls.push_back({all_reduce});
        calls.push_back({writtenAt(anchor, true, CallKind::EventRecord, comm, done)});
        edits.before[first_out[j]].push_back(
            {writtenAt(rank.calls[first_out[j]], false, CallKind::StreamWait, compute, done)});
      }
    }
    out.ranks.push_back(edits.applyTo(rank));
  }
  return out;
}

}  // namespace syncopate::tuner
