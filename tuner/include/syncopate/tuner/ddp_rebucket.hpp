// PyTorch DDP's reducer found in a recorded run, and the calls the same job would make with
// another `bucket_cap_mb`: what `syncopate tune` predicts to recommend the setting itself, in the
// framework's own words, rather than a plan for Syncopate's runtime.
//
// The reducer (torch/csrc/distributed/c10d/reducer.cpp, with gradient_as_bucket_view off, the
// default) does, per bucket, in the order backward makes the gradients ready:
//   each gradient put in its slot of the bucket's flat buffer, on the compute stream S: divided
//   by the world size into it (at::mul_out, a kernel), or with a communication hook copied;
//   when the bucket's last gradient is in: an event recorded on S, ProcessGroupNCCL's stream C
//   waiting for it, the bucket's in-place all-reduce on C, an event recorded on C;
// and after backward, per bucket: S waiting for that event, then a copy of each slot back to its
// gradient. With gradient_as_bucket_view=True every gradient is a view into its slot: backward's
// kernels write the slots, the division is in place (div_, the same bytes read and written as
// mul_out's; with a hook, none), and nothing is copied back. A slot's gradient is in once the
// last kernel given its address before the all-reduce (or its copy) is issued. A job with
// another cap makes the same gradients, grouped into other buckets: the first closes at its own
// limit (DDP's first bucket), each later one once it holds the cap or more, over the parameters
// in DDP's order (the recorded buffers' layout), launched in order. Which first bucket a cap
// comes with is DDP's own rule (ddpBucketingForCap below).
//
// findDdpReducer() finds that pattern on every rank in every modelled iteration, once;
// rebucketDdp() then writes, for a cap, the calls with the buckets it gives: the same copies (or
// none, the gradients as views), each new bucket's event, wait, all-reduce (its time from the
// communicator's fit) and done event after its last gradient is in, and the wait for it before
// the first copy back out of it (with views, where the recorded waits began). Everything else
// keeps its recorded times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/tuner/recorded_calls.hpp"

namespace syncopate::tuner {

inline constexpr std::uint64_t kDdpFirstBucketBytes = 1ull << 20;  // DDP's _DEFAULT_FIRST_BUCKET_BYTES
inline constexpr std::uint64_t kDdpDefaultCapBytes = 25ull << 20;   // DDP's bucket_cap_mb when unset

// How DDP cuts its buckets: the first closes once it holds `first_bytes` or more, each later one
// once it holds `cap_bytes` or more.
struct DdpBucketing {
  std::uint64_t cap_bytes = kDdpDefaultCapBytes;
  std::uint64_t first_bytes = kDdpFirstBucketBytes;
  bool operator==(const DdpBucketing&) const = default;
};

// What DistributedDataParallel makes of `bucket_cap_mb=cap` (PyTorch's torch/nn/parallel/distributed.py,
// _BucketCapacityConfig): every bucket, the first one too, cut at the cap. Only while
// bucket_cap_mb is left unset does the first close sooner, at dist._DEFAULT_FIRST_BUCKET_BYTES
// (1 MiB unless the job sets it), before buckets of 25 MiB: ddpDefaultBucketing().
inline DdpBucketing ddpBucketingForCap(std::uint64_t cap_bytes) { return {cap_bytes, cap_bytes}; }
inline DdpBucketing ddpDefaultBucketing(std::uint64_t first_bytes = kDdpFirstBucketBytes) {
  return {kDdpDefaultCapBytes, first_bytes};
}

inline constexpr std::size_t kNoCall = std::numeric_limits<std::size_t>::max();

// One bucket of one iteration as the reducer issued it: its calls (indices into the rank's
// calls) around its all-reduce, and where its flat buffer lies.
struct DdpBucket {
  std::size_t ready = kNoCall, wait = kNoCall, reduce = kNoCall, done = kNoCall, final_wait = kNoCall;
  std::uint64_t lo = 0, hi = 0;
  std::uint64_t done_event = 0;
};

// A gradient in its bucket: the call after which it is there (its copy in, or the last kernel
// given its slot: DDP's division into the bucket), and its copy back out (none with views).
struct DdpGradient {
  std::size_t in = kNoCall, copy_out = kNoCall;
  std::size_t bucket = 0;  // the recorded bucket it is in
  std::uint64_t bytes = 0;
  bool copied_in = false;  // `in` is a copy (DDP with a communication hook), not a kernel
};

struct DdpIteration {
  std::int64_t iteration = 0;
  std::vector<DdpBucket> buckets;
  std::vector<DdpGradient> gradients;  // in the buckets' layout: DDP's order of assignment
  std::size_t first_final_wait = kNoCall;  // the compute stream's first wait for a bucket after backward
};

struct DdpReducer {
  bool found = false;
  std::string why_not;                      // when not found: what the run lacks, one sentence
  bool gradient_as_bucket_view = false;     // the gradients are views into the buckets (no copies)
  std::uint64_t gradient_bytes = 0;         // per iteration, all buckets (rank 0)
  std::vector<std::uint64_t> bucket_bytes;  // the recorded buckets of one iteration (rank 0)
  std::vector<std::uint64_t> gradient_sizes;  // per iteration, in DDP's order of assignment (rank 0)
  std::vector<std::vector<DdpIteration>> ranks;  // per rank row of the run, its modelled iterations
};

// Whether every rank's modelled iterations [first, last] show DDP's reducer, and its buckets.
DdpReducer findDdpReducer(const RecordedRun& run, std::int64_t first, std::int64_t last);

// The run's calls with DDP's buckets cut as `bucketing` cuts them (none: as recorded) in the
// iterations the reducer was found in (it must have been found); other iterations keep theirs.
// `gradient_as_bucket_view`: the gradients as views, the recorded copies back out dropped, and
// the copies in (a hook's; a division stays, in place); a run recorded with views cannot be
// written with copies, whose times it never measured (std::invalid_argument).
RecordedRun rebucketDdp(const RecordedRun& run, const DdpReducer& reducer, const std::optional<DdpBucketing>& bucketing,
                        bool gradient_as_bucket_view);

// The bucket DDP puts each gradient in (gradients in its order of assignment: the parameters
// reversed, as the recorded buckets lay them out).
std::vector<std::size_t> ddpBucketOf(const std::vector<std::uint64_t>& gradient_bytes, const DdpBucketing& bucketing);

}  // namespace syncopate::tuner
