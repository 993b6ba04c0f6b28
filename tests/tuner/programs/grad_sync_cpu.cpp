// CPU implementations of grad_sync's kernels for simgpu (docs/simgpu.md, "Kernels: names,
// parameters, CPU implementations"), so that the data is what a GPU would compute.
#include <cstring>

#include "grad_sync_math.hpp"

namespace {
template <class T>
T arg(void** args, int index) {
  T value;
  std::memcpy(&value, args[index], sizeof(T));
  return value;
}
}  // namespace

// produce_gradient(float*, int, int, int, int, int)
extern "C" void simgpu_cpu__Z16produce_gradientPfiiiii(void** args) {
  auto* grad = arg<float*>(args, 0);
  const int count = arg<int>(args, 1);
  for (int i = 0; i < count; ++i) grad[i] = grad_sync::gradientValue(arg<int>(args, 2), arg<int>(args, 3), arg<int>(args, 4), i);
}

// apply_update(float*, const float*, int, int)
extern "C" void simgpu_cpu__Z12apply_updatePfPKfii(void** args) {
  auto* acc = arg<float*>(args, 0);
  const auto* grad = arg<const float*>(args, 1);
  const int count = arg<int>(args, 2);
  for (int i = 0; i < count; ++i) acc[i] = grad_sync::accumulate(acc[i], grad[i]);
}
