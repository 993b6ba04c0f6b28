#include "syncopate/tuner/sharded_buckets.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "syncopate/tuner/calls_writer.hpp"
#include "syncopate/tuner/search.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::uint64_t kBucketEventBit = 1ull << 59;  // apart from the application's and the other rewrites'
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// A step's new collectives are numbered apart below (newSeq): reduce-scatters from 0, all-gathers
// from kMaxBuckets.
constexpr std::size_t kMaxBuckets = 32768;

bool pointsIntoMemory(const Call& c) {
  return (c.kind == CallKind::Kernel || c.kind == CallKind::Memcpy || c.kind == CallKind::Memset) && !c.unknown_pointers;
}

// Calls `visit(call, address)` for every place a call of step `n` among calls [begin, end) points
// at in memory (kernels' pointer arguments, copies' and fills' buffers).
template <class Visit>
void forEachPointer(const RecordedRank& rank, std::int64_t n, std::size_t begin, std::size_t end, Visit&& visit) {
  for (std::size_t i = begin; i < end; ++i) {
    if (rank.calls[i].iteration != n) continue;
    const Call c = rank.call(i);
    if (!pointsIntoMemory(c)) continue;
    for (const Touch& t : c.touches) visit(i, t.address);
  }
}

// Where the k-th tensor of bucket `b` ends, as an offset in it: where the next begins, the last
// at the bucket's end.
std::uint64_t tensorEnd(const FlatBucketLayout& b, std::size_t k) {
  return k + 1 < b.tensor_offsets.size() ? b.tensor_offsets[k + 1] : b.bytes;
}

// One rank's tensors in layout order, across its buckets, for lookups by address.
struct Tensors {
  struct Tensor {
    std::uint64_t start = 0, end = 0;
    std::size_t bucket = 0;  // the recorded bucket, in layout order
  };
  std::vector<Tensor> by_layout;
  std::vector<std::size_t> by_address;  // indices into by_layout, by start

  explicit Tensors(const std::vector<FlatBucketLayout>& buckets) {
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      for (std::size_t k = 0; k < buckets[b].tensor_offsets.size(); ++k) {
        by_layout.push_back(
            {buckets[b].base + buckets[b].tensor_offsets[k], buckets[b].base + tensorEnd(buckets[b], k), b});
      }
    }
    by_address.resize(by_layout.size());
    for (std::size_t t = 0; t < by_address.size(); ++t) by_address[t] = t;
    std::sort(by_address.begin(), by_address.end(),
              [&](std::size_t a, std::size_t b) { return by_layout[a].start < by_layout[b].start; });
  }

  // The tensor holding `address`, or kNone.
  std::size_t holding(std::uint64_t address) const {
    auto it = std::upper_bound(by_address.begin(), by_address.end(), address,
                               [&](std::uint64_t a, std::size_t t) { return a < by_layout[t].start; });
    if (it == by_address.begin()) return kNone;
    const std::size_t t = *--it;
    return address < by_layout[t].end ? t : kNone;
  }
};

// The recorded buckets' places, and the places calls point at inside them.
struct BucketStarts {
  std::vector<FlatBucketLayout> buckets;
  std::vector<std::set<std::uint64_t>> offsets;
  std::vector<std::size_t> first_touch;  // the first call pointing into each

  std::map<std::uint64_t, std::size_t> by_base;

  void add(std::uint64_t base, std::uint64_t bytes) {
    by_base.emplace(base, buckets.size());
    buckets.push_back({base, bytes, {}});
    offsets.emplace_back();
    first_touch.push_back(kNone);
  }
  // The bucket holding `address`, or kNone.
  std::size_t holding(std::uint64_t address) const {
    auto it = by_base.upper_bound(address);
    if (it == by_base.begin()) return kNone;
    const std::size_t b = (--it)->second;
    return address < buckets[b].base + buckets[b].bytes ? b : kNone;
  }
  void touch(std::size_t call, std::size_t b, std::uint64_t address) {
    offsets[b].insert(address - buckets[b].base);
    first_touch[b] = std::min(first_touch[b], call);
  }
};

