// DDP's bucket_cap_mb predicted from its buckets alone: what `syncopate tune` predicts for a
// PyTorch profile (docs/tuner.md, "DDP's buckets from a trace"), which carries each bucket's
// all-reduce, its size and when it was launched, but no buffer address, so that the gradient
// slots ddp_rebucket.hpp follows cannot be told apart.
//
// What the trace does not say is assumed, each assumption named in the report:
//   - where gradients end within a recorded bucket. DDP closes a bucket at the first gradient
//     that brings it to the cap (its first bucket to its own limit: 1 MiB when set apart, the cap
//     unset; the recorded first bucket is taken as set apart when under half the cap bound
//     below), so a recorded bucket's gradients
//     all end within the cap of its start, but for its last, which may run past it. The cap
//     is at most the smallest bucket between the first and the last, and is taken as that
//     rounded down to whole MiB, as caps are set (cap_bound). So another cap may cut a recorded
//     bucket anywhere within cap_bound of its start (gradients taken as fine-grained there),
//     and nowhere after it; the recorded cap gives the recorded buckets;
//   - when each gradient is ready. Backward's launches on the buckets' thread between two
//     recorded buckets' all-reduces are taken to make their bytes at an even rate, so a new
//     bucket's all-reduce is launched after the launch that part of the way along;
//   - how long a new all-reduce takes: the communicator's fit of time on size (fits.hpp), and
//     for a communicator with ranks absent from the run, the absent ranks arriving with this one.
// Each new bucket's all-reduce waits, as DDP's does, for the compute stream at its launch
// (an event and a stream wait), on the recorded all-reduces' stream, in order. A new bucket
// that ends where a recorded one ended, after the same launch, is written in that all-reduce's
// place at its host time, after its waits; a recorded bucket no new one replaces so is dropped
// with its waits, and the host time they took is shared among the other new all-reduces, later
// calls moving by it. Everything else keeps its recorded times. The recorded buckets rewritten the
// same way (the recorded calls at their times, each all-reduce timed as a new one) give the
// baseline the other caps are compared with, so that what the rewriting itself changes (the
// fitted all-reduce times) cancels out.
//
// gradient_as_bucket_view is read from the copies back: without it, DDP copies every bucket's
// averaged gradients back after backward, so the first copies the buckets' thread launches after
// the last bucket's all-reduce add up to exactly the buckets' bytes (161 copies of 102 228 128
// bytes a step on the trace `nccl_parser_config`). Where they do, True is predicted with those
// copies dropped, their host time with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/tuner/ddp_rebucket.hpp"
#include "syncopate/tuner/recorded_calls.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// One modelled iteration of one rank: its buckets' all-reduce calls (indices into the rank's
// calls), in launch order.
struct DdpBucketCalls {
  std::int64_t iteration = 0;
  std::vector<std::size_t> reduces;
  std::vector<std::size_t> copies_back;  // the buckets copied back to the gradients, when found
};

struct DdpBucketsBySize {
  bool found = false;
  std::string why_not;                        // when not found: what the run lacks, one sentence
  std::vector<std::uint64_t> bucket_bytes;    // one iteration of rank row 0, in launch order
  std::uint64_t cap_bound = 0;                // the recorded cap as taken (above); 0: not bounded
  bool first_apart = false;                   // the recorded first bucket taken as set apart (above)
  std::vector<std::vector<DdpBucketCalls>> ranks;  // per rank row, per modelled iteration
  // Every modelled iteration copies its buckets back (gradient_as_bucket_view=False), or why
  // that is not read.
  bool copies_back = false;
  std::string copies_back_why_not;
};

// The recorded cap as taken from one step's buckets (`cap_bound` above; 0 with fewer than three
// buckets), and whether their first bucket is taken as DDP's first set apart, bucket_cap_mb
// unset (under half that bound, or no bound to tell).
std::uint64_t ddpCapBound(const std::vector<std::uint64_t>& bucket_bytes);
bool ddpFirstBucketSetApart(const std::vector<std::uint64_t>& bucket_bytes);

// The buckets of DDP in a trace: in each modelled iteration [first, last] of every rank, the
// all-reduces launched after the iteration's `DistributedDataParallel.forward` range ended.
DdpBucketsBySize ddpBucketsOfForwards(const RecordedRun& run, const analyzer::RunModel& model, std::int64_t first,
                                      std::int64_t last);

// The same buckets where the reducer was found by its copies (a recorded run): to compare the
// two models on one run.
DdpBucketsBySize ddpBucketsOfReducer(const RecordedRun& run, const DdpReducer& reducer);

// The run's calls without the copies back of every modelled iteration (`b.copies_back` must hold),
// later calls earlier by their host time: the job with gradient_as_bucket_view=True.
RecordedRun dropDdpCopiesBack(const RecordedRun& run, const DdpBucketsBySize& b);

// The buckets (their sizes, in launch order) DDP would cut as `bucketing` cuts them of
// gradients whose recorded buckets were `recorded`, under the assumption above about where
// gradients end.
std::vector<std::uint64_t> ddpBucketsFor(const std::vector<std::uint64_t>& recorded, std::uint64_t cap_bound,
                                         bool first_apart, const DdpBucketing& bucketing);

// The run's calls with every modelled iteration's buckets cut as `bucketing` cuts them (none:
// as recorded, rewritten the same way). `b` must have been found.
RecordedRun rebucketDdpBySize(const RecordedRun& run, const DdpBucketsBySize& b,
                              const std::optional<DdpBucketing>& bucketing);

// For each communicator of the buckets that the run gives no fit (its other ranks absent), a
// fit of the buckets' own all-reduces: their times, waits for the absent ranks included, on
// their sizes. Empty where the run fits them itself.
std::vector<CommFit> ddpBucketFits(const WhatIfModel& model, const DdpBucketsBySize& b);

}  // namespace syncopate::tuner
