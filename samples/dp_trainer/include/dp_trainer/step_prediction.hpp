// What a machine profile says one dp_trainer step should take, in both synchronisation modes:
// the same ops the trainer issues, priced with the profile's formulas, and played on a compute
// and a communication stream with the profile's interference (while a collective and a
// compute kernel run together, each progresses at 1/(1 + its slowdown) of full speed).
// The host is assumed never to be the bottleneck (it enqueues ahead of the device), and the
// tiny check copy on its own stream is left out (it overlaps the next forward).
#pragma once

#include "dp_trainer/machine_profile.hpp"
#include "dp_trainer/options.hpp"

#include <string>

namespace dp_trainer {

struct StepPrediction {
  // Per layer, at full speed.
  double forward_ns = 0.0;
  double backward_params_ns = 0.0;
  double backward_input_ns = 0.0;
  double sgd_ns = 0.0;
  double allreduce_layer_ns = 0.0;  // one layer's gradient
  double modelled_bytes_per_layer = 0.0;  // real gradient bytes x bytes_scale
  std::string link;
  // Per step.
  double compute_ns = 0.0;        // every kernel, copy and memset of the step, serially
  double communication_ns = 0.0;  // the naive mode's all-reduces, serially
  int buckets = 0;
  double naive_ns = 0.0;
  double overlap_ns = 0.0;
  double speedup() const { return naive_ns / overlap_ns; }
  double communicationShare() const { return communication_ns / naive_ns; }
};

StepPrediction predictStep(const MachineProfile& profile, const Options& options, int ranks);

// The lines `dp_trainer --predict` prints (parsed by tests and quoted in docs/dp_trainer.md).
std::string formatPrediction(const MachineProfile& profile, const Options& options, int ranks,
                             const StepPrediction& prediction);

}  // namespace dp_trainer