// One rank's buckets in layout order, and each kind's element size.
struct RankLayout {
  std::vector<FlatBucketLayout> gradients, parameters;
  std::uint64_t gradient_element_bytes = 1, parameter_element_bytes = 1;
};

// The size of the data type of the first of `collectives`; 1 when there is none.
std::uint64_t elementBytes(const RecordedRank& rank, const std::vector<std::size_t>& collectives) {
  return collectives.empty() ? 1
                             : std::max<std::uint64_t>(1, trace::dataTypeSize(rank.calls[collectives.front()].call.collective.dtype));
}

// The all-gathers that hold a step's parameter buckets: those after its last reduce-scatter, or,
// where there are none, those before its first (the last step's parameters gathered in this
// step's forward, as Megatron-LM's own --overlap-param-gather issues them from forward's
// pre-hooks). Nullptr, with why, for a step that gathers both ways or between its reduce-scatters.
const std::vector<std::size_t>* bucketGathers(const RecordedRank& rank, std::int64_t n, const OptimizerCollectives& step,
                                              std::string& why) {
  if (step.gathers_between > 0 || (!step.leading_gathers.empty() && !step.gathers.empty())) {
    why = fmt::format("rank {}'s step {} gathers parameters between its reduce-scatters (fully sharded), or both in its "
                      "forward and after its step, and those gathers' buckets are not rewritten",
                      rank.rank, n);
    return nullptr;
  }
  return step.gathers.empty() ? &step.leading_gathers : &step.gathers;
}

// The layout one rank's step `n` shows, or why not.
trace::Result<RankLayout> rankLayout(const RecordedRank& rank, std::int64_t n, const ShardedOptimizerRun& optimizer) {
  const OptimizerCollectives step = optimizerCollectives(rank, n, optimizer.comm);
  if (step.reduces.empty()) {
    return trace::failure(fmt::format("rank {}'s step {} issues no reduce-scatter on the optimizer's communicator",
                                      rank.rank, n));
  }
  std::string why;
  const std::vector<std::size_t>* gathers = bucketGathers(rank, n, step, why);
  if (gathers == nullptr) return trace::failure(why);
  if (step.reduces.size() >= kMaxBuckets || gathers->size() >= kMaxBuckets) {
    return trace::failure(fmt::format("rank {}'s step {} has {} buckets or more", rank.rank, n, kMaxBuckets));
  }
  BucketStarts grads, params;
  for (std::size_t i : step.reduces) {
    const CollectiveArgs& a = rank.calls[i].call.collective;
    grads.add(a.send, a.send_bytes());
  }
  for (std::size_t i : *gathers) {
    const CollectiveArgs& a = rank.calls[i].call.collective;
    params.add(a.recv, a.recv_bytes());
  }
  // Backward writes a bucket's gradients before its reduce-scatter; forward and backward read
  // the parameters before the last one (the step and the gathers come after it).
  forEachPointer(rank, n, stepCalls(rank, n).first, step.reduces.back(), [&](std::size_t i, std::uint64_t address) {
    if (const std::size_t b = grads.holding(address); b != kNone && i < step.reduces[b]) grads.touch(i, b, address);
    if (const std::size_t b = params.holding(address); b != kNone) params.touch(i, b, address);
  });
  const auto finish = [&](BucketStarts& s, const char* what) -> trace::Result<std::vector<FlatBucketLayout>> {
    for (std::size_t b = 0; b < s.buckets.size(); ++b) {
      if (s.offsets[b].empty()) {
        return trace::failure(fmt::format("no call of rank {}'s step {} points into its {} bucket at {:#x} before its "
                                          "last reduce-scatter, so the tensors in it are not known",
                                          rank.rank, n, what, s.buckets[b].base));
      }
      s.offsets[b].insert(0);
      s.buckets[b].tensor_offsets.assign(s.offsets[b].begin(), s.offsets[b].end());
    }
    return s.buckets;
  };
  auto gradient_buckets = finish(grads, "gradient");
  if (!gradient_buckets.ok()) return gradient_buckets.status();
  auto parameter_buckets = finish(params, "parameter");
  if (!parameter_buckets.ok()) return parameter_buckets.status();
  if (optimizer.gather_placement != Placement::InLine) {
    // Issued first needed first: the layout is the reverse of the order forward first reads them.
    std::vector<std::size_t> order(params.buckets.size());
    for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return params.first_touch[a] > params.first_touch[b]; });
    std::vector<FlatBucketLayout> laid_out;
    for (std::size_t b : order) laid_out.push_back((*parameter_buckets)[b]);
    *parameter_buckets = std::move(laid_out);
  }
  return RankLayout{std::move(*gradient_buckets), std::move(*parameter_buckets), elementBytes(rank, step.reduces),
                    elementBytes(rank, *gathers)};
}

