#pragma once

namespace simgpu::detail {

// cudaDeviceReset: frees every device allocation of the device.
void freeDeviceAllocations(int device);

}  // namespace simgpu::detail
