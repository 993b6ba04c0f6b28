#include "framework_trainer/ddp_buckets.hpp"

namespace framework_trainer {

std::vector<Bucket> assignBuckets(const std::vector<std::size_t>& param_bytes, std::size_t bucket_cap_bytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  std::size_t open_bytes = 0;
  for (std::size_t i = param_bytes.size(); i-- > 0;) {
    open.params.push_back(static_cast<int>(i));
    open.offsets.push_back(open.numel);
    open.numel += param_bytes[i] / sizeof(float);
    open_bytes += param_bytes[i];
    const std::size_t cap = buckets.empty() ? kFirstBucketBytes : bucket_cap_bytes;
    if (open_bytes >= cap) {
      buckets.push_back(std::move(open));
      open = Bucket{};
      open_bytes = 0;
    }
  }
  if (!open.params.empty()) buckets.push_back(std::move(open));
  return buckets;
}

std::vector<Bucket> modelBuckets(const ParamLayout& layout, std::size_t bucket_cap_bytes) {
  std::vector<std::size_t> bytes;
  for (const ParamSpec& p : layout.params()) bytes.push_back(p.bytes());
  return assignBuckets(bytes, bucket_cap_bytes);
}

}  // namespace framework_trainer
