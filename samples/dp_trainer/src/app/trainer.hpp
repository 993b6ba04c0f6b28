// The training loop: one rank's model replica on its device, its NCCL communicator, and the
// iterations in the chosen synchronisation mode, each checked against the host reference.
#pragma once

#include "kernels.hpp"

#include "dp_trainer/buckets.hpp"
#include "dp_trainer/op_counts.hpp"
#include "dp_trainer/options.hpp"
#include "dp_trainer/report.hpp"
#include "sample_common/bootstrap.hpp"
#include "sample_common/cuda_resources.hpp"
#include "sample_common/verification_error.hpp"
#include "sample_common/watchdog.hpp"

#include <nccl.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace dp_trainer {

using sample_common::DeviceBuffer;
using sample_common::Event;
using sample_common::Membership;
using sample_common::PinnedBuffer;
using sample_common::Stream;
using sample_common::Watchdog;

// Thrown when the synchronised gradients (or the loss) differ from the host's recomputation.
using sample_common::VerificationError;

// The status of a rank that --exit-rank ends.
inline constexpr int kExitRankExit = 5;

class Trainer {
 public:
  // The host checks iteration n after issuing iteration n + kHostLag, so that it can fall
  // behind by up to kHostLag - 1 iterations (a busy machine) before the device waits for it.
  static constexpr int kHostLag = 2;
  static constexpr std::size_t kSlots = kHostLag + 1;  // host staging per iteration in flight

  // Picks the device (local rank modulo device count), creates the communicator, uploads the
  // initial parameters and broadcasts rank 0's.
  Trainer(const Options& options, const Membership& membership);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  ~Trainer();

  // Runs warm-up and measured iterations; rank 0 prints a line per iteration as it is
  // verified. Throws VerificationError on a mismatch, std::runtime_error on CUDA/NCCL errors.
  RunSummary run(Watchdog& watchdog);

  int device() const { return device_; }

 private:
  // Every iteration's work goes through these, which count what is issued.
  void launched(cudaError_t result, const char* kernel);
  void copyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
  void allReduce(float* data, std::size_t count, cudaStream_t stream);

  void issueIteration(int iteration);
  void issueForward(int iteration);
  void issueBackward(int iteration);
  void issueBucket(const Bucket& bucket, std::size_t index);
  // --stall-rank, --exit-rank (options.hpp, Faults), after the backward of `iteration`.
  void makeFaults(int iteration);
  void issueGradientSync(int iteration);
  void issueOptimizer();
  void issueCheckCopy(int iteration);
  // Waits for `iteration`'s results and checks them against the reference; updates the
  // host's mirror of the parameters.
  IterationRecord finishIteration(int iteration);

  static std::size_t slot(int iteration) { return static_cast<std::size_t>(iteration) % kSlots; }
  float* layerParams(int layer) const { return params_.get() + options_.shape.layerOffset(layer); }
  float* layerGrads(int layer) const { return grads_.get() + options_.shape.layerOffset(layer); }
  // Block l's input (l = 0: the batch) and output (l + 1); block l's tanh.
  float* blockOutput(int l) const { return outs_.get() + options_.shape.activationCount() * static_cast<std::size_t>(l); }
  float* blockActivation(int l) const {
    return acts_.get() + options_.shape.activationCount() * static_cast<std::size_t>(l);
  }

  // Declaration order is construction order: the device is selected before anything is
  // allocated on it.
  Options options_;
  Membership membership_;
  ModelledCost cost_;
  std::vector<Bucket> buckets_;
  int device_;

  Stream compute_, communication_, check_;
  DeviceBuffer<float> params_, grads_, outs_, acts_, targets_, loss_;
  std::array<DeviceBuffer<float>, 2> grad_flow_;  // gradient w.r.t. a block's output, ping-pong
  // Host staging: iteration n uses slot n % kSlots, reused once iteration n is verified.
  std::array<PinnedBuffer<float>, kSlots> host_inputs_, host_targets_, host_loss_, host_grads_;
  std::array<Event, kSlots> step_start_;  // timing events: iteration n starts at step_start_[slot]
  std::array<Event, kSlots> check_done_;  // iteration n's gradients are in host_grads_[slot]
  Event optimizer_done_, communication_done_;
  std::vector<Event> bucket_ready_;
  ncclComm_t comm_ = nullptr;

  std::vector<float> mirror_params_;  // bitwise the device's parameters
  OpCounts counts_;
};

}  // namespace dp_trainer
