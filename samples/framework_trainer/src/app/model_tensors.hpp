// Where the model's parameters and gradients live: the step's kernels address each tensor
// through a float* from this table, whatever owns the memory behind it.
// - Separate blocks (naive and ddp modes): each parameter and each gradient is its own block of
//   the caching allocator, as an nn.Module's parameters and their .grad are.
// - Views into flat buckets (zero1 mode): one parameter buffer and one gradient buffer per
//   bucket, padded to equal shards (framework_trainer/zero_shards.hpp), each tensor a view at
//   its offset in its bucket, as Megatron-LM's distributed optimizer lays out its contiguous
//   parameter and main_grad buffers (and PyTorch DDP's gradient_as_bucket_view=True its
//   gradients). Backward writes each gradient straight into its bucket, the reduce-scatter reads
//   the bucket where it is, and the all-gather writes the parameters where forward reads them:
//   no copy between the model's tensors and the collectives' buffers.
// - Gradients as views into DDP's buckets (ddp mode with gradient_as_bucket_view): parameters
//   are blocks of their own, each gradient a view at its offset in its bucket's flat buffer, as
//   PyTorch DDP's gradient_as_bucket_view=True makes them; backward writes the buckets, which the
//   reducer divides and the all-reduces sum in place.
// - Views bound while a unit is in use (fsdp mode): the table starts empty; FSDP
//   (fully_sharded.hpp) points a unit's tensors into the buffer its parameters were gathered
//   into, or its gradients are written into, for as long as that buffer lives, and empties them
//   when it goes back to the allocator. Kernels take the addresses by value at launch.
#pragma once

#include "device_allocator.hpp"
#include "issuer.hpp"

#include "framework_trainer/model_config.hpp"
#include "framework_trainer/zero_shards.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace framework_trainer {

// One bucket's flat buffers, each padded_numel elements, laid out as `layout` says.
struct FlatBucket {
  ShardedBucket layout;
  DeviceTensor<float> params, grads;
};

class ModelTensors {
 public:
  // A block of `allocator` per parameter and per gradient, for `stream`.
  static ModelTensors separate(DeviceAllocator& allocator, const ParamLayout& layout, cudaStream_t stream);
  // A flat parameter and a flat gradient buffer per bucket, zeroed on `stream` (the padding
  // must stay finite: the step and the collectives cover it with the rest); every tensor a view.
  static ModelTensors inBuckets(DeviceAllocator& allocator, const ParamLayout& layout,
                                std::vector<ShardedBucket> buckets, cudaStream_t stream, Issuer& issue);

  // A block of `allocator` per parameter; a flat gradient buffer per bucket of `buckets`, every
  // gradient a view into it. Unlike inBuckets' no padding: DDP's buckets are not sharded.
  static ModelTensors withGradientsIn(DeviceAllocator& allocator, const ParamLayout& layout,
                                      const std::vector<Bucket>& buckets, cudaStream_t stream);

  // No tensor anywhere until a unit's views are bound.
  static ModelTensors unbound(const ParamLayout& layout);

  // Points the tensors of `unit` at their offsets in the flat buffer `flat`, or at nothing
  // (nullptr).
  void viewParams(const Bucket& unit, float* flat) { view(params_, unit, flat); }
  void viewGrads(const Bucket& unit, float* flat) { view(grads_, unit, flat); }

  float* param(int index) const { return params_[static_cast<std::size_t>(index)]; }
  float* grad(int index) const { return grads_[static_cast<std::size_t>(index)]; }
  // Every tensor's address, in registration order.
  const std::vector<float*>& params() const { return params_; }
  const std::vector<float*>& grads() const { return grads_; }
  // The flat buckets the tensors are views into; none for separate blocks.
  const std::vector<FlatBucket>& buckets() const { return buckets_; }
  // withGradientsIn's flat gradient buffers, bucket by bucket; none otherwise.
  const std::vector<DeviceTensor<float>>& gradientBuckets() const { return gradient_buckets_; }

 private:
  static void view(std::vector<float*>& table, const Bucket& unit, float* flat);
  // Throws, naming the first tensor of `table` left without an address (its name + `missing`).
  static void requireEveryTensor(const std::vector<float*>& table, const ParamLayout& layout, const char* missing);

  std::vector<DeviceTensor<float>> blocks_;
  std::vector<FlatBucket> buckets_;
  std::vector<DeviceTensor<float>> gradient_buckets_;
  std::vector<float*> params_, grads_;
};

}  // namespace framework_trainer
