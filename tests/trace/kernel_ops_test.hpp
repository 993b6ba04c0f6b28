// A test with a store directory and a catalog that knows one stream and one kernel shape, and
// batches of kernel-op records on them: what the writer tests append.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace::testing {

class KernelOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
    shape = catalog.internShape({catalog.intern("k"), {}, {}});
  }
  // `n` kernel ops with correlation ids from `first`, each 1 ns long.
  std::vector<Record> ops(std::uint32_t first, int n) {
    std::vector<Record> out;
    for (int i = 0; i < n; ++i) out.push_back(OpRecord::launch(OpKind::Kernel, stream, first + i, shape, i, i + 1));
    return out;
  }
  TempDir dir;
  Catalog catalog;
  StreamId stream{};
  ShapeId shape{};
};

}  // namespace syncopate::trace::testing
