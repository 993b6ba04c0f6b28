// One rank of the job: its device, streams, caching allocator, model (its parameters and
// gradients separate blocks, in zero1 mode views into flat buckets, in fsdp mode views bound
// while a unit is in use: model_tensors.hpp), communicator and backward thread, and the
// training loop in the chosen synchronisation mode.
#pragma once

#include "autograd_thread.hpp"
#include "device_allocator.hpp"
#include "fully_sharded.hpp"
#include "reducer.hpp"
#include "sgd_step.hpp"
#include "sharded_optimizer.hpp"
#include "step_context.hpp"

#include "framework_trainer/grad_check.hpp"
#include "framework_trainer/report.hpp"
#include "framework_trainer/tensor_lists.hpp"
#include "sample_common/bootstrap.hpp"
#include "sample_common/cuda_resources.hpp"
#include "sample_common/verification_error.hpp"
#include "sample_common/watchdog.hpp"

#include <nccl.h>

#include <optional>
#include <stdexcept>
#include <vector>

namespace framework_trainer {

// Thrown when the synchronised gradients (zero1, fsdp: the updated parameters) differ from the host's
// expectation, or between ranks.
using sample_common::VerificationError;

class Trainer {
 public:
  // Picks the device, creates the communicator, allocates and initialises the parameters and
  // broadcasts rank 0's (as DDP does when it wraps a model).
  Trainer(const Options& options, const sample_common::Membership& membership);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  ~Trainer();

  // Issues every iteration, then waits for them one by one and checks them; rank 0 prints a line
  // per iteration. Throws VerificationError on a mismatch, std::runtime_error on CUDA/NCCL errors.
  RunSummary run(sample_common::Watchdog& watchdog);

  OpCounts setupCounts() const { return setup_counts_; }
  OpCounts iterationCounts() const {
    return iterationOpCounts(options_.config, options_.mode, options_.bucketSizing(), membership_.world_size,
                             options_.gradient_as_bucket_view);
  }
  OpCounts finishCounts() const { return finish_counts_; }
  CachingAllocator::Stats memory() const { return allocator_.stats(); }

 private:
  // DDP's and zero1's buckets, or fsdp's units.
  int buckets() const;
  // What the check hashes and probes: the synchronised gradients, or the updated parameters
  // where no rank holds the whole synchronised gradients (zero1, fsdp).
  Probed checked() const {
    return options_.mode == SyncMode::Zero1 || options_.mode == SyncMode::Fsdp ? Probed::UpdatedParameters
                                                                              : Probed::Gradients;
  }
  UnitHooks& unitHooks() { return fsdp_ ? static_cast<UnitHooks&>(*fsdp_) : whole_model_; }
  void setUpFsdpCheck();
  void initialiseParameters();
  void issueIteration(int iteration);
  void issueOptimizer();
  void issueCheck(int iteration);
  IterationRecord checkIteration(int iteration, ProbeCheck& probes);
  void checkAcrossRanks(const std::vector<IterationRecord>& records);

  // The one-list multi-tensor launches' structs over every tensor of `tensors` (the model's
  // parameters or gradients: initialisation and the check).
  std::vector<TensorListMetadata<1>> tensorLists(const std::vector<float*>& tensors) const;

  // Declaration order is construction order: the device is selected before anything is
  // allocated on it.
  Options options_;
  sample_common::Membership membership_;
  ParamLayout layout_;
  int device_;
  sample_common::Stream compute_, nccl_, check_;
  DeviceAllocator allocator_;
  Issuer issue_;
  ModelTensors tensors_;
  StepContext ctx_;
  ncclComm_t comm_ = nullptr;
  std::optional<Reducer> reducer_;
  std::optional<ShardedOptimizer> sharded_;
  std::optional<FullyShardedUnits> fsdp_;
  UnitHooks whole_model_;  // the modes whose parameters are always there: nothing around a unit
  // fsdp: the check gathers every unit's updated parameters into these (a padded buffer per
  // unit, the model's tensors views into them) on its own stream, with its own communicator so
  // that its collectives never interleave with the step's on the compute stream.
  ncclComm_t check_comm_ = nullptr;
  std::vector<DeviceTensor<float>> check_units_;
  ModelTensors check_tensors_;
  AutogradThread autograd_;

  std::vector<TensorListLaunch> checksum_plan_;
  SgdStep sgd_;  // naive and ddp; zero1 and fsdp step their shards
  std::vector<TensorListMetadata<1>> checksum_lists_;
  std::int64_t chunks_ = 0;
  DeviceTensor<std::int64_t> chunk_base_;
  DeviceTensor<std::uint64_t> chunk_hashes_;
  DeviceTensor<float> probes_;
  sample_common::PinnedBuffer<int> tokens_host_;            // per iteration
  sample_common::PinnedBuffer<std::uint64_t> hashes_host_;  // per iteration
  sample_common::PinnedBuffer<float> probes_host_;          // per iteration
  std::vector<sample_common::Event> step_start_, check_done_;
  sample_common::Event optimizer_done_;
  OpCounts setup_counts_, finish_counts_;
};

}  // namespace framework_trainer
