#include "dp_trainer/options.hpp"

#include "sample_common/command_line.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>

namespace dp_trainer {

const char* toString(SyncMode mode) { return mode == SyncMode::Naive ? "naive" : "overlap"; }

namespace {

std::string presetTable() {
  std::string table = "config      layers  hidden  seq_len  micro_batch  params/layer  grad MB/layer (bf16)\n";
  for (const LlmConfig& c : llmPresets()) {
    table += fmt::format("{:<10}  {:>6}  {:>6}  {:>7}  {:>11}  {:>12}  {:>20.1f}\n", c.name, c.layers, c.hidden,
                         c.seq_len, c.micro_batch, c.paramsPerLayer(),
                         static_cast<double>(c.gradientBytesPerLayer()) / 1e6);
  }
  return table;
}

}  // namespace

ParseOutcome parseOptions(int argc, const char* const* argv) {
  Options options;
  std::string config_name = "gpt-1.3b";
  int layers = 0, hidden = 0, seq_len = 0, micro_batch = 0;
  int width = 32, batch = 8;

  sample_common::TrainerCommandLine command_line(
      kProgram,
      "dp_trainer: a data-parallel trainer (CUDA + NCCL) of a small residual MLP whose kernels carry the cost of\n"
      "an LLM-sized configuration, so that on simgpu a step takes the time of that LLM's step. Every iteration's\n"
      "synchronised gradients are checked against a host recomputation from all ranks' batches.\n"
      "Launch: single process, 'mpirun -np N dp_trainer ...', or the torchrun-style environment\n"
      "(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT).");
  CLI::App& app = command_line.app();
  app.add_option("--config", config_name, "Modelled LLM configuration: " + llmPresetNames())
      ->capture_default_str();
  app.add_option("--layers", layers, "Override the configuration's layers (also the real model's depth)")
      ->check(CLI::PositiveNumber);
  app.add_option("--hidden", hidden, "Override the configuration's hidden size")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", seq_len, "Override the configuration's sequence length")->check(CLI::PositiveNumber);
  app.add_option("--micro-batch", micro_batch, "Override the sequences per rank per step")
      ->check(CLI::PositiveNumber);
  std::string mode = "naive";
  app.add_option("--mode", mode,
                 "Gradient synchronisation: naive (all-reduce each layer after backward, on the compute stream) "
                 "or overlap (DDP-like buckets on a communication stream during backward)")
      ->capture_default_str();
  app.add_option("--bucket-mb", options.bucket_mb, "overlap: bucket cap in MiB of modelled gradient")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command_line.addLoopOptions(options.iterations, options.warmup, options.seed,
                              "Seed of the data and the initial weights", options.lr);
  app.add_option("--width", width, "Real model: features per layer")
      ->check(CLI::Range(1, kMaxWidth))
      ->capture_default_str();
  app.add_option("--batch", batch, "Real model: samples per rank per step")
      ->check(CLI::Range(1, kMaxBatch))
      ->capture_default_str();
  command_line.addLaunchOptions(options.bootstrap, options.bootstrap_timeout_s, options.watchdog_s);
  app.add_option("--json", options.json_path, "Rank 0 writes a JSON summary to this file");
  app.add_flag("--predict", options.predict,
               "Print the step times the machine profile predicts for naive and overlap, then exit (no GPU used)");
  app.add_option("--profile", options.profile_path, "Machine profile for --predict (default: $SIMGPU_PROFILE)");
  app.add_option("--ranks", options.predict_ranks, "Ranks for --predict")->check(CLI::PositiveNumber)
      ->capture_default_str();
  command_line.addListConfigs("List the LLM configurations and exit", presetTable);
  Faults& faults = options.faults;
  const char* fault_group = "Faults (for reliability tests; each acts after the rank's backward of the step, counted "
                            "from 0 with the warm-up)";
  app.add_option("--stall-rank", faults.stall_rank, "This rank sleeps --stall-ms at --stall-at-step, then goes on")
      ->check(CLI::NonNegativeNumber)
      ->group(fault_group);
  app.add_option("--stall-at-step", faults.stall_at_step, "Step of --stall-rank's stall")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(fault_group);
  app.add_option("--stall-ms", faults.stall_ms, "Length of --stall-rank's stall in milliseconds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(fault_group);
  app.add_option("--exit-rank", faults.exit_rank,
                 "This rank exits at once with status 5 at --exit-at-step, without leaving the job")
      ->check(CLI::NonNegativeNumber)
      ->group(fault_group);
  app.add_option("--exit-at-step", faults.exit_at_step, "Step of --exit-rank's exit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(fault_group);
  app.add_option("--diverge-rank", faults.diverge_rank,
                 "From --diverge-at-step on, this rank synchronises its compute stream after the first all-reduce of "
                 "each gradient sync (naive mode): another call sequence, the same collectives and results")
      ->check(CLI::NonNegativeNumber)
      ->group(fault_group);
  app.add_option("--diverge-at-step", faults.diverge_at_step, "First step of --diverge-rank's extra synchronisation")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(fault_group);

  if (std::optional<sample_common::ParseStop> stop = command_line.parse(argc, argv)) return *stop;

  if (mode != "naive" && mode != "overlap") {
    return command_line.failure(fmt::format("--mode must be naive or overlap (got '{}')", mode));
  }
  options.mode = mode == "overlap" ? SyncMode::Overlap : SyncMode::Naive;
  if (options.faults.diverge_rank >= 0 && options.mode != SyncMode::Naive) {
    return command_line.failure(
        "--diverge-rank needs --mode naive (it synchronises between the gradient sync's all-reduces)");
  }
  if (std::optional<sample_common::ParseStop> stop = command_line.checkBootstrap()) return *stop;
  const std::optional<LlmConfig> preset = findLlmPreset(config_name);
  if (!preset) {
    return command_line.failure(fmt::format("unknown --config '{}'; known: {}", config_name, llmPresetNames()));
  }
  options.config = *preset;
  if (layers > 0) options.config.layers = layers;
  if (hidden > 0) options.config.hidden = hidden;
  if (seq_len > 0) options.config.seq_len = seq_len;
  if (micro_batch > 0) options.config.micro_batch = micro_batch;
  if (const std::string problem = validateLlmConfig(options.config); !problem.empty()) {
    return command_line.failure(problem);
  }
  if (!std::isfinite(options.lr)) return command_line.failure("--lr must be a finite positive number");
  options.shape = ModelShape{options.config.layers, width, batch};

  if (options.predict && options.profile_path.empty()) {
    if (const char* env = std::getenv("SIMGPU_PROFILE"); env != nullptr && *env != '\0') {
      options.profile_path = env;
    } else {
      return command_line.failure("--predict needs a machine profile: pass --profile PATH or set SIMGPU_PROFILE");
    }
  }
  return options;
}

}  // namespace dp_trainer
