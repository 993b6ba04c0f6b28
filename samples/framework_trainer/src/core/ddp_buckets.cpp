#include "framework_trainer/ddp_buckets.hpp"

namespace framework_trainer {

namespace {

// The parameters (elements each, registration order) taken in reverse, a bucket closed once
// `full(elements held, buckets closed before it)`.
template <class Full>
std::vector<Bucket> assignInReverse(const std::vector<std::size_t>& numels, Full&& full) {
  std::vector<Bucket> buckets;
  Bucket open;
  for (std::size_t i = numels.size(); i-- > 0;) {
    open.params.push_back(static_cast<int>(i));
    open.offsets.push_back(open.numel);
    open.numel += numels[i];
    if (full(open.numel, buckets.size())) {
      buckets.push_back(std::move(open));
      open = Bucket{};
    }
  }
  if (!open.params.empty()) buckets.push_back(std::move(open));
  return buckets;
}

std::vector<std::size_t> numelsOf(const ParamLayout& layout) {
  std::vector<std::size_t> numels;
  for (const ParamSpec& p : layout.params()) numels.push_back(p.bytes() / sizeof(float));
  return numels;
}

}  // namespace

std::vector<Bucket> assignBuckets(const std::vector<std::size_t>& param_bytes, std::size_t bucket_cap_bytes,
                                  std::size_t first_bucket_bytes) {
  std::vector<std::size_t> numels;
  for (std::size_t bytes : param_bytes) numels.push_back(bytes / sizeof(float));
  return assignInReverse(numels, [&](std::size_t numel, std::size_t closed) {
    return numel * sizeof(float) >= (closed == 0 ? first_bucket_bytes : bucket_cap_bytes);
  });
}

std::vector<Bucket> assignBucketsByElements(const std::vector<std::size_t>& param_numels, std::size_t elements) {
  return assignInReverse(param_numels, [&](std::size_t numel, std::size_t) { return numel >= elements; });
}

std::vector<Bucket> modelBuckets(const ParamLayout& layout, const BucketSizing& sizing) {
  if (sizing.elements > 0) return assignBucketsByElements(numelsOf(layout), sizing.elements);
  std::vector<std::size_t> bytes;
  for (std::size_t numel : numelsOf(layout)) bytes.push_back(numel * sizeof(float));
  return assignBuckets(bytes, sizing.cap_bytes, sizing.first_bytes);
}

}  // namespace framework_trainer
