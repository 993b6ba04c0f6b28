// How many GPU operations dp_trainer issues, by kind. The trainer counts what it really
// issues and checks it against these formulas; it prints both per rank so that tools that
// record the run (the collector) can compare their counts with the program's own.
#pragma once

#include "dp_trainer/model_shape.hpp"
#include "dp_trainer/options.hpp"

#include <cstddef>
#include <cstdint>

namespace dp_trainer {

struct OpCounts {
  std::uint64_t kernels = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memsets = 0;
  std::uint64_t collectives = 0;

  OpCounts& operator+=(const OpCounts& other) {
    kernels += other.kernels;
    memcpys += other.memcpys;
    memsets += other.memsets;
    collectives += other.collectives;
    return *this;
  }
  friend OpCounts operator*(OpCounts counts, std::uint64_t times) {
    counts.kernels *= times;
    counts.memcpys *= times;
    counts.memsets *= times;
    counts.collectives *= times;
    return counts;
  }
  friend OpCounts operator-(OpCounts a, const OpCounts& b) {
    a.kernels -= b.kernels;
    a.memcpys -= b.memcpys;
    a.memsets -= b.memsets;
    a.collectives -= b.collectives;
    return a;
  }
  friend bool operator==(const OpCounts&, const OpCounts&) = default;
};

// Before the first iteration: the initial parameters' upload and their broadcast from rank 0.
OpCounts setupOpCounts();

// One iteration: forward (layers), loss (1), backward (layers weight-gradient kernels and
// layers - 1 input-gradient kernels), SGD (layers); copies of inputs and targets in, loss and
// gradients out; one memset (zero_grad); one all-reduce per layer (naive) or per bucket.
OpCounts iterationOpCounts(const ModelShape& shape, SyncMode mode, std::size_t buckets);

}  // namespace dp_trainer
