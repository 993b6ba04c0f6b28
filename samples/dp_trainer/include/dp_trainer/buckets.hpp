// Gradient buckets of the `overlap` mode, formed as PyTorch DDP forms them: in the order
// backward produces gradients (the last layer first), a bucket takes whole layers until it
// holds at least the bucket size. Sizes are the modelled LLM gradient bytes (what the
// profile's bytes_scale makes each all-reduce cost), not the tiny real ones.
#pragma once

#include "dp_trainer/model_shape.hpp"

#include <cstddef>
#include <vector>

namespace dp_trainer {

struct Bucket {
  int first_layer = 0;  // lowest layer: its gradient is produced last and closes the bucket
  int last_layer = 0;   // highest layer (inclusive)
  std::size_t offset = 0;  // first element in the flat gradient buffer
  std::size_t count = 0;   // elements
  double modelled_bytes = 0.0;
};

// Buckets in launch order (bucket 0 holds the last layer). bucket_bytes <= 0 is refused.
std::vector<Bucket> planBuckets(const ModelShape& shape, double modelled_bytes_per_layer, double bucket_bytes);

}  // namespace dp_trainer
