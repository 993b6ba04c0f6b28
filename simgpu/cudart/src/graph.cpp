#include "graph.hpp"

#include <cstring>

namespace simgpu::cudart {

GraphRegistry& graphRegistry() {
  static GraphRegistry* const r = new GraphRegistry();  // graphs may be destroyed by late static destructors
  return *r;
}

cudaGraph_t adoptGraph(std::unique_ptr<Graph> graph) {
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  Graph* g = graph.release();
  r.graphs.insert(g);
  return reinterpret_cast<cudaGraph_t>(g);
}

Replay kernelReplay(const KernelInfo& kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes) {
  std::vector<std::byte> bytes(kernel.params_bytes);
  for (std::size_t i = 0; i < kernel.params.size(); ++i)
    std::memcpy(bytes.data() + kernel.params[i].offset, args[i], kernel.params[i].size);
  const KernelInfo* k = &kernel;  // registry entries are never freed
  return [k, grid, block, shared_bytes, bytes](cudaStream_t s) {
    std::vector<void*> pointers(k->params.size());
    for (std::size_t i = 0; i < k->params.size(); ++i)
      pointers[i] = const_cast<std::byte*>(bytes.data()) + k->params[i].offset;
    return launchKernel(*k, grid, block, pointers.data(), shared_bytes, s);
  };
}

}  // namespace simgpu::cudart
