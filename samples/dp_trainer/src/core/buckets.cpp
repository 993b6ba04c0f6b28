#include "dp_trainer/buckets.hpp"

#include <stdexcept>

namespace dp_trainer {

std::vector<Bucket> planBuckets(const ModelShape& shape, double modelled_bytes_per_layer, double bucket_bytes) {
  if (!(bucket_bytes > 0.0)) throw std::invalid_argument("bucket size must be positive");
  std::vector<Bucket> buckets;
  Bucket open;
  bool has_open = false;
  for (int layer = shape.layers - 1; layer >= 0; --layer) {
    if (!has_open) {
      open = Bucket{layer, layer, 0, 0, 0.0};
      has_open = true;
    }
    open.first_layer = layer;
    open.modelled_bytes += modelled_bytes_per_layer;
    if (open.modelled_bytes >= bucket_bytes) {
      buckets.push_back(open);
      has_open = false;
    }
  }
  if (has_open) buckets.push_back(open);
  for (Bucket& bucket : buckets) {
    bucket.offset = shape.layerOffset(bucket.first_layer);
    bucket.count = shape.paramsPerLayer() * static_cast<std::size_t>(bucket.last_layer - bucket.first_layer + 1);
  }
  return buckets;
}

}  // namespace dp_trainer
