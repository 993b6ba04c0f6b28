// The host reference is what every iteration's gradients are checked against, so it is
// checked here against finite differences, and the kernels' float maths against it.
#include "dp_trainer/layer_math.hpp"
#include "dp_trainer/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dp_trainer {
namespace {

const ModelShape kShape{4, 8, 3};

double lossAt(const ModelShape& shape, const std::vector<float>& params, const Batch& batch) {
  return referenceStep(shape, params, batch).loss;
}

TEST(Reference, GradientsMatchFiniteDifferences) {
  std::vector<float> params = initialParams(kShape, 7);
  // Non-zero biases, so that their gradients are exercised away from the initial point.
  for (int l = 0; l < kShape.layers; ++l) {
    for (int j = 0; j < kShape.width; ++j) params[kShape.layerOffset(l) + kShape.biasOffset() + static_cast<std::size_t>(j)] = 0.05f * static_cast<float>(j - 3);
  }
  const Batch batch = makeBatch(kShape, 7, 0, 0);
  const ReferenceStep step = referenceStep(kShape, params, batch);
  for (std::size_t i = 0; i < params.size(); i += 7) {
    std::vector<float> up = params, down = params;
    up[i] += 1e-3f;
    down[i] -= 1e-3f;
    const double h = static_cast<double>(up[i]) - static_cast<double>(down[i]);
    const double numeric = (lossAt(kShape, up, batch) - lossAt(kShape, down, batch)) / h;
    EXPECT_NEAR(step.grads[i], numeric, 1e-5 + 1e-3 * std::abs(numeric)) << "parameter " << i;
  }
}

TEST(Reference, ExpectedStepAveragesTheRanks) {
  const std::vector<float> params = initialParams(kShape, 3);
  const ExpectedStep expected = expectedStep(kShape, params, 3, 2, 5);
  const ReferenceStep r0 = referenceStep(kShape, params, makeBatch(kShape, 3, 0, 5));
  const ReferenceStep r1 = referenceStep(kShape, params, makeBatch(kShape, 3, 1, 5));
  ASSERT_EQ(expected.losses.size(), 2u);
  EXPECT_DOUBLE_EQ(expected.losses[0], r0.loss);
  EXPECT_DOUBLE_EQ(expected.losses[1], r1.loss);
  for (std::size_t i = 0; i < expected.grads.size(); ++i) {
    EXPECT_DOUBLE_EQ(expected.grads[i], (r0.grads[i] + r1.grads[i]) / 2.0);
  }
}

TEST(Reference, BatchesDependOnSeedRankAndIterationOnly) {
  const Batch a = makeBatch(kShape, 11, 2, 4);
  EXPECT_EQ(a.inputs, makeBatch(kShape, 11, 2, 4).inputs);
  EXPECT_EQ(a.targets, makeBatch(kShape, 11, 2, 4).targets);
  EXPECT_NE(a.inputs, makeBatch(kShape, 11, 3, 4).inputs);
  EXPECT_NE(a.inputs, makeBatch(kShape, 11, 2, 5).inputs);
  EXPECT_NE(a.inputs, makeBatch(kShape, 12, 2, 4).inputs);
  for (float x : a.inputs) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
  }
}

// The per-element maths of the kernels (and of their CPU implementations), run in float the
// way the kernels run it: one rank's forward, loss and backward.
struct FloatStep {
  float loss = 0.0f;
  std::vector<float> grads;
};

FloatStep kernelMathsStep(const ModelShape& shape, const std::vector<float>& params, const Batch& batch) {
  const int w = shape.width, n = static_cast<int>(shape.activationCount());
  std::vector<std::vector<float>> outs(static_cast<std::size_t>(shape.layers) + 1, std::vector<float>(static_cast<std::size_t>(n)));
  std::vector<std::vector<float>> acts(static_cast<std::size_t>(shape.layers), std::vector<float>(static_cast<std::size_t>(n)));
  outs[0] = batch.inputs;
  for (int l = 0; l < shape.layers; ++l) {
    for (int b = 0; b < shape.batch; ++b) {
      for (int j = 0; j < w; ++j) {
        math::forwardElement(outs[static_cast<std::size_t>(l) + 1].data(), acts[static_cast<std::size_t>(l)].data(),
                             outs[static_cast<std::size_t>(l)].data(), params.data() + shape.layerOffset(l), w, b, j);
      }
    }
  }
  FloatStep step;
  step.grads.assign(shape.paramCount(), 0.0f);
  std::vector<float> grad(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    grad[static_cast<std::size_t>(i)] = math::lossGradElement(outs.back().data(), batch.targets.data(), n, i);
    sum = math::add(sum, math::squaredError(outs.back().data(), batch.targets.data(), i));
  }
  step.loss = sum / static_cast<float>(n);
  for (int l = shape.layers - 1; l >= 0; --l) {
    const auto ls = static_cast<std::size_t>(l);
    for (int i = 0; i < static_cast<int>(shape.paramsPerLayer()); ++i) {
      step.grads[shape.layerOffset(l) + static_cast<std::size_t>(i)] =
          math::paramGradElement(grad.data(), acts[ls].data(), outs[ls].data(), shape.batch, w, i);
    }
    for (int b = 0; b < shape.batch; ++b) {
      for (int k = 0; k < w; ++k) {
        next[static_cast<std::size_t>(b * w + k)] =
            math::inputGradElement(grad.data(), acts[ls].data(), params.data() + shape.layerOffset(l), w, b, k);
      }
    }
    std::swap(grad, next);
  }
  return step;
}