std::vector<std::uint64_t> sizesOf(const std::vector<FlatBucketLayout>& buckets) {
  std::vector<std::uint64_t> out;
  for (const FlatBucketLayout& b : buckets) {
    for (std::size_t k = 0; k < b.tensor_offsets.size(); ++k) out.push_back(tensorEnd(b, k) - b.tensor_offsets[k]);
  }
  return out;
}

// Where each stream waits (a call index), keeping a stream's earliest.
using WaitPositions = std::map<StreamHandle, std::size_t>;
void keepEarliest(WaitPositions& waits, StreamHandle stream, std::size_t at) {
  auto [first, added] = waits.emplace(stream, at);
  if (!added) first->second = std::min(first->second, at);
}

// One rank's calls being rewritten for one bucketing.
struct RankRewrite {
  const RecordedRank& rank;
  CallEdits edits;
  std::size_t end = 0;  // the calls of the step being rewritten, and of the next, end here
  std::uint64_t next_event = kBucketEventBit;

  // Drops collective `i`'s done event (the next call on its stream records it) and every
  // stream's wait for that event after it, keeping each waiting stream's first wait in `waited`.
  void dropDoneAndWaits(std::size_t i, WaitPositions& waited) {
    const StreamHandle own = rank.calls[i].call.stream;
    const std::size_t record = nextCallOn(rank, i, own, end);
    if (record == end || rank.calls[record].call.kind != CallKind::EventRecord) return;
    edits.dropped[record] = true;
    const std::uint64_t done = rank.calls[record].call.event;
    for (std::size_t k = record + 1; k < end; ++k) {
      const Call& c = rank.calls[k].call;
      if (c.kind == CallKind::EventRecord && c.event == done) break;  // recorded again: another's
      if (c.kind == CallKind::StreamWait && c.event == done) {
        edits.dropped[k] = true;
        keepEarliest(waited, c.stream, k);
      }
    }
  }

  // Every waiting stream's wait for `done` where its first recorded one was, but `except`'s.
  void waitWhereRecorded(const WaitPositions& waited, std::uint64_t done,
                         std::optional<StreamHandle> except = std::nullopt) {
    for (const auto& [stream, first] : waited) {
      if (stream == except) continue;
      edits.before[first].push_back({writtenAt(rank.calls[first], false, CallKind::StreamWait, stream, done)});
    }
  }

  // Drops the event and wait just before collective `i` on its stream (the compute stream's
  // event it waited for), if the call before it on its stream is such a wait.
  void dropReadyPair(std::size_t i) {
    const std::optional<ReadyPair> ready = readyPairBefore(rank, i);
    if (!ready || rank.calls[ready->record].call.stream == rank.calls[i].call.stream) return;
    edits.dropped[ready->record] = true;
    edits.dropped[ready->wait] = true;
  }

