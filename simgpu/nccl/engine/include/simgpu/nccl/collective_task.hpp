// One rank's part of one collective, in steps through the communicator's staging buffers
// (segment_layout.hpp). Every step, every rank checks that all ranks called the same
// collective (kind, count, type, operator, root); a mismatch fails on every rank with
// ncclInvalidUsage and a message that names the ranks and what each called.
#pragma once

#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/reduction.hpp"
#include "simgpu/nccl/task.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace simgpu::nccl {

struct CollectiveArgs {
  CollKind kind = CollKind::AllReduce;
  ncclDataType_t datatype = ncclFloat32;
  RedOp op = RedOp::Sum;
  // ncclRedOpCreatePreMulSum: each rank multiplies its own input by its scalar, then Sum.
  // The scalar is read from scalar_device when the collective runs if that is set
  // (ncclScalarDevice), else it is scalar_value (ncclScalarHostImmediate).
  bool premul = false;
  std::array<unsigned char, 8> scalar_value{};
  const void* scalar_device = nullptr;
  int root = -1;  // rooted kinds only
  // The count argument of the NCCL call: per rank for AllGather (sendcount) and
  // ReduceScatter (recvcount), per peer for AlltoAll, Gather and Scatter. Never 0 (NCCL
  // skips empty collectives before they reach a stream).
  std::size_t count = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::int64_t arrival_ns = 0;  // when this rank's collective began (model time)
  int channels = 0;             // NCCL channels it runs on (cost_model.hpp); 0: the link's full bandwidth
};

class CollectiveTask final : public Task {
 public:
  CollectiveTask(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost);

  Status step(Progress* progress) override;
  Endpoint& endpoint() const override { return endpoint_; }
  void awaitedRanks(std::vector<int>* ranks) const override;
  std::string describe() const override;
  void appendTiming(std::vector<TaskTiming>* timings) const override;

 private:
  bool canPost() const;
  bool canConsume() const;
  bool allReduced() const;
  bool splitStep() const;
  void post();
  Status consume();
  void reduceOwnSlice();
  void gatherSlices();
  void finishStep();
  Status checkCallsMatch(std::uint64_t step) const;
  void stage(const char* src, char* dst, std::size_t elements) const;
  void reduce(const char* const* inputs, char* out, std::size_t elements) const;

  Endpoint& endpoint_;
  CollectiveArgs args_;
  const CostParams& cost_;
  CollDesc desc_;
  std::size_t element_size_;
  std::size_t elements_per_step_;  // per segment for the per-peer kinds
  std::uint64_t nsteps_;
  std::uint64_t first_step_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t posted_ = 0;
  std::uint64_t consumed_ = 0;
  bool slice_reduced_ = false;  // the step being consumed is split and this rank's slice is done
  bool started_ = false;
  std::int64_t last_arrival_ns_ = 0;
  std::vector<const char*> inputs_;
};

CollDesc collDescOf(const CollectiveArgs& args);  // what ranks compare
std::string describeCall(const CollDesc& desc);  // "AllReduce(count=1024, float32, sum)"

}  // namespace simgpu::nccl
