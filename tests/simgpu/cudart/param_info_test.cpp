// cudaFuncGetParamInfo as a driver from CUDA 12.4 on answers it: every parameter's offset and
// size, from the module nvcc compiled (whatever the kernel's name says), by stub, cudaKernel_t
// or cudaFunction_t, and cudaErrorInvalidValue past the last one.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>
#include <vector>

#include "param_info_kernels.hpp"

namespace {

using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

Spans layoutOf(const void* func) {
  Spans spans;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    const cudaError_t answer = cudaFuncGetParamInfo(func, i, &offset, &size);
    if (answer == cudaErrorInvalidValue) break;
    EXPECT_EQ(answer, cudaSuccess) << "parameter " << i;
    if (answer != cudaSuccess || i > 16) break;
    spans.emplace_back(offset, size);
  }
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue) << "the refusal past the last is the last error";
  return spans;
}

TEST(ParamInfo, EveryKernelsLayoutComesFromItsModule) {
  EXPECT_EQ(layoutOf(withStructKernel()), (Spans{{0, 4}, {8, sizeof(ParamInfoBig)}, {8 + sizeof(ParamInfoBig), 8}}));
  EXPECT_EQ(layoutOf(plainCKernel()), (Spans{{0, 8}, {8, 4}, {16, 8}})) << "extern \"C\": the name says nothing";
  EXPECT_EQ(layoutOf(scaledKernel()), (Spans{{0, 8}, {8, 8}, {16, 1}}));
}

TEST(ParamInfo, KernelHandlesAndFunctionsAnswerAlike) {
  cudaKernel_t kernel = nullptr;
  ASSERT_EQ(cudaGetKernel(&kernel, withStructKernel()), cudaSuccess);
  EXPECT_EQ(layoutOf(kernel), layoutOf(withStructKernel()));
  cudaFunction_t function = nullptr;
  ASSERT_EQ(cudaGetFuncBySymbol(&function, plainCKernel()), cudaSuccess);
  EXPECT_EQ(layoutOf(function), layoutOf(plainCKernel()));
  const char* name = nullptr;
  ASSERT_EQ(cudaFuncGetName(&name, plainCKernel()), cudaSuccess);
  EXPECT_STREQ(name, "plain_c");
  ASSERT_EQ(cudaFuncGetName(&name, scaledKernel()), cudaSuccess);
  EXPECT_STREQ(name, "_Z6scaledIdEvPT_S0_c");
}

TEST(ParamInfo, WhatIsNoKernelIsRefused) {
  int not_a_kernel = 0;
  std::size_t offset = 0, size = 0;
  EXPECT_EQ(cudaFuncGetParamInfo(&not_a_kernel, 0, &offset, &size), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaFuncGetParamInfo(withStructKernel(), 0, nullptr, &size), cudaErrorInvalidValue);
  cudaFunction_t function = nullptr;
  EXPECT_EQ(cudaGetFuncBySymbol(&function, &not_a_kernel), cudaErrorInvalidDeviceFunction);
  (void)cudaGetLastError();
}

}  // namespace