  // A new collective like recorded call `like` over the bucket at `address` of `bytes` (padded
  // to equal shards), written at `anchor`: in place as the recorded one was (this rank's shard
  // at the same place among the shards), else with both buffers at the bucket.
  RecordedCall collective(std::size_t like, std::uint64_t address, std::uint64_t bytes, std::size_t anchor,
                          bool after_anchor, StreamHandle stream, std::int64_t seq) const {
    const CollectiveArgs& recorded = rank.calls[like].call.collective;
    RecordedCall rc = writtenAt(rank.calls[anchor], after_anchor, CallKind::Collective, stream, 0);
    CollectiveArgs& a = rc.call.collective;
    a = recorded;
    const auto ranks = static_cast<std::uint64_t>(std::max(recorded.comm_size, 1));
    const std::uint64_t element = std::max<std::uint64_t>(1, trace::dataTypeSize(recorded.dtype));
    a.count = ((bytes + element - 1) / element + ranks - 1) / ranks;
    const bool reduce = recorded.type == trace::CollType::ReduceScatter;
    const std::uint64_t bucket = reduce ? recorded.send : recorded.recv;
    const std::uint64_t shard = reduce ? recorded.recv : recorded.send;
    const std::uint64_t shard_bytes = recorded.count * element;
    const bool in_place = shard >= bucket && shard_bytes > 0 && (shard - bucket) % shard_bytes == 0 &&
                          (shard - bucket) / shard_bytes < ranks;
    const std::uint64_t own = in_place ? address + (shard - bucket) / shard_bytes * a.count * element : address;
    a.send = reduce ? address : own;
    a.recv = reduce ? own : address;
    rc.collective_seq = seq;
    return rc;
  }
};

// The new buckets' bytes and first tensors, from the bucket of each tensor.
struct NewBuckets {
  std::vector<std::uint64_t> bytes, address;
  std::vector<std::vector<std::size_t>> tensors;
};

NewBuckets newBuckets(const Tensors& tensors, const std::vector<std::size_t>& bucket_of) {
  NewBuckets out;
  const std::size_t count = bucket_of.empty() ? 0 : bucket_of.back() + 1;
  out.bytes.assign(count, 0);
  out.address.assign(count, 0);
  out.tensors.resize(count);
  for (std::size_t t = 0; t < bucket_of.size(); ++t) {
    const std::size_t j = bucket_of[t];
    if (out.tensors[j].empty()) out.address[j] = tensors.by_layout[t].start;
    out.tensors[j].push_back(t);
    out.bytes[j] += tensors.by_layout[t].end - tensors.by_layout[t].start;
  }
  return out;
}

std::int64_t newSeq(std::int64_t step, std::size_t j, bool gather) {
  // Matched across ranks by the same number on each: apart from every recorded one, and from
  // -1, which is none.
  const auto buckets = static_cast<std::int64_t>(kMaxBuckets);
  return -(2 + step * 2 * buckets + (gather ? buckets : 0) + static_cast<std::int64_t>(j));
}

}  // namespace

std::string shardedBucketSizeHowTo(std::uint64_t elements, const std::string& framework, ShardedOverlaps overlaps) {
  const std::string megatron = fmt::format("{}{}--ddp-bucket-size {}", overlaps.grad_reduce ? "--overlap-grad-reduce " : "",
                                           overlaps.param_gather ? "--overlap-param-gather " : "", elements);
  const std::string deepspeed =
      fmt::format(R"({1}"reduce_bucket_size": {0}, "allgather_bucket_size": {0} under "zero_optimization")", elements,
                  overlaps.grad_reduce ? R"("overlap_comm": true, )" : "");
  if (framework == "Megatron-LM") return megatron + " on Megatron-LM's command line";
  if (framework == "DeepSpeed" && !overlaps.param_gather) return deepspeed + " in the DeepSpeed config";
  std::string own = fmt::format("close a bucket once it holds {} elements or more", elements);
  if (overlaps.grad_reduce) own += ", reduce-scatter each on a stream of its own as soon as backward has written it";
  if (overlaps.param_gather) {
    own += ", all-gather each on a stream of its own after the step, first needed first, forward waiting for each just "
           "before it reads it";
    return fmt::format("Megatron-LM: {}; an optimizer of your own: {}", megatron, own);
  }
  return fmt::format("Megatron-LM: {}; DeepSpeed ZeRO stage 1/2: {}; an optimizer of your own: {}", megatron, deepspeed, own);
}

std::vector<std::uint64_t> ShardedLayout::tensorBytes(bool params) const {
  const auto& buckets = params ? parameters : gradients;
  return buckets.empty() ? std::vector<std::uint64_t>{} : sizesOf(buckets.front());
}

std::vector<std::size_t> ShardedLayout::recordedBucketOf(bool params) const {
  std::vector<std::size_t> out;
  const auto& buckets = params ? parameters : gradients;
  if (buckets.empty()) return out;
  for (std::size_t b = 0; b < buckets.front().size(); ++b) out.insert(out.end(), buckets.front()[b].tensor_offsets.size(), b);
  return out;
}

