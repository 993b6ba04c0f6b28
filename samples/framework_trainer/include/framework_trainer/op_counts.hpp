// What one iteration issues, counted at the call sites and checked against these formulas
// every iteration (docs/framework_trainer.md, "Output"): a changed loop cannot go unnoticed by
// the tests that read the counts.
#pragma once

#include "framework_trainer/options.hpp"

#include <cstddef>
#include <cstdint>

namespace framework_trainer {

struct OpCounts {
  std::int64_t kernels = 0;
  std::int64_t memcpys = 0;
  std::int64_t memsets = 0;
  std::int64_t collectives = 0;
  bool operator==(const OpCounts&) const = default;
  OpCounts operator-(const OpCounts& o) const {
    return {kernels - o.kernels, memcpys - o.memcpys, memsets - o.memsets, collectives - o.collectives};
  }
  OpCounts operator+(const OpCounts& o) const {
    return {kernels + o.kernels, memcpys + o.memcpys, memsets + o.memsets, collectives + o.collectives};
  }
};

int forwardKernels(int layers);
int backwardKernels(int layers);
// Every kernel, copy and collective of one iteration on one of `world_size` ranks: forward,
// backward, the synchronisation of the mode (with `buckets` in ddp and zero1 modes; fsdp's units
// are the blocks, whatever the buckets), the optimizer's and the check's multi-tensor launches.
// ddp with `gradient_as_bucket_view` copies no gradient back.
OpCounts iterationOpCounts(const ModelConfig& config, SyncMode mode, const BucketSizing& buckets, int world_size,
                           bool gradient_as_bucket_view = false);

// Multi-tensor apply launches over every parameter tensor with that many lists.
int multiTensorLaunches(const ParamLayout& layout, int depth);

}  // namespace framework_trainer
