// The devices' limits (cudaDeviceSetLimit/GetLimit, limit_api.cpp).
#pragma once

namespace simgpu::cudart {

// cudaDeviceReset: the device's limits are their defaults again.
void resetLimits(int device);

}  // namespace simgpu::cudart
