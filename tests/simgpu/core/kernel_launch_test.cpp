// Kernel costs from a profile, launches through the registry, argument copying and CPU
// implementations found by name. Runs with tests/simgpu/core/kernels_profile.json as its
// profile, set before the first simgpu call.
#include "op_recorder.hpp"

#include <simgpu/core/kernels.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

// The CPU implementation of `void scale(float* x, float a, int n)`, found by simgpu through
// the dynamic symbol table (the test is linked with exported symbols).
extern "C" void simgpu_cpu__Z5scalePffi(void** args) {
  float* x = *static_cast<float**>(args[0]);
  const float a = *static_cast<float*>(args[1]);
  const int n = *static_cast<int*>(args[2]);
  for (int i = 0; i < n; ++i) x[i] *= a;
}

namespace simgpu {
namespace {

using testing::kMs;
using testing::kUs;

const bool profile_set = [] {
  setenv("SIMGPU_PROFILE", SIMGPU_TEST_PROFILE, 1);
  return true;
}();

// Distinct addresses standing for host stubs.
char linear_stub, copy_stub, tiny_stub, unknown_stub, pointer_stub, scale_stub, extern_c_stub, module_stub;

TEST(KernelCost, FromFlopsBytesEfficiencyAndFixedCost) {
  ASSERT_TRUE(profile_set);
  ASSERT_EQ(initialize(), cudaSuccess);
  ASSERT_EQ(profile().name, "kernel-cost-test");
  // linear_fwd(float*, const float*, const float*, int m, int n, int k)
  const KernelInfo& k = registerKernel(&linear_stub, "_Z10linear_fwdPfPKfS1_iii");
  int m = 1024, n = 2048, kk = 512;
  float* p = nullptr;
  void* args[] = {&p, &p, &p, &m, &n, &kk};
  const Profile& prof = profile();
  const double flops = 2.0 * m * n * kk;
  const double bytes = 4.0 * m * kk;
  const double expected = 1000 + std::max(flops / (prof.device.flops * 0.5), bytes / prof.device.memory_bandwidth) * 1e9;
  EXPECT_NEAR(static_cast<double>(kernelDuration(k, args)), expected, 1.0);

  const KernelInfo& c = registerKernel(&copy_stub, "_Z11stream_copyPfPKfm");
  unsigned long count = 1ul << 28;
  void* copy_args[] = {&p, &p, &count};
  EXPECT_NEAR(static_cast<double>(kernelDuration(c, copy_args)), 8.0 * count / prof.device.memory_bandwidth * 1e9, 1.0);
}

TEST(KernelCost, FloorsAndDefaults) {
  const Profile& prof = profile();
  const KernelInfo& tiny = registerKernel(&tiny_stub, "_Z4tinyv");
  EXPECT_EQ(kernelDuration(tiny, nullptr), prof.device.min_kernel_ns) << "fixed_ns below the floor";
  const KernelInfo& unknown = registerKernel(&unknown_stub, "_Z13not_in_profilei");
  int x = 0;
  void* args[] = {&x};
  EXPECT_EQ(kernelDuration(unknown, args), prof.default_kernel_ns);
  // A profile entry naming a pointer parameter cannot be computed: default, with a message.
  const KernelInfo& bad = registerKernel(&pointer_stub, "_Z13pointer_paramPf");
  float* ptr = nullptr;
  void* bad_args[] = {&ptr};
  EXPECT_EQ(kernelDuration(bad, bad_args), prof.default_kernel_ns);
}

TEST(KernelLaunch, CpuImplementationRunsWithArgumentsCopiedAtLaunch) {
  testing::OpRecorder recorder;
  const KernelInfo& k = registerKernel(&scale_stub, "_Z5scalePffi");
  ASSERT_NE(k.cpuImplementation(), nullptr);
  std::vector<float> data(100, 1.0f);
  float* x = data.data();
  float a = 3.0f;
  int n = 100;
  void* args[] = {&x, &a, &n};
  cudaStream_t s = nullptr;
  ASSERT_EQ(createStream(0, cudaStreamNonBlocking, 0, &s), cudaSuccess);
  testing::Gate gate;
  ASSERT_EQ(enqueue(s, gate.op()), cudaSuccess);
  ASSERT_EQ(launchKernel(k, dim3(1), dim3(128), args, 0, s), cudaSuccess);
  a = 100.0f;  // the launch must have taken its own copy
  n = 1;
  gate.open();
  ASSERT_EQ(synchronizeStream(s), cudaSuccess);
  for (float v : data) ASSERT_EQ(v, 3.0f);
  const auto op = recorder.byName("_Z5scalePffi");
  EXPECT_EQ(op.kind, OpKind::Kernel);
  EXPECT_EQ(op.duration(), profile().default_kernel_ns);
  ASSERT_EQ(destroyStream(s), cudaSuccess);
}

TEST(KernelLaunch, CpuImplementationInAModuleLoadedLocally) {
  void* module = dlopen(SIMGPU_TEST_CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(module, nullptr) << dlerror();
  void* stub = dlsym(module, "module_kernel_stub");
  ASSERT_NE(stub, nullptr);
  const KernelInfo& k = registerKernel(stub, "_Z13module_kernelPi");
  ASSERT_NE(k.cpuImplementation(), nullptr) << "found through the module holding the host stub";
  int value = 0;
  int* p = &value;
  void* args[] = {&p};
  ASSERT_EQ(launchKernel(k, dim3(1), dim3(1), args, 0, nullptr), cudaSuccess);
  ASSERT_EQ(synchronizeDevice(0), cudaSuccess);
  EXPECT_EQ(value, 42);
}

TEST(KernelLaunch, InvalidConfigurationsAreRefused) {
  const KernelInfo& k = registerKernel(&tiny_stub, "_Z4tinyv");
  EXPECT_EQ(launchKernel(k, dim3(1), dim3(1025), nullptr, 0, nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchKernel(k, dim3(0), dim3(32), nullptr, 0, nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchKernel(k, dim3(1, 70000), dim3(32), nullptr, 0, nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchKernel(k, dim3(1), dim3(32, 32, 2), nullptr, 0, nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchKernel(k, dim3(1), dim3(32), nullptr, 64 * 1024, nullptr), cudaErrorInvalidValue);
  setMaxDynamicSharedBytes(k, 100 * 1024);
  EXPECT_EQ(launchKernel(k, dim3(1), dim3(32), nullptr, 64 * 1024, nullptr), cudaSuccess);
  EXPECT_EQ(synchronizeDevice(0), cudaSuccess);
}

TEST(KernelLaunch, ParamInfoByHostFunction) {
  registerKernel(&linear_stub, "_Z10linear_fwdPfPKfS1_iii");
  std::size_t offset = 0, size = 0;
  int is_pointer = -1;
  ASSERT_EQ(kernelParamInfo(findKernel(&linear_stub), 2, &offset, &size, &is_pointer), cudaSuccess);
  EXPECT_EQ(offset, 16u);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(is_pointer, 1);
  ASSERT_EQ(kernelParamInfo(findKernel(&linear_stub), 5, &offset, &size, &is_pointer), cudaSuccess);
  EXPECT_EQ(offset, 32u);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(is_pointer, 0);
  EXPECT_EQ(kernelParamInfo(findKernel(&linear_stub), 6, &offset, &size, &is_pointer), cudaErrorInvalidValue);
  registerKernel(&extern_c_stub, "plain_c_kernel");
  EXPECT_EQ(kernelParamInfo(findKernel(&extern_c_stub), 0, &offset, &size, &is_pointer), cudaErrorNotSupported);
  int not_a_kernel = 0;
  EXPECT_EQ(kernelParamInfo(findKernel(&not_a_kernel), 0, &offset, &size, &is_pointer),
            cudaErrorInvalidDeviceFunction);
}

// A module's layouts replace what the name cannot say; what does not parse as a module gives
// nothing, and never a crash.
TEST(KernelLaunch, ModuleLayoutsAndModulesThatDoNotParse) {
  const ModuleParamLayouts module = {{"plain_module_kernel", {{0, 8}, {8, 4096}}}};
  const KernelInfo& k = registerKernel(&module_stub, "plain_module_kernel", &module);
  std::size_t offset = 0, size = 0;
  ASSERT_EQ(kernelParamInfo(&k, 1, &offset, &size, nullptr), cudaSuccess);
  EXPECT_EQ(offset, 8u);
  EXPECT_EQ(size, 4096u);
  EXPECT_EQ(kernelParamInfo(&k, 2, &offset, &size, nullptr), cudaErrorInvalidValue);

  const unsigned char garbage[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  EXPECT_TRUE(readCubinParamLayouts(garbage, sizeof garbage).empty());
  EXPECT_TRUE(readCubinParamLayouts(garbage, 3).empty());
  const unsigned int wrong_wrapper[6] = {0x12345678u, 1u, 0u, 0u, 0u, 0u};
  EXPECT_TRUE(readModuleParamLayouts(wrong_wrapper).empty());
  EXPECT_TRUE(readModuleParamLayouts(nullptr).empty());
}

}  // namespace
}  // namespace simgpu
