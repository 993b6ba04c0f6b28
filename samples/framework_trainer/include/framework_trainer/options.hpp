// framework_trainer's command line.
#pragma once

#include "framework_trainer/ddp_buckets.hpp"
#include "framework_trainer/model_config.hpp"
#include "sample_common/launch_env.hpp"
#include "sample_common/parse_outcome.hpp"

#include <cstddef>
#include <cstdint>

namespace framework_trainer {

// The program's name, as --help shows it and every error message starts.
inline constexpr const char* kProgram = "framework_trainer";

// naive: after backward, one all-reduce per parameter gradient on the compute stream, as a
// hand-written loop does. ddp: PyTorch DDP's reducer (reducer.hpp). zero1: a sharded optimizer
// (ZeRO stage 1, zero_shards.hpp), all on the compute stream as a first hand-written version
// is: after backward a reduce-scatter per gradient bucket, the step on this rank's shard, an
// all-gather per bucket of the updated parameters (with overlap_grad_reduce the reduce-scatters
// run on their own stream during backward, with overlap_param_gather the all-gathers on it
// during the next forward). fsdp: fully sharded parameters (ZeRO stage 3,
// fsdp_units.hpp), as a first hand-written version of PyTorch FSDP does it, all on the compute
// stream: each unit's parameters all-gathered before its forward and again before its backward
// (one unit ahead) and freed after, its gradients reduce-scattered after its backward, the step
// on this rank's shards.
enum class SyncMode { Naive, Ddp, Zero1, Fsdp };
const char* toString(SyncMode mode);

// fsdp with --fsdp-streams: PyTorch FSDP's BackwardPrefetch, when backward issues the next unit's
// all-gather (in backward order): before this unit's gradient kernels (Pre, FSDP's default),
// after them and before this unit's reduce-scatter (Post), or only when the next unit's own
// backward starts (None).
enum class BackwardPrefetch { Pre, Post, None };
const char* toString(BackwardPrefetch prefetch);  // "pre", "post", "none"

using sample_common::BootstrapKind;

struct Options {
  ModelConfig config;
  SyncMode mode = SyncMode::Naive;
  double bucket_mb = 25.0;  // ddp: DDP's bucket_cap_mb; zero1: the same buckets; fsdp: none
  // The first bucket's cap: DDP's dist._DEFAULT_FIRST_BUCKET_BYTES with bucket_cap_mb unset,
  // the cap itself with --bucket-mb given (as DistributedDataParallel applies them); zero1: 1 MiB.
  std::size_t first_bucket_bytes = kFirstBucketBytes;
  // ddp: DDP's gradient_as_bucket_view=True: every gradient a view into its bucket's flat buffer,
  // which backward writes, divided there in place and summed by the all-reduce, rather than a
  // tensor of its own divided into the bucket as it becomes ready and copied back afterwards.
  bool gradient_as_bucket_view = false;
  // zero1: buckets as Megatron-LM's --ddp-bucket-size makes them, each closed once it holds this
  // many elements (no smaller first bucket); 0: bucket_mb's.
  std::size_t bucket_size = 0;
  // zero1: each gradient bucket's reduce-scatter issued on its own stream as soon as backward has
  // written the bucket (Megatron-LM's --overlap-grad-reduce, DeepSpeed's overlap_comm), rather than
  // all of them on the compute stream after backward.
  bool overlap_grad_reduce = false;
  // zero1: the updated parameters' all-gathers issued on their own stream after the step, in the
  // order forward first reads the buckets, forward waiting for each bucket before it reads it
  // (Megatron-LM's --overlap-param-gather), rather than all of them on the compute stream.
  bool overlap_param_gather = false;
  // zero1: the collectives that do not overlap issued as torch.distributed issues a synchronous
  // one (async_op=False): on the process group's own stream after it waits for the compute
  // stream, the compute stream waiting for it at once; rather than on the compute stream.
  bool process_group_stream = false;
  // fsdp: issue as PyTorch FSDP (FULL_SHARD) does: every all-gather on an unshard stream, every
  // reduce-scatter on a post-backward stream, the compute stream waiting for them where it needs
  // their results, gathered buffers freed as record_stream frees them (fully_sharded.hpp).
  // Without it, all on the compute stream. The three settings below apply with it, their
  // defaults FSDP's.
  bool fsdp_streams = false;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  // The next unit's all-gather issued before this unit's forward kernels, rather than when the
  // next unit's forward starts.
  bool forward_prefetch = false;
  // FSDP's rate limiter: before an all-gather, the host waits for the oldest freeing of gathered
  // parameters while two are outstanding.
  bool limit_all_gathers = true;
  int iterations = 8;       // measured iterations
  int warmup = 1;           // iterations before them, checked but left out of the summary
  std::uint64_t seed = 1234;
  float lr = 0.1f;
  double segment_mb = 256.0;  // the caching allocator's smallest segment
  BootstrapKind bootstrap = BootstrapKind::Auto;
  double bootstrap_timeout_s = 60.0;
  // Seconds without progress before the run is declared hung (an error). The host issues every
  // iteration before it waits for the first, so progress is one checked iteration.
  double watchdog_s = 600.0;

  std::size_t bucketBytes() const { return static_cast<std::size_t>(bucket_mb * 1024.0 * 1024.0); }
  BucketSizing bucketSizing() const { return {bucketBytes(), bucket_size, first_bucket_bytes}; }
  std::size_t segmentBytes() const { return static_cast<std::size_t>(segment_mb * 1024.0 * 1024.0); }
  int totalIterations() const { return warmup + iterations; }
};

using ParseOutcome = sample_common::ParseOutcome<Options>;

ParseOutcome parseOptions(int argc, const char* const* argv);

}  // namespace framework_trainer
