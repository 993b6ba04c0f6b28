#include "trainer.hpp"

#include "dp_trainer/reference.hpp"

#include "sample_common/device.hpp"
#include "sample_common/nvtx_range.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <numeric>
#include <thread>
#include <utility>

namespace dp_trainer {
namespace {

using sample_common::NvtxRange;

ModelledCost modelledCost(const LlmConfig& config) {
  return {static_cast<int>(config.tokens()), config.hidden, static_cast<int>(config.blockWidth())};
}

template <class Buffer, std::size_t... I>
std::array<Buffer, sizeof...(I)> buffers(std::size_t count, std::index_sequence<I...>) {
  return {((void)I, Buffer(count))...};
}

template <std::size_t... I>
std::array<Event, sizeof...(I)> events(unsigned flags, std::index_sequence<I...>) {
  return {((void)I, Event(flags))...};
}

void printLine(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

Trainer::Trainer(const Options& options, const Membership& membership)
    : options_(options),
      membership_(membership),
      cost_(modelledCost(options.config)),
      buckets_(planBuckets(options.shape, static_cast<double>(options.config.gradientBytesPerLayer()),
                           options.bucketBytes())),
      device_(sample_common::selectDevice(membership.local_rank)),
      params_(options.shape.paramCount()),
      grads_(options.shape.paramCount()),
      outs_(options.shape.activationCount() * static_cast<std::size_t>(options.shape.layers + 1)),
      acts_(options.shape.activationCount() * static_cast<std::size_t>(options.shape.layers)),
      targets_(options.shape.activationCount()),
      loss_(1),
      grad_flow_{DeviceBuffer<float>(options.shape.activationCount()),
                 DeviceBuffer<float>(options.shape.activationCount())},
      host_inputs_(buffers<PinnedBuffer<float>>(options.shape.activationCount(), std::make_index_sequence<kSlots>())),
      host_targets_(buffers<PinnedBuffer<float>>(options.shape.activationCount(), std::make_index_sequence<kSlots>())),
      host_loss_(buffers<PinnedBuffer<float>>(1, std::make_index_sequence<kSlots>())),
      host_grads_(buffers<PinnedBuffer<float>>(options.shape.paramCount(), std::make_index_sequence<kSlots>())),
      step_start_(events(cudaEventDefault, std::make_index_sequence<kSlots>())),
      check_done_(events(cudaEventDisableTiming, std::make_index_sequence<kSlots>())),
      mirror_params_(initialParams(options.shape, options.seed)) {
  for (const auto& [flag, rank] : {std::pair{"--stall-rank", options.faults.stall_rank},
                                   std::pair{"--exit-rank", options.faults.exit_rank},
                                   std::pair{"--diverge-rank", options.faults.diverge_rank}}) {
    if (rank >= membership.world_size) {
      throw std::runtime_error(fmt::format("{} {} is not a rank of this {}-rank job", flag, rank, membership.world_size));
    }
  }
  bucket_ready_.reserve(buckets_.size());
  for (std::size_t i = 0; i < buckets_.size(); ++i) bucket_ready_.emplace_back();
  SAMPLE_NCCL(ncclCommInitRank(&comm_, membership_.world_size, membership_.id, membership_.rank));

  // Every rank drew the same initial parameters; rank 0's are broadcast anyway, as DDP does.
  SAMPLE_CUDA(cudaMemcpy(params_.get(), mirror_params_.data(), params_.bytes(), cudaMemcpyHostToDevice));
  ++counts_.memcpys;
  SAMPLE_NCCL(ncclBroadcast(params_.get(), params_.get(), params_.size(), ncclFloat, 0, comm_, compute_.get()));
  ++counts_.collectives;
  SAMPLE_CUDA(cudaStreamSynchronize(compute_.get()));
  if (counts_ != setupOpCounts()) throw std::logic_error("set-up issued other operations than setupOpCounts() says");
}

Trainer::~Trainer() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void Trainer::launched(cudaError_t result, const char* kernel) {
  sample_common::checkCuda(result, kernel, __FILE__, __LINE__);
  ++counts_.kernels;
}

void Trainer::copyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  SAMPLE_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  ++counts_.memcpys;
}

void Trainer::allReduce(float* data, std::size_t count, cudaStream_t stream) {
  SAMPLE_NCCL(ncclAllReduce(data, data, count, ncclFloat, ncclAvg, comm_, stream));
  ++counts_.collectives;
}

RunSummary Trainer::run(Watchdog& watchdog) {
  RunSummary summary;
  summary.options = options_;
  summary.rank = membership_.rank;
  summary.ranks = membership_.world_size;
  summary.bootstrap = membership_.kind;
  const OpCounts per_iteration = iterationOpCounts(options_.shape, options_.mode, buckets_.size());
  summary.buckets = static_cast<int>(per_iteration.collectives);
  summary.setup = counts_;
  summary.per_iteration = per_iteration;
  if (membership_.rank == 0) printLine(configLine(summary));

  const auto report = [&](const IterationRecord& record) {
    summary.iterations.push_back(record);
    if (membership_.rank == 0) {
      printLine(iterationLine(record));
      printLine(checksumLine(record));
    }
  };
  const int total = options_.totalIterations();
  for (int n = 0; n < total; ++n) {
    const NvtxRange step(fmt::format("ProfilerStep#{}", n).c_str());
    const OpCounts before = counts_;
    issueIteration(n);
    if (counts_ - before != per_iteration) {
      throw std::logic_error(fmt::format("iteration {} issued other operations than iterationOpCounts() says", n));
    }
    // The host stays ahead: it checks an earlier iteration while the device runs the later ones.
    if (n >= kHostLag) {
      watchdog.progress(fmt::format("iteration {} to complete", n - kHostLag));
      report(finishIteration(n - kHostLag));
    }
  }
  // The last iteration ends where the next one would start.
  SAMPLE_CUDA(cudaEventRecord(step_start_[slot(total)].get(), compute_.get()));
  for (int n = std::max(0, total - kHostLag); n < total; ++n) {
    watchdog.progress(fmt::format("iteration {} to complete", n));
    report(finishIteration(n));
  }
  SAMPLE_CUDA(cudaDeviceSynchronize());
  summary.total = counts_;
  return summary;
}

void Trainer::issueIteration(int iteration) {
  SAMPLE_CUDA(cudaEventRecord(step_start_[slot(iteration)].get(), compute_.get()));
  {
    const NvtxRange range("forward");
    issueForward(iteration);
  }
  {
    const NvtxRange range("backward");
    issueBackward(iteration);
  }
  makeFaults(iteration);
  {
    const NvtxRange range("gradient_sync");
    issueGradientSync(iteration);
  }
  {
    const NvtxRange range("optimizer");
    issueOptimizer();
  }
  issueCheckCopy(iteration);
}

void Trainer::issueForward(int iteration) {
  const ModelShape& shape = options_.shape;
  const std::size_t s = slot(iteration);
  const Batch batch = makeBatch(shape, options_.seed, membership_.rank, iteration);
  std::memcpy(host_inputs_[s].get(), batch.inputs.data(), host_inputs_[s].bytes());
  std::memcpy(host_targets_[s].get(), batch.targets.data(), host_targets_[s].bytes());
  copyAsync(blockOutput(0), host_inputs_[s].get(), host_inputs_[s].bytes(), cudaMemcpyHostToDevice, compute_.get());
  copyAsync(targets_.get(), host_targets_[s].get(), targets_.bytes(), cudaMemcpyHostToDevice, compute_.get());
  for (int l = 0; l < shape.layers; ++l) {
    launched(launchLayerForward(compute_.get(), blockOutput(l + 1), blockActivation(l), blockOutput(l), layerParams(l),
                                shape.batch, shape.width, cost_),
             "layer_forward");
  }
  // The gradient of block l's output lives in grad_flow_[l % 2].
  const int last = shape.layers - 1;
  launched(launchMseLoss(compute_.get(), grad_flow_[static_cast<std::size_t>(last % 2)].get(), loss_.get(),
                         blockOutput(shape.layers), targets_.get(), shape.batch, shape.width, cost_),
           "mse_loss");
  copyAsync(host_loss_[s].get(), loss_.get(), loss_.bytes(), cudaMemcpyDeviceToHost, compute_.get());
}

void Trainer::issueBackward(int iteration) {
  const ModelShape& shape = options_.shape;
  // zero_grad: the previous iteration's check copy must have read the gradients first.
  if (iteration > 0) {
    SAMPLE_CUDA(cudaStreamWaitEvent(compute_.get(), check_done_[slot(iteration - 1)].get(), 0));
  }
  SAMPLE_CUDA(cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), compute_.get()));
  ++counts_.memsets;

