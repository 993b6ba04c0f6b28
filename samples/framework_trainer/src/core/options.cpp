#include "framework_trainer/options.hpp"

#include "sample_common/command_line.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace framework_trainer {

const char* toString(SyncMode mode) {
  switch (mode) {
    case SyncMode::Naive: return "naive";
    case SyncMode::Ddp: return "ddp";
    case SyncMode::Zero1: return "zero1";
    case SyncMode::Fsdp: return "fsdp";
  }
  return "?";
}

const char* toString(BackwardPrefetch prefetch) {
  switch (prefetch) {
    case BackwardPrefetch::Pre: return "pre";
    case BackwardPrefetch::Post: return "post";
    case BackwardPrefetch::None: return "none";
  }
  return "?";
}

namespace {

std::string presetTable() {
  std::string table = "config          layers  hidden  heads  vocab  seq_len  micro_batch  parameters  tensors\n";
  for (const ModelConfig& c : modelPresets()) {
    const ParamLayout layout(c);
    table += fmt::format("{:<14}  {:>6}  {:>6}  {:>5}  {:>5}  {:>7}  {:>11}  {:>10}  {:>7}\n", c.name, c.layers, c.hidden,
                         c.heads, c.vocab, c.seq_len, c.micro_batch, layout.totalNumel(), layout.size());
  }
  return table;
}

}  // namespace

