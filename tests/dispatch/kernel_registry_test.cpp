// The registry's count of changes, which the recorder's per-thread cache of launches relies on
// (collector/src/recorder/op_recording.cpp, launchedShape): every change to what a launch names
// is counted, and nothing else is.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "syncopate/dispatch/kernel_registry.hpp"

namespace syncopate::preload {
namespace {

// Addresses no test program's module registers (the registry's maps are the process's own).
const void* stub(std::uintptr_t n) { return reinterpret_cast<const void*>(0x5eed00000000 + n * 16); }
cudaKernel_t handle(std::uintptr_t n) { return reinterpret_cast<cudaKernel_t>(0x6eed00000000 + n * 16); }

TEST(KernelRegistry, EveryChangeToWhatALaunchNamesIsCountedAndNothingElse) {
  KernelRegistry& registry = kernelRegistry();
  const std::uint32_t before = registry.changes();
  registry.registerHostFunction(stub(1), "_Z5firstv");
  EXPECT_EQ(registry.changes(), before + 1) << "a stub registered";
  ASSERT_NE(registry.findLaunched(stub(1)), nullptr);
  EXPECT_EQ(std::string(registry.findLaunched(stub(1))->displayName), "first()");
  EXPECT_EQ(registry.changes(), before + 1) << "a lookup changes nothing";

  registry.registerKernelHandle(handle(1), stub(1));
  EXPECT_EQ(registry.changes(), before + 2) << "a handle for a registered stub";
  registry.registerKernelHandle(handle(2), stub(2));
  EXPECT_EQ(registry.changes(), before + 2) << "a handle for a stub nobody registered is not kept";
  EXPECT_EQ(registry.findLaunched(handle(2)), nullptr);

  // A module loaded where an unloaded one was: the same stub now names another kernel, and a
  // cache keyed by the stub must not answer with the first.
  registry.registerHostFunction(stub(1), "_Z6secondv");
  EXPECT_EQ(registry.changes(), before + 3);
  EXPECT_EQ(std::string(registry.findLaunched(stub(1))->displayName), "second()");
}

}  // namespace
}  // namespace syncopate::preload
