// Copies and fills of 0 bytes, which CUDA completes without GPU work (so CUPTI reports no
// activity for them, on a GPU as on simgpu), recorded with each backend: nothing issued after
// them on their stream is lost or held up, every op the program issued is in the store, and they
// themselves are ops of no duration in their place in stream order.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::OpKind;

class ZeroWorkOps : public ::testing::TestWithParam<std::string> {};

TEST_P(ZeroWorkOps, NothingAfterThemIsLostOrHeldUp) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), GetParam()});
  environment["SIMGPU_PROFILE"] = testProfile("workload").string();
  const auto started = std::chrono::steady_clock::now();
  ChildResult result = run({(buildDir() / "bin" / "collector_zero_work_ops").string(), "--iterations", "3"},
                           environment, std::chrono::seconds(60));
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto counts = keyValues(result.out, "zero_work_counts ");
  ASSERT_FALSE(counts.empty()) << result.out;
  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();
  EXPECT_EQ(store.meta.at("backend"), GetParam());

  EXPECT_EQ(store.count(OpKind::Kernel), countIn(counts, "kernels"));
  EXPECT_EQ(store.count(OpKind::Memcpy), countIn(counts, "memcpys"));
  EXPECT_EQ(store.count(OpKind::Memset), countIn(counts, "memsets"));
  EXPECT_EQ(store.counter("ops_untimed_timing_failed"), 0);
  EXPECT_EQ(store.counter("ops_untimed_no_timing_slot"), 0);
  EXPECT_EQ(store.counter("records_dropped_buffer_full"), 0);
  // Known from their size not to do GPU work: never waited for.
  EXPECT_EQ(store.counter("ops_without_gpu_activity"), 0);
  EXPECT_LT(took, std::chrono::seconds(10)) << "an op waited for GPU activity that never comes";

  int zero_copies = 0;
  int zero_fills = 0;
  for (const Op& op : store.ops) {
    if (op.row.kind != OpKind::Memcpy && op.row.kind != OpKind::Memset) continue;
    ASSERT_TRUE(op.row.bytes.has_value());
    if (*op.row.bytes != 0) continue;
    (op.row.kind == OpKind::Memcpy ? zero_copies : zero_fills) += 1;
    EXPECT_EQ(op.row.start_ns, op.row.end_ns) << op.name << ": no GPU work, no GPU time";
  }
  EXPECT_EQ(zero_copies, countIn(counts, "zero_byte_memcpys"));
  EXPECT_EQ(zero_fills, countIn(counts, "zero_byte_memsets"));

  // Each stream runs its ops one after the other, in the order they were issued. An op with no
  // GPU work is placed by host time (when it was issued), the others by the GPU's converted to
  // it: they may seem to overlap by the conversion's error, well under 2 us (docs/collector.md).
  constexpr std::int64_t kClockErrorNs = 2'000;
  std::map<std::uint32_t, std::vector<const Op*>> by_stream;
  for (const Op& op : store.ops) {
    if (op.row.kind != OpKind::HostSync && op.row.stream_id) by_stream[*op.row.stream_id].push_back(&op);
  }
  for (auto& [stream, ops] : by_stream) {
    std::sort(ops.begin(), ops.end(), [](const Op* a, const Op* b) { return *a->row.correlation_id < *b->row.correlation_id; });
    for (std::size_t i = 1; i < ops.size(); ++i) {
      EXPECT_GE(ops[i]->row.start_ns, ops[i - 1]->row.end_ns - kClockErrorNs)
          << "stream " << stream << ": " << ops[i]->name << " starts before " << ops[i - 1]->name << " ended";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ZeroWorkOps, ::testing::Values("cupti", "events"));

}  // namespace
}  // namespace collector_test
