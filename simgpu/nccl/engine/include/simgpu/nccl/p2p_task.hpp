// One rank's side of a send or a receive, through the queue of the ordered pair of ranks
// (segment_layout.hpp). The k-th send from a to b matches the k-th receive on b from a, as
// in NCCL; the receiver checks that count and type agree and fails the communicator with
// ncclInvalidUsage, naming both ranks, when they do not. A send completes once the receiver
// has taken its last chunk (as a GPU send kernel waits for its peer).
#pragma once

#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/task.hpp"

#include <cstddef>
#include <cstdint>

namespace simgpu::nccl {

struct P2pArgs {
  bool is_send = true;
  int peer = 0;
  const void* send = nullptr;  // is_send
  void* recv = nullptr;        // !is_send
  std::size_t count = 0;
  ncclDataType_t datatype = ncclFloat32;
  std::int64_t arrival_ns = 0;  // when this rank's operation began (model time)
};

class P2pTask final : public Task {
 public:
  P2pTask(Endpoint& endpoint, const P2pArgs& args, const CostParams& cost);

  Status step(Progress* progress) override;
  Endpoint& endpoint() const override { return endpoint_; }
  void awaitedRanks(std::vector<int>* ranks) const override;
  std::string describe() const override;
  void appendTiming(std::vector<TaskTiming>* timings) const override;

 private:
  Status stepSend(bool* advanced);
  Status stepRecv(bool* advanced);
  bool done() const;

  Endpoint& endpoint_;
  P2pArgs args_;
  const CostParams& cost_;
  std::size_t bytes_;
  std::uint64_t nchunks_;
  std::uint64_t message_ = 0;
  std::uint64_t first_ = 0;  // queue position of this message's first chunk
  std::uint64_t moved_ = 0;  // chunks posted (send) or consumed (recv)
  bool started_ = false;
  bool acknowledged_ = false;  // send: the receiver took the last chunk
  std::int64_t peer_arrival_ns_ = 0;
};

}  // namespace simgpu::nccl