  std::size_t next_bucket = 0;
  for (int l = shape.layers - 1; l >= 0; --l) {
    const float* grad_out = grad_flow_[static_cast<std::size_t>(l % 2)].get();
    launched(launchLayerBackwardParams(compute_.get(), layerGrads(l), grad_out, blockActivation(l), blockOutput(l),
                                       shape.batch, shape.width, cost_),
             "layer_backward_params");
    if (options_.mode == SyncMode::Overlap && buckets_[next_bucket].first_layer == l) {
      issueBucket(buckets_[next_bucket], next_bucket);
      ++next_bucket;
    }
    if (l > 0) {
      launched(launchLayerBackwardInput(compute_.get(), grad_flow_[static_cast<std::size_t>((l - 1) % 2)].get(),
                                        grad_out, blockActivation(l), layerParams(l), shape.batch, shape.width, cost_),
               "layer_backward_input");
    }
  }
}

void Trainer::issueBucket(const Bucket& bucket, std::size_t index) {
  // As DDP's reducer: the bucket's last gradient is ready -> all-reduce it on the side stream.
  const NvtxRange range("gradient_sync");
  cudaEvent_t ready = bucket_ready_[index].get();
  SAMPLE_CUDA(cudaEventRecord(ready, compute_.get()));
  SAMPLE_CUDA(cudaStreamWaitEvent(communication_.get(), ready, 0));
  allReduce(grads_.get() + bucket.offset, bucket.count, communication_.get());
}

