// The driver API: entry points handed out by cuGetProcAddress are the collector's interposers
// (so launches by cuBLAS or NCCL, which reach the driver that way, are recorded), calls by name
// are interposed too, and so are libcuda.so.1's functions looked up by handle (cuBLAS's own copy
// of the runtime finds cuGetProcAddress so); every call still reaches the driver exactly once.
#include <gtest/gtest.h>

#include <set>

#include "support/child_process.hpp"
#include "support/recorded_store.hpp"
#include "support/recording.hpp"

namespace collector_test {
namespace {

using syncopate::trace::OpKind;

TEST(DriverApi, EntryPointsAreHandedOutAsInterposersAndRecorded) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), "events"});
  // The stand-in driver first, simgpu's runtime after it.
  environment["LD_LIBRARY_PATH"] = (buildDir() / "lib" / "collector-test-driver").string() + ":" +
                                   (buildDir() / "lib" / "simgpu").string();
  ChildResult result = run({(buildDir() / "bin" / "collector_driver_client").string()}, environment, std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto printed = keyValues(result.out, "driver_client ");
  EXPECT_EQ(printed["handed_out"], "1");
  EXPECT_EQ(printed["by_handle"], "1");
  ASSERT_EQ(printed["launches"], "8") << "3 handed out by cuGetProcAddress, 2 by name, 3 by handle";
  EXPECT_EQ(printed["reached_launches"], printed["launches"]) << "each call reached the driver once";
  EXPECT_EQ(printed["reached_copies"], "1");

  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();
  ASSERT_EQ(store.count(OpKind::Kernel), 8);
  for (const Op* op : store.opsOf(OpKind::Kernel)) {
    EXPECT_EQ(op->name, "fake_driver_kernel");
    ASSERT_TRUE(op->row.grid);
    EXPECT_EQ(op->row.grid->x, 2u);
    EXPECT_EQ(op->row.block->x, 64u);
  }
  ASSERT_EQ(store.count(OpKind::Memcpy), 1);
  EXPECT_EQ(store.opsOf(OpKind::Memcpy).front()->row.bytes, 256);
  int launch_calls = 0;
  for (const ApiCall& call : store.api_calls) launch_calls += call.name == "cuLaunchKernel" ? 1 : 0;
  EXPECT_EQ(launch_calls, 8);
  EXPECT_EQ(store.counter("driver_entry_points_untraced"), 0);
}

// cuBLAS and cuBLASLt launch the kernels of the libraries they load: CUkernels, which
// cuLaunchKernel takes in place of a CUfunction and the CUfunction queries refuse. Each is named
// by cuKernelGetName and its parameters read through cuKernelGetParamInfo, so its pointer
// argument is known (on an H200 under PyTorch, every cuBLAS kernel was "<unnamed kernel>" and
// 16 of them a step had no readable layout: the tuner's runtime made them barriers).
TEST(DriverApi, ALibrarysKernelIsNamedAndItsParametersRead) {
  TempDir dir;
  auto environment = recordingEnvironment({dir.path(), "events"});
  environment["LD_LIBRARY_PATH"] = (buildDir() / "lib" / "collector-test-driver").string() + ":" +
                                   (buildDir() / "lib" / "simgpu").string();
  ChildResult result =
      run({(buildDir() / "bin" / "collector_driver_client").string(), "library"}, environment, std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto printed = keyValues(result.out, "driver_client ");
  ASSERT_EQ(printed["library_launches"], "2");
  EXPECT_EQ(printed["reached_launches"], "2");

  auto stores = readRun(dir.path());
  ASSERT_EQ(stores.size(), 1u);
  const RecordedStore& store = stores.front();
  ASSERT_EQ(store.count(OpKind::Kernel), 2);
  std::set<std::int64_t> launched;
  for (const Op* op : store.opsOf(OpKind::Kernel)) {
    EXPECT_EQ(op->name, "fake_library_kernel");
    ASSERT_TRUE(op->row.correlation_id.has_value());
    launched.insert(*op->row.correlation_id);
  }
  int arguments = 0;
  for (const auto& arg : store.op_args) {
    if (launched.count(arg.correlation_id) == 0) continue;
    EXPECT_EQ(arg.arg_index, 0) << "one pointer, at the parameter the driver gave (not an unknown layout)";
    EXPECT_EQ(arg.address, std::stoll(printed["argument"], nullptr, 16));
    ++arguments;
  }
  EXPECT_EQ(arguments, 2);
}

}  // namespace
}  // namespace collector_test
