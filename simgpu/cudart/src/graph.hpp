// Graphs, whether made by stream capture (capture.cpp) or built node by node (graph_api.cpp),
// and the executable graphs instantiated from them. A node holds how to enqueue its work on a
// stream; an executable graph replays its nodes in the order they were added, which is a
// topological order (a node can only depend on nodes that already exist): every dependency
// is kept, and branches that could overlap run one after the other on the launch stream.
#pragma once

#include <simgpu/core/kernels.hpp>

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace simgpu::cudart {

// Enqueues a node's work on a stream.
using Replay = std::function<cudaError_t(cudaStream_t)>;

struct GraphNode {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  Replay replay;  // none for empty nodes
  std::vector<GraphNode*> dependencies;
};

struct Graph {
  std::vector<std::unique_ptr<GraphNode>> nodes;
};

struct GraphExec {
  std::vector<Replay> ops;
  // Launches (and uploads) of one executable graph are ordered behind its previous launches:
  // an event recorded after each launch, on the device of its stream.
  std::mutex mu;
  cudaEvent_t last_launch = nullptr;
  int last_launch_device = -1;
};

// The graphs and executable graphs the program holds. Every use of one, and of a graph's
// nodes, holds `mu` (none is on a hot path).
struct GraphRegistry {
  std::mutex mu;
  std::set<Graph*> graphs;
  std::set<GraphExec*> execs;
};
GraphRegistry& graphRegistry();

// A graph that capture made becomes the program's.
cudaGraph_t adoptGraph(std::unique_ptr<Graph> graph);

// The launch of `kernel` with its arguments copied now, as a launch copies them. The kernel's
// parameter layout must be known.
Replay kernelReplay(const KernelInfo& kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes);

}  // namespace simgpu::cudart
