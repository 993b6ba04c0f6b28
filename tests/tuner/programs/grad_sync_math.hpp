// The values grad_sync's kernels compute, shared by the kernels, their CPU implementations
// for simgpu and the host's check: every rank's gradient element is a known float, so the
// all-reduced value is known exactly (summed in rank order, as simgpu's NCCL reduces).
#pragma once

#ifdef __CUDACC__
#define GRAD_SYNC_HD __host__ __device__
#else
#define GRAD_SYNC_HD
#endif

namespace grad_sync {

GRAD_SYNC_HD inline float gradientValue(int rank, int iteration, int layer, int i) {
  const float base = 0.5f * static_cast<float>(rank + 1) + 0.25f * static_cast<float>(iteration) +
                     0.125f * static_cast<float>(layer);
  return base * (1.0f + 0.01f * static_cast<float>(i % 7));
}

// What an update does with a reduced gradient element.
GRAD_SYNC_HD inline float accumulate(float acc, float grad) { return acc + 0.001f * grad; }

}  // namespace grad_sync
