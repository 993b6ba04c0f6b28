#include "trainer.hpp"

#include "backward.hpp"
#include "forward.hpp"
#include "kernels.hpp"

#include "sample_common/device.hpp"
#include "sample_common/nvtx_range.hpp"
#include "sample_common/run_lines.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

namespace framework_trainer {
namespace {

using sample_common::Event;
using sample_common::NvtxRange;
using sample_common::PinnedBuffer;

void printLine(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

std::vector<const void*> addresses(const std::vector<float*>& tensors) { return {tensors.begin(), tensors.end()}; }

std::vector<std::int64_t> numels(const ParamLayout& layout) {
  std::vector<std::int64_t> out;
  for (const ParamSpec& p : layout.params()) out.push_back(p.numel());
  return out;
}

// zero1's tensors are views into the buckets its collectives move, and so are ddp's gradients
// with gradient_as_bucket_view; fsdp's are bound to a unit's gathered buffers while it is in use;
// the other modes' are blocks of their own, as a module's.
ModelTensors modelTensors(const Options& options, const ParamLayout& layout, int world_size,
                          DeviceAllocator& allocator, cudaStream_t stream, Issuer& issue) {
  if (options.mode == SyncMode::Fsdp) return ModelTensors::unbound(layout);
  if (options.mode == SyncMode::Ddp && options.gradient_as_bucket_view) {
    return ModelTensors::withGradientsIn(allocator, layout, modelBuckets(layout, options.bucketSizing()), stream);
  }
  if (options.mode != SyncMode::Zero1) return ModelTensors::separate(allocator, layout, stream);
  std::vector<ShardedBucket> buckets = shardBuckets(modelBuckets(layout, options.bucketSizing()), world_size);
  return ModelTensors::inBuckets(allocator, layout, std::move(buckets), stream, issue);
}

std::vector<Event> events(std::size_t count, unsigned flags) {
  std::vector<Event> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.emplace_back(flags);
  return out;
}

}  // namespace

Trainer::Trainer(const Options& options, const sample_common::Membership& membership)
    : options_(options),
      membership_(membership),
      layout_(options.config),
      device_(sample_common::selectDevice(membership.local_rank)),
      allocator_(options.segmentBytes()),
      tensors_(modelTensors(options_, layout_, membership.world_size, allocator_, compute_.get(), issue_)),
      ctx_{options_, layout_, membership.rank, membership.world_size, allocator_, compute_.get(), tensors_, issue_, {}},
      autograd_(device_),
      checksum_plan_(planTensorLists(numels(layout_), 1)),
      tokens_host_(static_cast<std::size_t>(2 * kRealTokens * options.totalIterations())),
      probes_host_(static_cast<std::size_t>(2 * layout_.size() * options.totalIterations())),
      step_start_(events(static_cast<std::size_t>(options.totalIterations() + 1), cudaEventDefault)),
      check_done_(events(static_cast<std::size_t>(options.totalIterations()), cudaEventDisableTiming)) {
  SAMPLE_NCCL(ncclCommInitRank(&comm_, membership_.world_size, membership_.id, membership_.rank));
  if (options_.mode == SyncMode::Ddp) reducer_.emplace(ctx_, comm_, nccl_.get());

  // Where each tensor's chunk hashes start in the check's output.
  std::vector<std::int64_t> chunk_base;
  for (const ParamSpec& p : layout_.params()) {
    chunk_base.push_back(chunks_);
    chunks_ += chunksOf(p.numel());
  }
  chunk_base_ = DeviceTensor<std::int64_t>(allocator_, layout_.size(), check_.get());
  chunk_hashes_ = DeviceTensor<std::uint64_t>(allocator_, chunks_, check_.get());
  probes_ = DeviceTensor<float>(allocator_, 2 * layout_.size(), check_.get());
  hashes_host_ = PinnedBuffer<std::uint64_t>(static_cast<std::size_t>(chunks_ * options.totalIterations()));
  SAMPLE_CUDA(cudaMemcpy(chunk_base_.get(), chunk_base.data(), chunk_base_.bytes(), cudaMemcpyHostToDevice));
  ++setup_counts_.memcpys;
  const bool sharded = options_.mode == SyncMode::Zero1;
  if (options_.mode == SyncMode::Fsdp) {
    // The whole model on every rank first, as FSDP finds it when it wraps one.
    fsdp_.emplace(ctx_, tensors_, comm_);
    fsdp_->materialise();
    initialiseParameters();
    fsdp_->shard();
    setUpFsdpCheck();
  } else {
    if (!sharded) sgd_ = SgdStep(addresses(tensors_.params()), addresses(tensors_.grads()), numels(layout_));
    checksum_lists_ = tensorLists(sharded ? tensors_.params() : tensors_.grads());
    initialiseParameters();
  }
  if (sharded) sharded_.emplace(ctx_, comm_, nccl_.get());
  if (sharded_ && sharded_->overlapsForward()) ctx_.before_param_read = [this](int param) { sharded_->beforeParamRead(param); };
  setup_counts_ = setup_counts_ + issue_.counts();
}

Trainer::~Trainer() {
  if (check_comm_ != nullptr) ncclCommDestroy(check_comm_);
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

int Trainer::buckets() const {
  if (reducer_) return reducer_->buckets();
  if (sharded_) return sharded_->buckets();
  return fsdp_ ? static_cast<int>(fsdp_->units().size()) : 0;
}

void Trainer::setUpFsdpCheck() {
  SAMPLE_NCCL(ncclCommSplit(comm_, 0, membership_.rank, &check_comm_, nullptr));
  check_tensors_ = ModelTensors::unbound(layout_);
  for (const ShardedBucket& u : fsdp_->units()) {
    const DeviceTensor<float>& full =
        check_units_.emplace_back(allocator_, static_cast<std::int64_t>(u.padded_numel), check_.get());
    check_tensors_.viewParams(u.bucket, full.get());
  }
  checksum_lists_ = tensorLists(check_tensors_.params());
}

std::vector<TensorListMetadata<1>> Trainer::tensorLists(const std::vector<float*>& tensors) const {
  return fillTensorLists<1>(checksum_plan_, {addresses(tensors)}, numels(layout_));
}

void Trainer::initialiseParameters() {
  // Every rank draws the same weights; rank 0's are broadcast anyway, as DDP does. One list
  // deep, as the check's launches: the same plan.
  const std::vector<TensorListMetadata<1>> init_lists = tensorLists(tensors_.params());
  for (std::size_t i = 0; i < init_lists.size(); ++i) {
    FT_KERNEL(issue_, kernels::multiTensorInit(compute_.get(), 4 * checksum_plan_[i].elements, init_lists[i],
                                               InitFunctor{options_.seed}));
  }
  for (int p = 0; p < layout_.size(); ++p) {
    FT_COLLECTIVE(issue_, ncclBroadcast(ctx_.param(p), ctx_.param(p), static_cast<std::size_t>(layout_[p].numel()),
                                        ncclFloat, 0, comm_, compute_.get()));
  }
  SAMPLE_CUDA(cudaStreamSynchronize(compute_.get()));
}

void Trainer::issueIteration(int n) {
  const std::size_t s = static_cast<std::size_t>(n);
  SAMPLE_CUDA(cudaEventRecord(step_start_[s].get(), compute_.get()));
  int* tokens = tokens_host_.get() + 2 * kRealTokens * n;
  fillTokens(tokens, options_.seed, membership_.rank, n, options_.config.vocab);
  Activations act;
  {
    const NvtxRange range("forward");
    act = issueForward(ctx_, tokens, unitHooks());
  }
  {
    // loss.backward(): the backward thread issues it; this thread waits until it is done.
    const NvtxRange range("backward");
    autograd_.run([&] {
      // The previous iteration's check must have read the gradients (zero1, fsdp: the parameters)
      // before they are rewritten.
      if (n > 0) SAMPLE_CUDA(cudaStreamWaitEvent(compute_.get(), check_done_[s - 1].get(), 0));
      GradReady ready = [](int) {};
      if (reducer_) ready = [&](int param) { reducer_->gradReady(param); };
      if (sharded_ && sharded_->overlapsBackward()) ready = [&](int param) { sharded_->gradReady(param); };
      issueBackward(ctx_, std::move(act), n, ready, unitHooks());
      if (reducer_) reducer_->finalize();
    });
  }
  if (options_.mode == SyncMode::Naive) {
    // What a hand-written loop does: each gradient in turn, on the compute stream.
    const NvtxRange range("gradient_sync");
    for (int p = 0; p < layout_.size(); ++p) {
      issue_.allReduce(ctx_.grad(p), static_cast<std::size_t>(layout_[p].numel()), ncclAvg, comm_, compute_.get());
    }
  }
  if (sharded_) {
    {
      const NvtxRange range("gradient_sync");
      sharded_->synchronizeGradients();
    }
    {
      const NvtxRange range("optimizer");
      // The step rewrites this rank's shards, which the last all-gathers read.
      sharded_->waitForGathers(compute_.get());
      sharded_->stepShard();
    }
    const NvtxRange range("parameter_gather");
    sharded_->gatherParameters();
  } else if (fsdp_) {
    // Gradients were reduce-scattered unit by unit during backward; parameters are gathered in
    // the next forward.
    const NvtxRange range("optimizer");
    fsdp_->stepShards();
  } else {
    const NvtxRange range("optimizer");
    issueOptimizer();
  }
  issueCheck(n);
}

void Trainer::issueOptimizer() { sgd_.issue(issue_, compute_.get(), options_.lr); }

void Trainer::issueCheck(int n) {
  // On its own stream, so that the next iteration's forward does not queue behind it.
  const std::size_t s = static_cast<std::size_t>(n);
  SAMPLE_CUDA(cudaEventRecord(optimizer_done_.get(), compute_.get()));
  SAMPLE_CUDA(cudaStreamWaitEvent(check_.get(), optimizer_done_.get(), 0));
  // zero1 overlapping forward: the updated parameters the check reads are gathered on their own stream.
  if (sharded_) sharded_->waitForGathers(check_.get());
  if (fsdp_) fsdp_->gatherInto(check_units_, check_comm_, check_.get());
  const ChecksumFunctor checksum{chunk_hashes_.get(), chunk_base_.get(), probes_.get()};
  for (std::size_t i = 0; i < checksum_lists_.size(); ++i) {
    FT_KERNEL(issue_, kernels::multiTensorChecksum(check_.get(), 4 * checksum_plan_[i].elements, checksum_lists_[i],
                                                   checksum));
  }
  issue_.copy(hashes_host_.get() + chunks_ * n, chunk_hashes_.get(), chunk_hashes_.bytes(), cudaMemcpyDeviceToHost,
              check_.get());
  issue_.copy(probes_host_.get() + 2 * layout_.size() * n, probes_.get(), probes_.bytes(), cudaMemcpyDeviceToHost,
              check_.get());
  SAMPLE_CUDA(cudaEventRecord(check_done_[s].get(), check_.get()));
}

IterationRecord Trainer::checkIteration(int n, ProbeCheck& probes) {
  const std::size_t s = static_cast<std::size_t>(n);
  SAMPLE_CUDA(cudaEventSynchronize(check_done_[s].get()));
  SAMPLE_CUDA(cudaEventSynchronize(step_start_[s + 1].get()));
  IterationRecord record;
  record.iteration = n;
  record.warmup = n < options_.warmup;
  float elapsed_ms = 0.0f;
  SAMPLE_CUDA(cudaEventElapsedTime(&elapsed_ms, step_start_[s].get(), step_start_[s + 1].get()));
  record.time_ms = elapsed_ms;
  record.checksum = foldChunkHashes(std::span<const std::uint64_t>(hashes_host_.get() + chunks_ * n,
                                                                   static_cast<std::size_t>(chunks_)));
  const std::string problem = probes.check(
      n, std::span<const float>(probes_host_.get() + 2 * layout_.size() * n, static_cast<std::size_t>(2 * layout_.size())));
  if (!problem.empty()) throw VerificationError(fmt::format("rank {}: {}", membership_.rank, problem));
  return record;
}

void Trainer::checkAcrossRanks(const std::vector<IterationRecord>& records) {
  // Every rank must have the same synchronised gradients at every iteration.
  const std::size_t n = records.size();
  const auto ranks = static_cast<std::size_t>(membership_.world_size);
  PinnedBuffer<std::uint64_t> mine(n), all(n * ranks);
  for (std::size_t i = 0; i < n; ++i) mine.get()[i] = records[i].checksum;
  DeviceTensor<std::uint64_t> mine_device(allocator_, static_cast<std::int64_t>(n), compute_.get());
  DeviceTensor<std::uint64_t> all_device(allocator_, static_cast<std::int64_t>(n * ranks), compute_.get());
  const OpCounts before = issue_.counts();
  issue_.copy(mine_device.get(), mine.get(), mine_device.bytes(), cudaMemcpyHostToDevice, compute_.get());
  FT_COLLECTIVE(issue_, ncclAllGather(mine_device.get(), all_device.get(), n, ncclUint64, comm_, compute_.get()));
  issue_.copy(all.get(), all_device.get(), all_device.bytes(), cudaMemcpyDeviceToHost, compute_.get());
  SAMPLE_CUDA(cudaStreamSynchronize(compute_.get()));
  finish_counts_ = issue_.counts() - before;
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      if (all.get()[r * n + i] != records[i].checksum) {
        throw VerificationError(fmt::format("iteration {}: rank {}'s {} (checksum {:016x}) differ from rank {}'s "
                                            "({:016x})",
                                            records[i].iteration, r,
                                            checked() == Probed::Gradients ? "synchronised gradients" : "updated parameters",
                                            all.get()[r * n + i], membership_.rank, records[i].checksum));
      }
    }
  }
}

RunSummary Trainer::run(sample_common::Watchdog& watchdog) {
  RunSummary summary;
  summary.options = options_;
  summary.ranks = membership_.world_size;
  summary.bootstrap = membership_.kind;
  summary.params = layout_.totalNumel();
  summary.param_tensors = layout_.size();
  summary.buckets = buckets();
  if (membership_.rank == 0) printLine(configLine(summary));

  // The host issues every iteration before it waits for any (docs/framework_trainer.md, "The
  // host runs ahead"), then checks them in order.
  const OpCounts per_iteration = iterationCounts();
  const int total = options_.totalIterations();
  for (int n = 0; n < total; ++n) {
    const NvtxRange step(fmt::format("ProfilerStep#{}", n).c_str());
    const OpCounts before = issue_.counts();
    issueIteration(n);
    if (issue_.counts() - before != per_iteration) {
      throw std::logic_error(fmt::format("iteration {} issued other operations than iterationOpCounts() says", n));
    }
    watchdog.progress(fmt::format("iteration {} to be issued", n + 1));
  }
  // The last iteration ends where the next one would start: once its parameters are gathered
  // (zero1 overlapping forward gathers them on their own stream).
  if (sharded_) sharded_->waitForGathers(compute_.get());
  SAMPLE_CUDA(cudaEventRecord(step_start_[static_cast<std::size_t>(total)].get(), compute_.get()));

  ProbeCheck probes(layout_, options_.seed, membership_.world_size, options_.lr, checked());
  for (int n = 0; n < total; ++n) {
    watchdog.progress(fmt::format("iteration {} to complete", n));
    summary.iterations.push_back(checkIteration(n, probes));
  }
  watchdog.progress("the ranks' checksums to be gathered");
  checkAcrossRanks(summary.iterations);
  if (membership_.rank == 0) {
    for (const IterationRecord& r : summary.iterations) {
      printLine(iterationLine(r));
      printLine(sample_common::checksumLine(r.iteration, r.checksum));
    }
  }
  SAMPLE_CUDA(cudaDeviceSynchronize());
  return summary;
}

}  // namespace framework_trainer
