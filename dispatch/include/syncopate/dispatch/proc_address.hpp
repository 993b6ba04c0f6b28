// Driver entry points handed out at run time (cuGetProcAddress, cudaGetDriverEntryPoint*):
// libraries such as cuBLAS and NCCL reach the driver this way, so an interposer known by
// symbol name alone would miss their launches. After the real lookup succeeded, the returned
// pointer is replaced by the preload library's interposer for that function when, and only
// when, it is exactly the real function the interposer forwards to (same symbol, same ABI
// version, same per-thread-stream flavour). Anything else is handed out untouched and counted,
// so the program never gets a wrapper with the wrong signature.
#pragma once

#include <cstdint>

namespace syncopate::preload {

void handOutDriverInterposer(const char* symbol, void** function) noexcept;

// The preload library's interposer exported under exactly this name (cuLaunchKernel,
// cuMemcpyHtoDAsync_v2, cuGetProcAddress_v2), or null where it exports none (dlsym_export.cpp).
void* driverInterposerNamed(const char* exported_name) noexcept;

// How many entry points were requested for a function the library interposes but could not be
// handed out as the interposer (their ABI version differed, or another tool had wrapped them).
std::uint64_t untracedDriverEntryPoints() noexcept;

}  // namespace syncopate::preload
