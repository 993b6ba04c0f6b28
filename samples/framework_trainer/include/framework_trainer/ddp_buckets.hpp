// Which gradients share a bucket, as PyTorch DDP assigns them (compute_bucket_assignment_by_size):
// parameters are taken in the reverse of their registration order (roughly the order backward
// produces their gradients), and a bucket is closed once it holds at least its cap: the first
// bucket's own (DDP's first_bucket_bytes_cap, so that communication starts early), the bucket
// cap (bucket_cap_mb) for the others. DistributedDataParallel sets the first bucket's cap apart,
// at dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB), only while bucket_cap_mb is left unset (25 MiB);
// given bucket_cap_mb, the first bucket's cap is that too (PyTorch's torch/nn/parallel/distributed.py).
#pragma once

#include "framework_trainer/model_config.hpp"

#include <cstddef>
#include <vector>

namespace framework_trainer {

struct Bucket {
  std::vector<int> params;            // parameter indices, in the bucket's order
  std::vector<std::size_t> offsets;   // each one's element offset in the flat bucket buffer
  std::size_t numel = 0;
};

inline constexpr std::size_t kFirstBucketBytes = std::size_t{1} << 20;

// `param_bytes` in registration order. Every parameter is in exactly one bucket.
std::vector<Bucket> assignBuckets(const std::vector<std::size_t>& param_bytes, std::size_t bucket_cap_bytes,
                                  std::size_t first_bucket_bytes = kFirstBucketBytes);

// As Megatron-LM's distributed optimizer assigns them (--ddp-bucket-size): the parameters in the
// reverse of their registration order, a bucket closed once it holds at least `elements`
// elements, the first bucket as large as the others.
std::vector<Bucket> assignBucketsByElements(const std::vector<std::size_t>& param_numels, std::size_t elements);

// How a run cuts its buckets: DDP's caps in bytes (the first bucket's and the others'), or
// Megatron-LM's size in elements when set.
struct BucketSizing {
  std::size_t cap_bytes = 0;
  std::size_t elements = 0;
  std::size_t first_bytes = kFirstBucketBytes;
};

// The buckets of the model's parameters (the ddp and zero1 modes').
std::vector<Bucket> modelBuckets(const ParamLayout& layout, const BucketSizing& sizing);

}  // namespace framework_trainer