void Trainer::makeFaults(int iteration) {
  const Faults& f = options_.faults;
  const int rank = membership_.rank;
  if (rank == f.stall_rank && iteration == f.stall_at_step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(f.stall_ms));
  }
  if (rank == f.exit_rank && iteration == f.exit_at_step) sample_common::exitNow(kExitRankExit);
}

void Trainer::issueGradientSync(int iteration) {
  if (options_.mode == SyncMode::Naive) {
    const bool diverge = membership_.rank == options_.faults.diverge_rank && iteration >= options_.faults.diverge_at_step;
    // What many hand-written loops do: each parameter's gradient in turn, on the same stream.
    for (int l = 0; l < options_.shape.layers; ++l) {
      allReduce(layerGrads(l), options_.shape.paramsPerLayer(), compute_.get());
      if (diverge && l == 0) SAMPLE_CUDA(cudaStreamSynchronize(compute_.get()));
    }
    return;
  }
  // The buckets were issued during backward; the update waits for all of them.
  SAMPLE_CUDA(cudaEventRecord(communication_done_.get(), communication_.get()));
  SAMPLE_CUDA(cudaStreamWaitEvent(compute_.get(), communication_done_.get(), 0));
}

void Trainer::issueOptimizer() {
  for (int l = 0; l < options_.shape.layers; ++l) {
    launched(launchSgdUpdate(compute_.get(), layerParams(l), layerGrads(l),
                             static_cast<int>(options_.shape.paramsPerLayer()), options_.lr, cost_),
             "sgd_update");
  }
}

void Trainer::issueCheckCopy(int iteration) {
  // On its own stream, so that the next iteration's forward does not queue behind it.
  const std::size_t s = slot(iteration);
  SAMPLE_CUDA(cudaEventRecord(optimizer_done_.get(), compute_.get()));
  SAMPLE_CUDA(cudaStreamWaitEvent(check_.get(), optimizer_done_.get(), 0));
  copyAsync(host_grads_[s].get(), grads_.get(), grads_.bytes(), cudaMemcpyDeviceToHost, check_.get());
  SAMPLE_CUDA(cudaEventRecord(check_done_[s].get(), check_.get()));
}

IterationRecord Trainer::finishIteration(int iteration) {
  const ModelShape& shape = options_.shape;
  const std::size_t s = slot(iteration);
  const std::size_t next = slot(iteration + 1);
  SAMPLE_CUDA(cudaEventSynchronize(check_done_[s].get()));
  SAMPLE_CUDA(cudaEventSynchronize(step_start_[next].get()));
  IterationRecord record;
  record.iteration = iteration;
  record.warmup = iteration < options_.warmup;
  float elapsed_ms = 0.0f;
  SAMPLE_CUDA(cudaEventElapsedTime(&elapsed_ms, step_start_[s].get(), step_start_[next].get()));
  record.time_ms = elapsed_ms;

  const ExpectedStep expected =
      expectedStep(shape, mirror_params_, options_.seed, membership_.world_size, iteration);
  const std::span<const float> grads(host_grads_[s].get(), shape.paramCount());
  const double loss = host_loss_[s].get()[0];
  if (const CheckResult c = checkLoss(loss, expected.losses[static_cast<std::size_t>(membership_.rank)]); !c.ok) {
    throw VerificationError(fmt::format("iteration {}: rank {}'s {}", iteration, membership_.rank, c.message));
  }
  if (const CheckResult c = checkGradients(shape, grads, expected.grads); !c.ok) {
    throw VerificationError(
        fmt::format("iteration {}: the synchronised gradients differ from the reference: {}", iteration, c.message));
  }
  record.checksum = gradientChecksum(grads);
  record.loss = std::accumulate(expected.losses.begin(), expected.losses.end(), 0.0) /
                static_cast<double>(expected.losses.size());
  sgdUpdate(mirror_params_, grads, options_.lr);
  return record;
}

}  // namespace dp_trainer
