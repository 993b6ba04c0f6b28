// The host side of every iteration's check: deterministic data and initial weights, an
// independent double-precision forward/backward of every rank's batch, and the comparison
// with the gradients the ranks synchronised. Also the host's mirror of the SGD update, which
// rounds exactly as the sgd_update kernel does, so the host's weights stay bitwise equal to
// the device's without copying them back.
#pragma once

#include "dp_trainer/model_shape.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dp_trainer {

// A rank's batch for one iteration: inputs and targets, each batch x width, row-major.
struct Batch {
  std::vector<float> inputs;
  std::vector<float> targets;
};

// Inputs uniform in [-1, 1), a function of (seed, rank, iteration) only; targets are a fixed
// function of the inputs, 0.5 * tanh(A x) with A drawn from the seed.
Batch makeBatch(const ModelShape& shape, std::uint64_t seed, int rank, int iteration);

// Every rank draws the same initial parameters from the seed (W uniform in +-0.5/sqrt(width),
// b = 0); rank 0's copy is broadcast anyway, as DDP does.
std::vector<float> initialParams(const ModelShape& shape, std::uint64_t seed);

struct ReferenceStep {
  double loss = 0.0;           // this batch's mean squared error
  std::vector<double> grads;   // d(loss)/d(params), flat layout of ModelShape
};

// Forward and backward of one batch in double precision.
ReferenceStep referenceStep(const ModelShape& shape, std::span<const float> params, const Batch& batch);

struct ExpectedStep {
  std::vector<double> losses;  // per rank
  std::vector<double> grads;   // the average over ranks, what the all-reduce must produce
};

// What every rank must see after synchronisation at `iteration`: recomputed from all ranks'
// deterministic batches.
ExpectedStep expectedStep(const ModelShape& shape, std::span<const float> params, std::uint64_t seed,
                          int world_size, int iteration);

struct CheckResult {
  bool ok = true;
  std::string message;  // the first mismatch, when !ok
};

// Per layer, every element must be within `tolerance` x (the layer's largest |expected|) of
// the expected value: a float computation of this depth stays far inside 1e-4, while a lost
// or doubled rank, a wrong bucket range or stale data is off by tens of percent.
inline constexpr double kGradientTolerance = 1e-4;
CheckResult checkGradients(const ModelShape& shape, std::span<const float> got, std::span<const double> expected,
                           double tolerance = kGradientTolerance);

inline constexpr double kLossTolerance = 1e-4;  // relative
CheckResult checkLoss(double got, double expected, double tolerance = kLossTolerance);

// params -= lr * grads, element by element, rounding exactly like the sgd_update kernel.
void sgdUpdate(std::span<float> params, std::span<const float> grads, float lr);

// FNV-1a (64-bit) over the bytes of the synchronised gradients: equal values <=> equal bits,
// so two runs whose checksums agree at every iteration have bit-identical gradients.
std::uint64_t gradientChecksum(std::span<const float> grads);

}  // namespace dp_trainer
