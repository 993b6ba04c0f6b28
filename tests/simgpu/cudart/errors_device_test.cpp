// Devices, last-error rules (sticky and not), error names and strings, APIs outside the
// simulated subset, driver entry points, versions, and bad profiles.
#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cuda_runtime_api.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using ::testing::HasSubstr;

TEST(Device, CountSelectionPropertiesAndAttributes) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, simgpu::profile().devices_per_process);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(cudaSetDevice(count), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);

  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_STREQ(prop.name, simgpu::profile().device.name.c_str());
  EXPECT_EQ(prop.multiProcessorCount, simgpu::profile().device.sm_count);
  EXPECT_EQ(prop.totalGlobalMem, simgpu::profile().device.memory_bytes);
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.warpSize, 32);
  int value = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_EQ(value, prop.multiProcessorCount);
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  EXPECT_EQ(value, 9);
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, count), cudaErrorInvalidDevice);
  char bus[32];
  ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0), cudaSuccess);
  EXPECT_EQ(std::strlen(bus), 12u);
  cudaGetLastError();
}

TEST(Device, VersionsAndDriverEntryPoints) {
  int runtime = 0, driver = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  ASSERT_EQ(cudaDriverGetVersion(&driver), cudaSuccess);
  EXPECT_EQ(runtime, CUDART_VERSION);
  EXPECT_GE(driver, runtime);
  void* fn = reinterpret_cast<void*>(1);
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 13000, cudaEnableDefault, &status),
            cudaErrorNotSupported);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("cudaGetDriverEntryPoint(cuLaunchKernel)"));
  EXPECT_EQ(fn, nullptr);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
}

TEST(Errors, LastErrorIsRecordedPerThreadReturnedAndCleared) {
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(nullptr, 16), cudaErrorInvalidValue);
  ASSERT_EQ(cudaMalloc(&p, 16), cudaSuccess);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue) << "a success does not clear it";
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue) << "peeking does not clear it";
  std::thread other([] { EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "last errors are per thread"; });
  other.join();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "getting it clears it";
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

TEST(Errors, StickyErrorsPersistUntilReset) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  simgpu::StreamOp faulty;
  faulty.name = "faulty_kernel";
  faulty.body = [](const simgpu::OpContext&) {
    simgpu::OpTiming t;
    t.duration_ns = 1000;
    t.error = cudaErrorIllegalAddress;  // as a kernel that wrote out of bounds
    return t;
  };
  ASSERT_EQ(simgpu::enqueue(s, std::move(faulty)), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress) << "sticky: not cleared";
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorIllegalAddress) << "every call fails until reset";
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorIllegalAddress);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  // The thread's last error is the runtime's, not the device's: it is reported once more, and
  // no longer sticks.
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&p, 16), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorInvalidResourceHandle) << "reset destroyed the stream";
  cudaGetLastError();
  ASSERT_EQ(cudaFree(p), cudaSuccess);
}

TEST(Errors, NamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorStreamCaptureUnsupported), "cudaErrorStreamCaptureUnsupported");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorNotReady), "device not ready");
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(123456)), "unrecognized error code");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(123456)), "unrecognized error code");
}

TEST(Errors, ApisOutsideTheSubsetSayWhichAndFail) {
  ::testing::internal::CaptureStderr();
  cudaPitchedPtr pitched{};
  EXPECT_EQ(cudaMalloc3D(&pitched, cudaExtent{64, 4, 4}), cudaErrorNotSupported);
  EXPECT_EQ(cudaMalloc3D(&pitched, cudaExtent{64, 4, 4}), cudaErrorNotSupported);
  cudaArray_t array = nullptr;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  EXPECT_EQ(desc.x, 32);
  EXPECT_EQ(cudaMallocArray(&array, &desc, 4, 4, 0), cudaErrorNotSupported);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "simgpu: cudaMalloc3D is not simulated\n"
            "simgpu: cudaMallocArray is not simulated\n")
      << "one message per API, printed once";
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotSupported);
}

TEST(Errors, BadProfileFailsEveryCallWithInitializationError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("SIMGPU_PROFILE", SIMGPU_BAD_PROFILE, 1);
        int count = 0;
        void* p = nullptr;
        cudaStream_t s = nullptr;
        const bool all_fail = cudaGetDeviceCount(&count) == cudaErrorInitializationError &&
                              cudaMalloc(&p, 16) == cudaErrorInitializationError &&
                              cudaStreamCreate(&s) == cudaErrorInitializationError &&
                              cudaDeviceSynchronize() == cudaErrorInitializationError &&
                              cudaGetLastError() == cudaErrorInitializationError;
        std::exit(all_fail ? 3 : 4);
      },
      ::testing::ExitedWithCode(3),
      "simgpu: profile .*bad_profile.json: field \"copy.h2d_bandwidth\" must be a positive number, got -1");
  EXPECT_EXIT(
      {
        setenv("SIMGPU_PROFILE", "/nonexistent/profile.json", 1);
        int count = 0;
        std::exit(cudaGetDeviceCount(&count) == cudaErrorInitializationError ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "simgpu: profile /nonexistent/profile.json: cannot open the file");
}

}  // namespace
