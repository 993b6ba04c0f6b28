#include "op_recorder.hpp"

#include <gtest/gtest.h>

namespace simgpu::testing {

RecordedOp OpRecorder::byName(const std::string& name) {
  std::lock_guard lock(mu_);
  const RecordedOp* found = nullptr;
  int count = 0;
  for (const RecordedOp& op : ops_)
    if (op.name == name) {
      found = &op;
      ++count;
    }
  EXPECT_EQ(count, 1) << "ops named " << name;
  return found != nullptr ? *found : RecordedOp{};
}

}  // namespace simgpu::testing
