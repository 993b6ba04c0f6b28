#include "model_tensors.hpp"

#include <stdexcept>
#include <utility>

namespace framework_trainer {

ModelTensors ModelTensors::separate(DeviceAllocator& allocator, const ParamLayout& layout, cudaStream_t stream) {
  ModelTensors out;
  for (const ParamSpec& p : layout.params()) {
    out.params_.push_back(out.blocks_.emplace_back(allocator, p.numel(), stream).get());
    out.grads_.push_back(out.blocks_.emplace_back(allocator, p.numel(), stream).get());
  }
  return out;
}

ModelTensors ModelTensors::inBuckets(DeviceAllocator& allocator, const ParamLayout& layout,
                                     std::vector<ShardedBucket> buckets, cudaStream_t stream, Issuer& issue) {
  ModelTensors out;
  const auto tensors = static_cast<std::size_t>(layout.size());
  out.params_.assign(tensors, nullptr);
  out.grads_.assign(tensors, nullptr);
  for (ShardedBucket& b : buckets) {
    const auto padded = static_cast<std::int64_t>(b.padded_numel);
    FlatBucket& flat = out.buckets_.emplace_back(FlatBucket{std::move(b), DeviceTensor<float>(allocator, padded, stream),
                                                            DeviceTensor<float>(allocator, padded, stream)});
    issue.memset(flat.params.get(), flat.params.bytes(), stream);
    issue.memset(flat.grads.get(), flat.grads.bytes(), stream);
    const Bucket& assignment = flat.layout.bucket;
    for (std::size_t i = 0; i < assignment.params.size(); ++i) {
      const auto param = static_cast<std::size_t>(assignment.params[i]);
      out.params_[param] = flat.params.get() + assignment.offsets[i];
      out.grads_[param] = flat.grads.get() + assignment.offsets[i];
    }
  }
  requireEveryTensor(out.params_, layout, " is in no bucket");
  return out;
}

ModelTensors ModelTensors::withGradientsIn(DeviceAllocator& allocator, const ParamLayout& layout,
                                           const std::vector<Bucket>& buckets, cudaStream_t stream) {
  ModelTensors out = unbound(layout);
  for (int p = 0; p < layout.size(); ++p) {
    out.params_[static_cast<std::size_t>(p)] = out.blocks_.emplace_back(allocator, layout[p].numel(), stream).get();
  }
  for (const Bucket& b : buckets) {
    float* flat = out.gradient_buckets_.emplace_back(allocator, static_cast<std::int64_t>(b.numel), stream).get();
    view(out.grads_, b, flat);
  }
  requireEveryTensor(out.grads_, layout, "'s gradient is in no bucket");
  return out;
}

ModelTensors ModelTensors::unbound(const ParamLayout& layout) {
  ModelTensors out;
  out.params_.assign(static_cast<std::size_t>(layout.size()), nullptr);
  out.grads_.assign(static_cast<std::size_t>(layout.size()), nullptr);
  return out;
}

void ModelTensors::requireEveryTensor(const std::vector<float*>& table, const ParamLayout& layout, const char* missing) {
  for (std::size_t t = 0; t < table.size(); ++t) {
    if (table[t] == nullptr) throw std::logic_error(layout[static_cast<int>(t)].name + missing);
  }
}

void ModelTensors::view(std::vector<float*>& table, const Bucket& unit, float* flat) {
  for (std::size_t i = 0; i < unit.params.size(); ++i) {
    table[static_cast<std::size_t>(unit.params[i])] = flat == nullptr ? nullptr : flat + unit.offsets[i];
  }
}

}  // namespace framework_trainer
