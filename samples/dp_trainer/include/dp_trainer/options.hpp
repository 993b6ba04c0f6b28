// dp_trainer's command line.
#pragma once

#include "dp_trainer/llm_config.hpp"
#include "dp_trainer/model_shape.hpp"
#include "sample_common/launch_env.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace dp_trainer {

enum class SyncMode { Naive, Overlap };
using sample_common::BootstrapKind;
using sample_common::toString;

const char* toString(SyncMode mode);

struct Options {
  LlmConfig config;  // the modelled LLM: the kernels' cost parameters
  ModelShape shape;  // the real model (layers = config.layers)
  SyncMode mode = SyncMode::Naive;
  double bucket_mb = 25.0;  // overlap mode: bucket cap in MiB of modelled gradient (DDP's default)
  int iterations = 10;      // measured iterations
  int warmup = 1;           // iterations before them, checked but left out of the summary
  std::uint64_t seed = 1234;
  float lr = 0.05f;
  BootstrapKind bootstrap = BootstrapKind::Auto;
  double bootstrap_timeout_s = 60.0;
  // Seconds without an iteration completing before the run is declared hung (an error).
  double watchdog_s = 300.0;
  std::string json_path;  // rank 0 writes a JSON summary here when set
  // --predict: print the step times the profile predicts for both modes, run nothing.
  bool predict = false;
  std::string profile_path;  // for --predict; default $SIMGPU_PROFILE
  int predict_ranks = 4;

  double bucketBytes() const { return bucket_mb * 1024.0 * 1024.0; }
  int totalIterations() const { return warmup + iterations; }
};

// The outcome of parsing: options to run with, or an exit code and what to print
// (--help and --list-configs exit 0 with text on stdout; errors exit 2 with a message).
struct ParseOutcome {
  std::optional<Options> options;
  int exit_code = 0;
  std::string out;  // for stdout
  std::string err;  // for stderr, starting "dp_trainer: "
};

ParseOutcome parseOptions(int argc, const char* const* argv);

}  // namespace dp_trainer