ShardedLayout findShardedLayout(const WhatIfModel& model, const ShardedOptimizerRun& optimizer) {
  ShardedLayout out;
  const std::int64_t step = model.firstIteration();
  for (const RecordedRank& rank : model.calls().ranks) {
    auto layout = rankLayout(rank, step, optimizer);
    if (!layout.ok()) {
      out = {};
      out.why_not = layout.message();
      return out;
    }
    if (out.gradients.empty()) {
      out.gradient_element_bytes = layout->gradient_element_bytes;
      out.parameter_element_bytes = layout->parameter_element_bytes;
    } else if (sizesOf(layout->gradients) != sizesOf(out.gradients.front()) ||
               sizesOf(layout->parameters) != sizesOf(out.parameters.front())) {
      out = {};
      out.why_not = fmt::format("rank {}'s buckets hold tensors of other sizes than rank {}'s", rank.rank,
                                model.calls().ranks.front().rank);
      return out;
    }
    out.gradients.push_back(std::move(layout->gradients));
    out.parameters.push_back(std::move(layout->parameters));
  }
  if (out.gradients.empty()) {
    out.why_not = "the model holds no rank";
    return out;
  }
  out.found = true;
  return out;
}

std::vector<std::size_t> shardedBucketOf(const std::vector<std::uint64_t>& tensor_bytes, std::uint64_t element_bytes,
                                         std::uint64_t elements) {
  std::vector<std::size_t> out;
  std::size_t bucket = 0;
  std::uint64_t held = 0;
  for (const std::uint64_t bytes : tensor_bytes) {
    if (held >= elements) {
      ++bucket;
      held = 0;
    }
    out.push_back(bucket);
    held += bytes / std::max<std::uint64_t>(1, element_bytes);
  }
  return out;
}

