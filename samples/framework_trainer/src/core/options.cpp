#include "framework_trainer/options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>

namespace framework_trainer {

const char* toString(SyncMode mode) { return mode == SyncMode::Naive ? "naive" : "ddp"; }

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

ParseOutcome failure(const std::string& what) {
  ParseOutcome outcome;
  outcome.exit_code = 2;
  outcome.err = fmt::format("framework_trainer: {}\nRun 'framework_trainer --help' for the options.\n", what);
  return outcome;
}

}  // namespace

ParseOutcome parseOptions(int argc, const char* const* argv) {
  Options options;
  std::string config_name = "gpt2-small-8k";
  int layers = 0, hidden = 0, heads = 0, vocab = 0, seq_len = 0, micro_batch = 0;
  bool list_configs = false;

  CLI::App app{
      "framework_trainer: a data-parallel GPT-2-style training job (CUDA + NCCL) built as PyTorch runs one: a\n"
      "caching allocator, kernels whose pointers travel in by-value structs launched with cudaLaunchKernel, a\n"
      "multi-tensor-apply optimizer, backward on a second thread, and DDP's reducer. Its parameter, gradient and\n"
      "bucket buffers have the model's real sizes. Every iteration's synchronised gradients are hashed and probed.\n"
      "Launch: single process, 'mpirun -np N framework_trainer ...', or the torchrun-style environment\n"
      "(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).",
      "framework_trainer"};
  app.add_option("--config", config_name, "Model configuration: " + modelPresetNames())->capture_default_str();
  app.add_option("--layers", layers, "Override the configuration's blocks")->check(CLI::PositiveNumber);
  app.add_option("--hidden", hidden, "Override the hidden size")->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "Override the attention heads")->check(CLI::PositiveNumber);
  app.add_option("--vocab", vocab, "Override the vocabulary")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", seq_len, "Override the sequence length")->check(CLI::PositiveNumber);
  app.add_option("--micro-batch", micro_batch, "Override the sequences per rank per step")->check(CLI::PositiveNumber);
  std::string mode = "naive";
  app.add_option("--mode", mode,
                 "Gradient synchronisation: naive (one all-reduce per gradient after backward, on the compute stream) "
                 "or ddp (DDP's reducer: flat buckets all-reduced on their own stream during backward)")
      ->capture_default_str();
  app.add_option("--bucket-mb", options.bucket_mb, "ddp: bucket cap in MiB (DDP's bucket_cap_mb)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--iterations", options.iterations, "Measured iterations")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", options.warmup, "Iterations before the measured ones (checked, not summarised)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Seed of the initial weights, the data and the gradients")->capture_default_str();
  app.add_option("--lr", options.lr, "SGD learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--segment-mb", options.segment_mb, "Smallest segment the caching allocator takes from cudaMalloc (MiB)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  std::string bootstrap = "auto";
  app.add_option("--bootstrap", bootstrap,
                 "How ranks meet: auto (mpirun's environment, else RANK/WORLD_SIZE, else single), mpi, env, single")
      ->capture_default_str();
  app.add_option("--bootstrap-timeout", options.bootstrap_timeout_s, "Seconds to wait for all ranks (env bootstrap)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--watchdog", options.watchdog_s,
                 "Seconds without progress before the run stops with an error instead of hanging")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--list-configs", list_configs, "List the model configurations and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    ParseOutcome outcome;
    outcome.out = app.help();
    return outcome;
  } catch (const CLI::ParseError& e) {
    return failure(e.what());
  }
  if (list_configs) {
    ParseOutcome outcome;
    outcome.out = presetTable();
    return outcome;
  }
  if (mode != "naive" && mode != "ddp") return failure(fmt::format("--mode must be naive or ddp (got '{}')", mode));
  options.mode = mode == "ddp" ? SyncMode::Ddp : SyncMode::Naive;
  const std::optional<BootstrapKind> kind = sample_common::parseBootstrapKind(bootstrap);
  if (!kind) return failure(fmt::format("--bootstrap must be auto, mpi, env or single (got '{}')", bootstrap));
  options.bootstrap = *kind;
  const std::optional<ModelConfig> preset = findModelPreset(config_name);
  if (!preset) return failure(fmt::format("unknown --config '{}'; known: {}", config_name, modelPresetNames()));
  options.config = *preset;
  if (layers > 0) options.config.layers = layers;
  if (hidden > 0) options.config.hidden = hidden;
  if (heads > 0) options.config.heads = heads;
  if (vocab > 0) options.config.vocab = vocab;
  if (seq_len > 0) options.config.seq_len = seq_len;
  if (micro_batch > 0) options.config.micro_batch = micro_batch;
  if (const std::string problem = validateModelConfig(options.config); !problem.empty()) return failure(problem);
  if (!std::isfinite(options.lr)) return failure("--lr must be a finite positive number");
  ParseOutcome outcome;
  outcome.options = options;
  return outcome;
}

}  // namespace framework_trainer