ParseOutcome parseOptions(int argc, const char* const* argv) {
  Options options;
  std::string config_name = "gpt2-small-8k";
  int layers = 0, hidden = 0, heads = 0, vocab = 0, seq_len = 0, micro_batch = 0;

  sample_common::TrainerCommandLine command_line(
      kProgram,
      "framework_trainer: a data-parallel GPT-2-style training job (CUDA + NCCL) built as PyTorch runs one: a\n"
      "caching allocator, kernels whose pointers travel in by-value structs launched with cudaLaunchKernel, a\n"
      "multi-tensor-apply optimizer, backward on a second thread, and DDP's reducer. Its parameter, gradient and\n"
      "bucket buffers have the model's real sizes. Every iteration's synchronised gradients are hashed and probed.\n"
      "Launch: single process, 'mpirun -np N framework_trainer ...', or the torchrun-style environment\n"
      "(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).");
  CLI::App& app = command_line.app();
  app.add_option("--config", config_name, "Model configuration: " + modelPresetNames())->capture_default_str();
  app.add_option("--layers", layers, "Override the configuration's blocks")->check(CLI::PositiveNumber);
  app.add_option("--hidden", hidden, "Override the hidden size")->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "Override the attention heads")->check(CLI::PositiveNumber);
  app.add_option("--vocab", vocab, "Override the vocabulary")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", seq_len, "Override the sequence length")->check(CLI::PositiveNumber);
  app.add_option("--micro-batch", micro_batch, "Override the sequences per rank per step")->check(CLI::PositiveNumber);
  std::string mode = "naive";
  app.add_option("--mode", mode,
                 "Gradient synchronisation: naive (one all-reduce per gradient after backward, on the compute stream), "
                 "ddp (DDP's reducer: flat buckets all-reduced on their own stream during backward), zero1 (a sharded "
                 "optimizer: after backward a reduce-scatter per bucket, the step on this rank's shard, an all-gather "
                 "per bucket of the updated parameters, all on the compute stream unless --overlap-grad-reduce or --overlap-param-gather) or fsdp (fully sharded parameters, a "
                 "unit per block: each unit's parameters all-gathered before its forward and its backward, its "
                 "gradients reduce-scattered after its backward, the step on this rank's shards, all on the compute "
                 "stream)")
      ->capture_default_str();
  CLI::Option* bucket_mb =
      app.add_option("--bucket-mb", options.bucket_mb,
                     "ddp, zero1: bucket cap in MiB (DDP's bucket_cap_mb: given, ddp's first bucket is cut at it too, "
                     "as DistributedDataParallel cuts it; zero1's first closes at 1 MiB); not for fsdp, whose units "
                     "are the blocks")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::Option* first_bucket =
      app.add_option("--first-bucket-bytes", options.first_bucket_bytes,
                     "ddp: the first bucket's cap in bytes, with --bucket-mb unset (PyTorch's "
                     "torch.distributed._DEFAULT_FIRST_BUCKET_BYTES, which DDP reads only then; given --bucket-mb, "
                     "the first bucket's cap is that too)")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
  CLI::Option* bucket_view =
      app.add_flag("--gradient-as-bucket-view", options.gradient_as_bucket_view,
                   "ddp: DDP's gradient_as_bucket_view=True: each gradient a view into its bucket, written there by "
                   "backward and divided in place, with no copy back");
  CLI::Option* bucket_size =
      app.add_option("--bucket-size", options.bucket_size,
                     "zero1: buckets of this many parameters (elements) or more, as Megatron-LM's --ddp-bucket-size "
                     "makes them (no smaller first bucket), instead of --bucket-mb's")
          ->check(CLI::PositiveNumber);
  CLI::Option* overlap =
      app.add_flag("--overlap-grad-reduce", options.overlap_grad_reduce,
                   "zero1: reduce-scatter each gradient bucket on its own stream as soon as backward has written it, "
                   "overlapping the rest of backward (Megatron-LM's --overlap-grad-reduce, DeepSpeed's overlap_comm)");
  CLI::Option* gather =
      app.add_flag("--overlap-param-gather", options.overlap_param_gather,
                   "zero1: all-gather the updated parameters on their own stream after the step, in the order forward "
                   "reads them, forward waiting for each bucket before it reads it (Megatron-LM's "
                   "--overlap-param-gather)");
  CLI::Option* group_stream =
      app.add_flag("--process-group-stream", options.process_group_stream,
                   "zero1: issue the collectives that do not overlap as torch.distributed issues synchronous ones: on "
                   "the process group's own stream, the compute stream waiting for each at once");
  CLI::Option* fsdp_streams =
      app.add_flag("--fsdp-streams", options.fsdp_streams,
                   "fsdp: issue as PyTorch FSDP does: all-gathers on an unshard stream, reduce-scatters on a "
                   "post-backward stream, the compute stream waiting for each result where it needs it");
  std::string backward_prefetch = "pre";
  CLI::Option* backward =
      app.add_option("--backward-prefetch", backward_prefetch,
                     "fsdp with --fsdp-streams: FSDP's backward_prefetch: pre (the next unit's all-gather before this "
                     "unit's gradient kernels), post (after them, before its reduce-scatter) or none")
          ->capture_default_str();
  CLI::Option* forward =
      app.add_flag("--forward-prefetch", options.forward_prefetch,
                   "fsdp with --fsdp-streams: FSDP's forward_prefetch=True: the next unit's all-gather before this "
                   "unit's forward kernels");
  CLI::Option* limit =
      app.add_option("--limit-all-gathers", options.limit_all_gathers,
                     "fsdp with --fsdp-streams: FSDP's limit_all_gathers (true or false): the host waits before an "
                     "all-gather while two freeings of gathered parameters are outstanding")
          ->capture_default_str();
  command_line.addLoopOptions(options.iterations, options.warmup, options.seed,
                              "Seed of the initial weights, the data and the gradients", options.lr);
  app.add_option("--segment-mb", options.segment_mb, "Smallest segment the caching allocator takes from cudaMalloc (MiB)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command_line.addLaunchOptions(options.bootstrap, options.bootstrap_timeout_s, options.watchdog_s);
  command_line.addListConfigs("List the model configurations and exit", presetTable);

  if (std::optional<sample_common::ParseStop> stop = command_line.parse(argc, argv)) return *stop;
  if (mode == "naive") options.mode = SyncMode::Naive;
  else if (mode == "ddp") options.mode = SyncMode::Ddp;
  else if (mode == "zero1") options.mode = SyncMode::Zero1;
  else if (mode == "fsdp") options.mode = SyncMode::Fsdp;
  else return command_line.failure(fmt::format("--mode must be naive, ddp, zero1 or fsdp (got '{}')", mode));
  if (options.mode == SyncMode::Fsdp && bucket_mb->count() > 0) {
    return command_line.failure("--bucket-mb does not apply to --mode fsdp: its units are the model's blocks");
  }
  if (options.mode != SyncMode::Ddp && first_bucket->count() > 0) {
    return command_line.failure("--first-bucket-bytes applies to --mode ddp only");
  }
  if (first_bucket->count() > 0 && bucket_mb->count() > 0) {
    return command_line.failure(
        "--first-bucket-bytes applies only with --bucket-mb unset: DDP then cuts the first bucket at the cap too");
  }
  if (options.mode != SyncMode::Ddp && bucket_view->count() > 0) {
    return command_line.failure("--gradient-as-bucket-view applies to --mode ddp only");
  }
  if (options.mode == SyncMode::Ddp && bucket_mb->count() > 0) options.first_bucket_bytes = options.bucketBytes();
  if (options.mode != SyncMode::Zero1 && bucket_size->count() > 0) {
    return command_line.failure("--bucket-size applies to --mode zero1 only (ddp takes --bucket-mb)");
  }
  if (bucket_size->count() > 0 && bucket_mb->count() > 0) {
    return command_line.failure("--bucket-size and --bucket-mb both set the buckets: give one");
  }
  if (options.mode != SyncMode::Zero1 && overlap->count() > 0) {
    return command_line.failure("--overlap-grad-reduce applies to --mode zero1 only");
  }
  if (options.mode != SyncMode::Zero1 && gather->count() > 0) {
    return command_line.failure("--overlap-param-gather applies to --mode zero1 only");
  }
  if (options.mode != SyncMode::Zero1 && group_stream->count() > 0) {
    return command_line.failure("--process-group-stream applies to --mode zero1 only");
  }
  if (options.mode != SyncMode::Fsdp && fsdp_streams->count() > 0) {
    return command_line.failure("--fsdp-streams applies to --mode fsdp only");
  }
  for (const CLI::Option* setting : {backward, forward, limit}) {
    if (setting->count() > 0 && !options.fsdp_streams) {
      return command_line.failure(fmt::format("{} applies to --mode fsdp with --fsdp-streams", setting->get_name()));
    }
  }
  if (backward_prefetch == "pre") options.backward_prefetch = BackwardPrefetch::Pre;
  else if (backward_prefetch == "post") options.backward_prefetch = BackwardPrefetch::Post;
  else if (backward_prefetch == "none") options.backward_prefetch = BackwardPrefetch::None;
  else return command_line.failure(fmt::format("--backward-prefetch must be pre, post or none (got '{}')", backward_prefetch));
  if (std::optional<sample_common::ParseStop> stop = command_line.checkBootstrap()) return *stop;
  const std::optional<ModelConfig> preset = findModelPreset(config_name);
  if (!preset) {
    return command_line.failure(fmt::format("unknown --config '{}'; known: {}", config_name, modelPresetNames()));
  }
  options.config = *preset;
  if (layers > 0) options.config.layers = layers;
  if (hidden > 0) options.config.hidden = hidden;
  if (heads > 0) options.config.heads = heads;
  if (vocab > 0) options.config.vocab = vocab;
  if (seq_len > 0) options.config.seq_len = seq_len;
  if (micro_batch > 0) options.config.micro_batch = micro_batch;
  if (const std::string problem = validateModelConfig(options.config); !problem.empty()) {
    return command_line.failure(problem);
  }
  if (!std::isfinite(options.lr)) return command_line.failure("--lr must be a finite positive number");
  return options;
}

}  // namespace framework_trainer
