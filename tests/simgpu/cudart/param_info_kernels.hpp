#pragma once

#include <cstdint>

struct ParamInfoBig {
  std::uint64_t words[512];  // 4 KB, 8-byte aligned
};

// The host stubs of: with_struct(int, ParamInfoBig, float*), extern "C" plain_c(const float*,
// int, float*), scaled<double>(double*, double, char).
const void* withStructKernel();
const void* plainCKernel();
const void* scaledKernel();
