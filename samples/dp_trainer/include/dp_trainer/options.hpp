// dp_trainer's command line.
#pragma once

#include "dp_trainer/llm_config.hpp"
#include "dp_trainer/model_shape.hpp"
#include "sample_common/launch_env.hpp"
#include "sample_common/parse_outcome.hpp"

#include <cstdint>
#include <string>

namespace dp_trainer {

// The program's name, as --help shows it and every error message starts.
inline constexpr const char* kProgram = "dp_trainer";

enum class SyncMode { Naive, Overlap };
using sample_common::BootstrapKind;
using sample_common::toString;

const char* toString(SyncMode mode);

// Faults one rank can be told to make, for the tuner runtime's reliability soak
// (bench/reliability/plan_soak.sh): each acts on rank `*_rank` (-1: no rank) at iteration
// `*_at_step` (counted from 0, warm-up included), after its backward.
struct Faults {
  int stall_rank = -1, stall_at_step = 1;
  int stall_ms = 0;  // the rank sleeps this long, then goes on: a slow or stuck rank
  int exit_rank = -1, exit_at_step = 1;  // the rank exits at once (status 5), as a crashed one would
  // From that iteration on, the rank synchronises its compute stream after the first all-reduce
  // of the gradient sync (naive mode): its call sequence differs from the others', its
  // collectives and results do not.
  int diverge_rank = -1, diverge_at_step = 1;

  bool any() const { return stall_rank >= 0 || exit_rank >= 0 || diverge_rank >= 0; }
  friend bool operator==(const Faults&, const Faults&) = default;
};

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
  Faults faults;

  double bucketBytes() const { return bucket_mb * 1024.0 * 1024.0; }
  int totalIterations() const { return warmup + iterations; }
};

using ParseOutcome = sample_common::ParseOutcome<Options>;

ParseOutcome parseOptions(int argc, const char* const* argv);

}  // namespace dp_trainer
