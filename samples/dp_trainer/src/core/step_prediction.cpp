#include "dp_trainer/step_prediction.hpp"

#include "dp_trainer/buckets.hpp"
#include "dp_trainer/kernel_signatures.hpp"
#include "dp_trainer/stream_simulation.hpp"

#include <fmt/format.h>

#include <vector>

namespace dp_trainer {
namespace {

using simulation::Op;
using simulation::Work;

// Parameter values of a launch as the profile indexes them (pointers and floats as 0).
std::vector<std::int64_t> layerKernelParams(const Options& options) {
  std::vector<std::int64_t> params(kernels::kLayerParamCount, 0);
  params[kernels::kBatchIndex] = options.shape.batch;
  params[kernels::kWidthIndex] = options.shape.width;
  params[kernels::kCostTokensIndex] = options.config.tokens();
  params[kernels::kCostHiddenIndex] = options.config.hidden;
  params[kernels::kCostBlockWidthIndex] = options.config.blockWidth();
  return params;
}

std::vector<std::int64_t> lossKernelParams(const Options& options) {
  std::vector<std::int64_t> params = layerKernelParams(options);
  params.resize(kernels::kLossParamCount);
  return params;
}

std::vector<std::int64_t> sgdKernelParams(const Options& options) {
  std::vector<std::int64_t> params(kernels::kSgdParamCount, 0);
  params[kernels::kSgdCountIndex] = static_cast<std::int64_t>(options.shape.paramsPerLayer());
  params[kernels::kSgdCostHiddenIndex] = options.config.hidden;
  params[kernels::kSgdCostBlockWidthIndex] = options.config.blockWidth();
  return params;
}

}  // namespace

StepPrediction predictStep(const MachineProfile& profile, const Options& options, int ranks) {
  const ModelShape& shape = options.shape;
  StepPrediction p;
  const std::vector<std::int64_t> layer_params = layerKernelParams(options);
  p.forward_ns = profile.kernelNs(kernels::kLayerForward, layer_params);
  p.backward_params_ns = profile.kernelNs(kernels::kLayerBackwardParams, layer_params);
  p.backward_input_ns = profile.kernelNs(kernels::kLayerBackwardInput, layer_params);
  p.sgd_ns = profile.kernelNs(kernels::kSgdUpdate, sgdKernelParams(options));
  const double loss_ns = profile.kernelNs(kernels::kMseLoss, lossKernelParams(options));
  const auto layer_bytes = static_cast<double>(shape.gradientBytesPerLayer());
  p.allreduce_layer_ns = profile.allReduceNs(layer_bytes, ranks);
  p.modelled_bytes_per_layer = layer_bytes * profile.bytes_scale;
  p.link = profile.linkNameFor(ranks);

  const double batch_bytes = static_cast<double>(shape.activationCount() * sizeof(float));
  const double grad_bytes = static_cast<double>(shape.paramCount() * sizeof(float));
  const double memset_ns = profile.memsetNs(grad_bytes);

  // The compute stream up to the end of backward, identical in both modes. `closing_op[l]`
  // is the index of layer l's weight-gradient kernel, whose end makes the gradient ready.
  std::vector<Op> compute;
  compute.push_back({Work::Copy, profile.h2dNs(batch_bytes)});
  compute.push_back({Work::Copy, profile.h2dNs(batch_bytes)});
  for (int l = 0; l < shape.layers; ++l) compute.push_back({Work::Compute, p.forward_ns});
  compute.push_back({Work::Compute, loss_ns});
  compute.push_back({Work::Copy, profile.d2hNs(sizeof(float))});
  compute.push_back({Work::Compute, memset_ns});
  std::vector<int> closing_op(static_cast<std::size_t>(shape.layers));
  for (int l = shape.layers - 1; l >= 0; --l) {
    closing_op[static_cast<std::size_t>(l)] = static_cast<int>(compute.size());
    compute.push_back({Work::Compute, p.backward_params_ns});
    if (l > 0) compute.push_back({Work::Compute, p.backward_input_ns});
  }
  for (const Op& op : compute) p.compute_ns += op.ns;
  p.compute_ns += shape.layers * p.sgd_ns;
  p.communication_ns = shape.layers * p.allreduce_layer_ns;

  // naive: the all-reduces follow backward on the compute stream, then the update.
  std::vector<Op> naive = compute;
  for (int l = 0; l < shape.layers; ++l) naive.push_back({Work::Communication, p.allreduce_layer_ns});
  for (int l = 0; l < shape.layers; ++l) naive.push_back({Work::Compute, p.sgd_ns});
  p.naive_ns = simulation::runStreams({naive}, profile.compute_slowdown, profile.communication_slowdown);

  // overlap: each bucket starts on the communication stream once its last gradient is ready;
  // the update waits for the last bucket.
  const std::vector<Bucket> buckets =
      planBuckets(shape, static_cast<double>(options.config.gradientBytesPerLayer()), options.bucketBytes());
  p.buckets = static_cast<int>(buckets.size());
  std::vector<Op> communication;
  for (const Bucket& bucket : buckets) {
    communication.push_back({Work::Communication,
                             profile.allReduceNs(static_cast<double>(bucket.count * sizeof(float)), ranks), 0,
                             closing_op[static_cast<std::size_t>(bucket.first_layer)]});
  }
  std::vector<Op> overlap = compute;
  overlap.push_back({Work::Compute, 0.0, 1, static_cast<int>(communication.size()) - 1});
  for (int l = 0; l < shape.layers; ++l) overlap.push_back({Work::Compute, p.sgd_ns});
  p.overlap_ns = simulation::runStreams({overlap, communication}, profile.compute_slowdown,
                                        profile.communication_slowdown);
  return p;
}

std::string formatPrediction(const MachineProfile& profile, const Options& options, int ranks,
                             const StepPrediction& p) {
  const LlmConfig& c = options.config;
  std::string text;
  text += fmt::format("prediction profile={} config={} layers={} hidden={} seq_len={} micro_batch={} ranks={} link={}\n",
                      profile.name, c.name, c.layers, c.hidden, c.seq_len, c.micro_batch, ranks, p.link);
  text += fmt::format(
      "per_layer forward_ms={:.3f} backward_params_ms={:.3f} backward_input_ms={:.3f} sgd_ms={:.3f} "
      "allreduce_ms={:.3f} real_grad_bytes={} modelled_grad_bytes={:.0f} llm_grad_bytes={}\n",
      p.forward_ns / 1e6, p.backward_params_ns / 1e6, p.backward_input_ns / 1e6, p.sgd_ns / 1e6,
      p.allreduce_layer_ns / 1e6, options.shape.gradientBytesPerLayer(), p.modelled_bytes_per_layer,
      c.gradientBytesPerLayer());
  text += fmt::format("per_step compute_ms={:.3f} communication_ms={:.3f} communication_share={:.3f}\n",
                      p.compute_ns / 1e6, p.communication_ns / 1e6, p.communicationShare());
  text += fmt::format("predicted mode=naive step_ms={:.3f}\n", p.naive_ns / 1e6);
  text += fmt::format("predicted mode=overlap step_ms={:.3f} buckets={} bucket_mb={:g}\n", p.overlap_ns / 1e6,
                      p.buckets, options.bucket_mb);
  text += fmt::format("predicted speedup={:.3f}\n", p.speedup());
  return text;
}

}  // namespace dp_trainer