trace::Result<RecordedRun> rebucketSharded(const WhatIfModel& model, const ShardedOptimizerRun& optimizer,
                                           const ShardedLayout& layout, const std::vector<std::size_t>& reduce_bucket_of,
                                           const std::vector<std::size_t>& gather_bucket_of) {
  // Collectives waited for at once are synchronous: new buckets go where the first was, as in
  // line, each recorded collective's events and waits staying where they were around them. With
  // one bucket a collective overlapping compute cannot be told from a synchronous one.
  if ((optimizer.reduce_placement == Placement::WaitedAtOnce && optimizer.reduce_scatters == 1) ||
      (optimizer.gather_placement == Placement::WaitedAtOnce && optimizer.all_gathers == 1)) {
    return trace::failure("the optimizer's collectives are waited for at once, and with one bucket a collective "
                          "overlapping compute cannot be told from a synchronous one (both are waited for right "
                          "after the work before them): record the job with a smaller bucket size to have the size "
                          "predicted");
  }
  const RecordedRun& run = model.calls();
  RecordedRun out;
  out.assumptions = run.assumptions;
  out.imported = run.imported;
  for (std::size_t row = 0; row < run.ranks.size(); ++row) {
    const RecordedRank& rank = run.ranks[row];
    const Tensors grads(layout.gradients[row]), params(layout.parameters[row]);
    if (reduce_bucket_of.size() != grads.by_layout.size() || gather_bucket_of.size() != params.by_layout.size()) {
      return trace::failure(fmt::format("rank {}'s buckets hold another number of tensors than the bucketing", rank.rank));
    }
    const NewBuckets reduce_into = newBuckets(grads, reduce_bucket_of), gather_into = newBuckets(params, gather_bucket_of);
    RankRewrite w{rank, CallEdits(rank.calls.size())};
    for (std::int64_t n = model.firstIteration(); n <= model.lastIteration(); ++n) {
      const OptimizerCollectives step = optimizerCollectives(rank, n, optimizer.comm);
      const auto [begin, end] = stepCalls(rank, n);
      w.end = end;
      std::string why;
      const std::vector<std::size_t>* step_gathers = bucketGathers(rank, n, step, why);
      if (step_gathers == nullptr) return trace::failure(why);
      const std::vector<std::size_t>& gathers = *step_gathers;
      const std::vector<FlatBucketLayout>& recorded = layout.gradients[row];
      bool as_laid_out = step.reduces.size() == recorded.size() && gathers.size() == layout.parameters[row].size();
      for (std::size_t k = 0; as_laid_out && k < recorded.size(); ++k)
        as_laid_out = rank.calls[step.reduces[k]].call.collective.send == recorded[k].base;
      for (std::size_t i : gathers) {
        const auto& buckets = layout.parameters[row];
        const std::uint64_t recv = rank.calls[i].call.collective.recv;
        as_laid_out = as_laid_out && std::any_of(buckets.begin(), buckets.end(),
                                                 [&](const FlatBucketLayout& b) { return b.base == recv; });
      }
      if (!as_laid_out) {
        return trace::failure(fmt::format("rank {}'s step {} reduces or gathers other buckets than step {}", rank.rank, n,
                                          model.firstIteration()));
      }
      // Reduce-scatters.
      if (optimizer.reduce_placement != Placement::Overlapped) {
        for (std::size_t i : step.reduces) w.edits.dropped[i] = true;
        const std::size_t at = step.reduces.front();
        for (std::size_t j = 0; j < reduce_into.bytes.size(); ++j) {
          w.edits.before[at].push_back({w.collective(at, reduce_into.address[j], reduce_into.bytes[j], at, false,
                                                     rank.calls[at].call.stream, newSeq(n, j, false))});
        }
      } else {
        // What last wrote each gradient before its bucket's reduce-scatter.
        std::vector<std::size_t> producer(grads.by_layout.size(), kNone);
        forEachPointer(rank, n, begin, step.reduces.back(), [&](std::size_t i, std::uint64_t address) {
          const std::size_t g = grads.holding(address);
          if (g != kNone && i < step.reduces[grads.by_layout[g].bucket]) producer[g] = i;
        });
        // Where each stream waited for each recorded bucket: its own wait, or a later bucket's
        // (the communication stream runs them in order), whichever came first.
        std::vector<WaitPositions> covered(step.reduces.size());
        for (std::size_t b = 0; b < step.reduces.size(); ++b) {
          const std::size_t i = step.reduces[b];
          w.edits.dropped[i] = true;
          w.dropReadyPair(i);
          w.dropDoneAndWaits(i, covered[b]);
        }
        for (std::size_t b = covered.size() - 1; b-- > 0;) {
          for (const auto& [stream, at] : covered[b + 1]) keepEarliest(covered[b], stream, at);
        }
        const WaitPositions& waited = covered.front();
        if (waited.empty()) {
          return trace::failure(fmt::format("no stream of rank {} waits for the reduce-scatters of step {}", rank.rank, n));
        }
        const std::size_t last_writer = producerOf(rank, step.reduces.front());
        const StreamHandle comm = rank.calls[step.reduces.front()].call.stream;
        const StreamHandle compute = last_writer != step.reduces.front() ? rank.calls[last_writer].call.stream
                                                                        : rank.calls[waited.begin()->second].call.stream;
        // Buckets in order, each after what last wrote one of its gradients (before the first
        // recorded reduce-scatter while no call has written any).
        std::size_t anchor = kNone;
        for (std::size_t j = 0; j < reduce_into.bytes.size(); ++j) {
          for (std::size_t g : reduce_into.tensors[j])
            if (producer[g] != kNone) anchor = anchor == kNone ? producer[g] : std::max(anchor, producer[g]);
          const bool after_anchor = anchor != kNone;
          const std::size_t at = after_anchor ? anchor : step.reduces.front();
          const std::uint64_t ready = w.next_event++, done = w.next_event++;
          std::vector<CallEdits::Written>& calls = after_anchor ? w.edits.after[at] : w.edits.before[at];
          calls.push_back({writtenAt(rank.calls[at], after_anchor, CallKind::EventRecord, compute, ready)});
          calls.push_back({writtenAt(rank.calls[at], after_anchor, CallKind::StreamWait, comm, ready)});
          calls.push_back({w.collective(step.reduces.front(), reduce_into.address[j], reduce_into.bytes[j], at,
                                        after_anchor, comm, newSeq(n, j, false))});
          calls.push_back({writtenAt(rank.calls[at], after_anchor, CallKind::EventRecord, comm, done)});
          // Each stream waits for the new bucket where it first waited for one of its tensors,
          // or, where that was before the new bucket is issued, right after it.
          WaitPositions waits;
          for (std::size_t g : reduce_into.tensors[j]) {
            for (const auto& [stream, first] : covered[grads.by_layout[g].bucket]) keepEarliest(waits, stream, first);
          }
          for (auto wait = waits.begin(); wait != waits.end();) {
            if (wait->second > at) {
              ++wait;
              continue;
            }
            calls.push_back({writtenAt(rank.calls[at], after_anchor, CallKind::StreamWait, wait->first, done)});
            wait = waits.erase(wait);
          }
          w.waitWhereRecorded(waits, done);
        }
      }
      if (gathers.empty()) continue;
      // All-gathers.
      const std::size_t at = *std::min_element(gathers.begin(), gathers.end());
      const StreamHandle gather_stream = rank.calls[at].call.stream;
      for (std::size_t i : gathers) w.edits.dropped[i] = true;
      if (optimizer.gather_placement != Placement::Overlapped) {
        for (std::size_t j = 0; j < gather_into.bytes.size(); ++j) {
          w.edits.before[at].push_back({w.collective(at, gather_into.address[j], gather_into.bytes[j], at, false,
                                                     gather_stream, newSeq(n, j, true))});
        }
        continue;
      }
      WaitPositions waited;
      for (std::size_t i : gathers) w.dropDoneAndWaits(i, waited);
      // The compute stream (the step's, which wrote the shards gathered) waits for each bucket
      // before it first reads it; any other stream (a check reading every parameter) where it
      // waited for them all. Nothing need wait for the last step's, which no forward reads.
      const std::size_t stepped = producerOf(rank, at);
      if (waited.empty() && (stepped == at || n != model.lastIteration())) {
        return trace::failure(fmt::format("no stream of rank {} waits for the all-gathers of step {}", rank.rank, n));
      }
      const StreamHandle compute =
          stepped != at ? rank.calls[stepped].call.stream : rank.calls[waited.begin()->second].call.stream;
      const auto compute_waited = waited.find(compute);
      // Where the compute stream first reads each new bucket after the gathers.
      std::vector<std::size_t> need(gather_into.bytes.size(), kNone);
      std::size_t unneeded = need.size();
      for (std::size_t i = at + 1; i < end && unneeded > 0; ++i) {
        const Call c = rank.call(i);
        if (c.stream != compute || w.edits.dropped[i]) continue;
        if (c.kind == CallKind::Kernel && c.unknown_pointers) {
          for (std::size_t& k : need)
            if (k == kNone) k = i, --unneeded;
          continue;
        }
        if (!pointsIntoMemory(c)) continue;
        for (const Touch& t : c.touches) {
          const std::size_t p = params.holding(t.address);
          if (p == kNone) continue;
          std::size_t& k = need[gather_bucket_of[p]];
          if (k == kNone) k = i, --unneeded;
        }
      }
      for (std::size_t& k : need) {
        // Never read again in the run: where the recorded waits were, if the compute stream had any.
        if (k == kNone && compute_waited != waited.end()) k = compute_waited->second;
      }
      std::vector<std::size_t> order(need.size());
      for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return need[a] < need[b]; });
      for (std::size_t j : order) {
        const std::uint64_t done = w.next_event++;
        w.edits.before[at].push_back({w.collective(at, gather_into.address[j], gather_into.bytes[j], at, false,
                                                   gather_stream, newSeq(n, j, true))});
        w.edits.before[at].push_back({writtenAt(rank.calls[at], false, CallKind::EventRecord, gather_stream, done)});
        if (need[j] != kNone) {
          w.edits.before[need[j]].push_back({writtenAt(rank.calls[need[j]], false, CallKind::StreamWait, compute, done)});
        }
        w.waitWhereRecorded(waited, done, compute);
      }
    }
    out.ranks.push_back(w.edits.applyTo(rank));
  }
  return out;
}

}  // namespace syncopate::tuner
