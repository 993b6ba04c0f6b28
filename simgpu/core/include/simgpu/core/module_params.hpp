// Kernel parameter layouts as the driver learns them: from the module's compiled code, not from
// kernel names. A fat binary (what nvcc embeds and __cudaRegisterFatBinary receives) holds a
// cubin per architecture; each kernel's ".nv.info.<name>" section lists, per parameter, its
// ordinal, offset and size (EIATTR_KPARAM_INFO). That is where cuFuncGetParamInfo's answers come
// from on a GPU, for every kernel: extern "C" ones and parameters of class type included.
#pragma once

#include <simgpu/core/export.hpp>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace simgpu {

struct ParamSpan {
  std::size_t offset = 0;
  std::size_t size = 0;
};

// By mangled kernel name, each kernel's parameters in order.
using ModuleParamLayouts = std::unordered_map<std::string, std::vector<ParamSpan>>;

// Reads the layouts of a fat binary wrapper (__fatBinC_Wrapper_t). A cubin that is compressed,
// or anything that does not parse, contributes nothing: its kernels keep what their names say.
SIMGPU_API ModuleParamLayouts readModuleParamLayouts(const void* fat_binary_wrapper);

// The same from one cubin (an ELF image) of `size` bytes; for tests and readModuleParamLayouts.
SIMGPU_API ModuleParamLayouts readCubinParamLayouts(const unsigned char* cubin, std::size_t size);

}  // namespace simgpu
