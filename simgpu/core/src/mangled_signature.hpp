#pragma once

#include <simgpu/core/kernels.hpp>

namespace simgpu::detail {

KernelSignature describeMangledName(const std::string& mangled);

}  // namespace simgpu::detail
