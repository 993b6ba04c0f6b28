// Every row one of StoreReader's scans yields, in order; a failed scan fails the test.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "syncopate/trace/function_ref.hpp"
#include "syncopate/trace/reader.hpp"

namespace syncopate::trace::testing {

template <class Row>
std::vector<Row> readAll(const StoreReader& reader, Status (StoreReader::*scan)(FunctionRef<void(const Row&)>) const noexcept) {
  std::vector<Row> rows;
  const Status s = (reader.*scan)([&](const Row& r) { rows.push_back(r); });
  EXPECT_TRUE(s.ok()) << s.message();
  return rows;
}

}  // namespace syncopate::trace::testing
