#pragma once

namespace simgpu::detail {

// cudaDeviceReset: frees every device and managed allocation of the device.
void freeDeviceAllocations(int device);

}  // namespace simgpu::detail