TEST(Reference, KernelMathsAgreeWithTheReference) {
  const ModelShape shape{24, 32, 8};
  const std::vector<float> params = initialParams(shape, 1234);
  const Batch batch = makeBatch(shape, 1234, 1, 0);
  const FloatStep got = kernelMathsStep(shape, params, batch);
  const ReferenceStep want = referenceStep(shape, params, batch);
  EXPECT_TRUE(checkLoss(got.loss, want.loss).ok);
  const CheckResult check = checkGradients(shape, got.grads, want.grads);
  EXPECT_TRUE(check.ok) << check.message;
}

TEST(Reference, TrainingWithTheKernelMathsReducesTheLoss) {
  const ModelShape shape{24, 32, 8};
  std::vector<float> params = initialParams(shape, 1234);
  float first = 0.0f, last = 0.0f;
  for (int iteration = 0; iteration < 20; ++iteration) {
    const FloatStep step = kernelMathsStep(shape, params, makeBatch(shape, 1234, 0, iteration));
    if (iteration == 0) first = step.loss;
    last = step.loss;
    sgdUpdate(params, step.grads, 0.05f);
  }
  EXPECT_LT(last, 0.5f * first);
}

TEST(Reference, CheckGradientsAcceptsFloatRoundingOfTheExpectedValues) {
  const std::vector<float> params = initialParams(kShape, 5);
  const ExpectedStep expected = expectedStep(kShape, params, 5, 4, 0);
  const std::vector<float> rounded(expected.grads.begin(), expected.grads.end());
  EXPECT_TRUE(checkGradients(kShape, rounded, expected.grads).ok);
}

TEST(Reference, CheckGradientsCatchesAMissingRank) {
  const std::vector<float> params = initialParams(kShape, 5);
  const ExpectedStep all = expectedStep(kShape, params, 5, 4, 0);
  // What an all-reduce that lost rank 3 would deliver: the sum of ranks 0..2, over 4.
  std::vector<float> partial(all.grads.size(), 0.0f);
  for (int rank = 0; rank < 3; ++rank) {
    const ReferenceStep r = referenceStep(kShape, params, makeBatch(kShape, 5, rank, 0));
    for (std::size_t i = 0; i < partial.size(); ++i) partial[i] += static_cast<float>(r.grads[i] / 4.0);
  }
  const CheckResult check = checkGradients(kShape, partial, all.grads);
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.message.find("layer "), std::string::npos) << check.message;
}

TEST(Reference, CheckGradientsCatchesALayerOutOfPlaceAndNaN) {
  const std::vector<float> params = initialParams(kShape, 5);
  const ExpectedStep expected = expectedStep(kShape, params, 5, 2, 1);
  std::vector<float> got(expected.grads.begin(), expected.grads.end());
  std::vector<float> swapped = got;
  std::copy(got.begin() + static_cast<std::ptrdiff_t>(kShape.layerOffset(1)),
            got.begin() + static_cast<std::ptrdiff_t>(kShape.layerOffset(2)),
            swapped.begin() + static_cast<std::ptrdiff_t>(kShape.layerOffset(2)));
  const CheckResult wrong_layer = checkGradients(kShape, swapped, expected.grads);
  EXPECT_FALSE(wrong_layer.ok);
  EXPECT_NE(wrong_layer.message.find("layer 2"), std::string::npos) << wrong_layer.message;

  got[kShape.layerOffset(3) + kShape.biasOffset()] = std::nanf("");
  const CheckResult nan = checkGradients(kShape, got, expected.grads);
  EXPECT_FALSE(nan.ok);
  EXPECT_NE(nan.message.find("layer 3 gradient b[0]"), std::string::npos) << nan.message;
}

TEST(Reference, CheckLossIsRelative) {
  EXPECT_TRUE(checkLoss(0.30000001, 0.3).ok);
  EXPECT_FALSE(checkLoss(0.31, 0.3).ok);
}

TEST(Reference, SgdUpdateRoundsLikeTheKernel) {
  std::vector<float> params{1.0f, -2.5f, 3.0e-8f};
  const std::vector<float> grads{0.1f, 0.2f, -1.0f};
  const float lr = 0.05f;
  std::vector<float> expected;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const volatile float step = lr * grads[i];  // rounded on its own, as __fmul_rn does
    expected.push_back(params[i] - step);
  }
  sgdUpdate(params, grads, lr);
  EXPECT_EQ(params, expected);
}

TEST(Reference, ChecksumIsBitwise) {
  const std::vector<float> a{1.0f, 2.0f, 0.0f};
  const std::vector<float> b{1.0f, 2.0f, -0.0f};  // equal values, different bits
  EXPECT_EQ(gradientChecksum(a), gradientChecksum(std::vector<float>{1.0f, 2.0f, 0.0f}));
  EXPECT_NE(gradientChecksum(a), gradientChecksum(b));
  // FNV-1a of no bytes is its offset basis.
  EXPECT_EQ(gradientChecksum(std::span<const float>{}), 0xcbf29ce484222325ull);
}

}  // namespace
}  // namespace dp_trainer
