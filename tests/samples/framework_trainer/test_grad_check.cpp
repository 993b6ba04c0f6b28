#include "framework_trainer/device_math.hpp"
#include "framework_trainer/grad_check.hpp"
#include "framework_trainer/kernel_bodies.hpp"
#include "framework_trainer/tensor_lists.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace framework_trainer {
namespace {

constexpr std::uint64_t kSeed = 1234;

// What the device holds after the all-reduce: the rank-ordered average of every rank's rule.
float averagedGradient(const ParamLayout& layout, int ranks, int iteration, int tensor, float param) {
  float sum = 0.0f;
  for (int r = 0; r < ranks; ++r) {
    float g = 0.0f;
    const int contributions = tensor == layout.tokenEmbedding() ? 2 : 1;
    for (int c = 0; c < contributions; ++c) math::applyGradRule(gradRule(kSeed, r, iteration, tensor, c), param, g);
    sum += g;
  }
  return sum / static_cast<float>(ranks);
}

std::vector<float> probes(const ParamLayout& layout, int ranks, int iteration, const std::vector<float>& params) {
  std::vector<float> out;
  for (int t = 0; t < layout.size(); ++t) {
    out.push_back(averagedGradient(layout, ranks, iteration, t, params[2 * t]));
    out.push_back(averagedGradient(layout, ranks, iteration, t, params[2 * t + 1]));
  }
  return out;
}

TEST(GradRule, DependsOnRankIterationTensorAndContribution) {
  const GradRule a = gradRule(kSeed, 0, 3, 5, 0);
  EXPECT_EQ(a.scale, gradRule(kSeed, 0, 3, 5, 0).scale);
  EXPECT_NE(a.scale, gradRule(kSeed, 1, 3, 5, 0).scale);
  EXPECT_NE(a.scale, gradRule(kSeed, 0, 4, 5, 0).scale);
  EXPECT_NE(a.scale, gradRule(kSeed, 0, 3, 6, 0).scale);
  EXPECT_NE(a.shift, gradRule(kSeed, 0, 3, 5, 1).shift);
  EXPECT_EQ(a.accumulate, 0);
  EXPECT_EQ(gradRule(kSeed, 0, 3, 5, 1).accumulate, 1);
  EXPECT_GE(a.scale, 0.005f);
  EXPECT_LT(a.scale, 0.015f);
  EXPECT_LE(std::abs(a.shift), 0.001f);
}

TEST(ProbeCheck, AcceptsTheAverageAndStepsItsMirrorAsTheDevice) {
  const ParamLayout layout(*findModelPreset("tiny"));
  constexpr float kLr = 0.1f;
  ProbeCheck check(layout, kSeed, 4, kLr, Probed::Gradients);
  std::vector<float> params;
  for (int t = 0; t < layout.size(); ++t) {
    params.push_back(math::initValue(kSeed, t, 0));
    params.push_back(math::initValue(kSeed, t, layout[t].numel() - 1));
  }
  for (int iteration = 0; iteration < 3; ++iteration) {
    const std::vector<float> grads = probes(layout, 4, iteration, params);
    EXPECT_EQ(check.check(iteration, grads), "") << iteration;
    for (std::size_t i = 0; i < params.size(); ++i) params[i] = math::sgdElement(params[i], grads[i], kLr);
  }
}

TEST(ProbeCheck, CatchesALostRankAStaleWeightAndAShortList) {
  const ParamLayout layout(*findModelPreset("tiny"));
  std::vector<float> params;
  for (int t = 0; t < layout.size(); ++t) {
    params.push_back(math::initValue(kSeed, t, 0));
    params.push_back(math::initValue(kSeed, t, layout[t].numel() - 1));
  }
  {
    ProbeCheck check(layout, kSeed, 4, 0.1f, Probed::Gradients);
    const std::string problem = check.check(0, probes(layout, 3, 0, params));  // one rank missing
    EXPECT_NE(problem.find("iteration 0: the synchronised gradient of wte.weight at element 0 is"), std::string::npos)
        << problem;
  }
  {
    ProbeCheck check(layout, kSeed, 2, 0.1f, Probed::Gradients);
    ASSERT_EQ(check.check(0, probes(layout, 2, 0, params)), "");
    // Iteration 1 computed from the weights before the update: off.
    EXPECT_NE(check.check(1, probes(layout, 2, 1, params)), "");
  }
  {
    ProbeCheck check(layout, kSeed, 2, 0.1f, Probed::Gradients);
    EXPECT_EQ(check.check(0, std::vector<float>(3)), "iteration 0: 3 probed values, expected 56");
  }
}

// A sharded optimizer's check: the probes are the parameters after the step.
TEST(ProbeCheck, AcceptsParametersSteppedWithTheAverageAndCatchesAStaleOrLostShard) {
  const ParamLayout layout(*findModelPreset("tiny"));
  constexpr float kLr = 0.1f;
  std::vector<float> params;
  for (int t = 0; t < layout.size(); ++t) {
    params.push_back(math::initValue(kSeed, t, 0));
    params.push_back(math::initValue(kSeed, t, layout[t].numel() - 1));
  }
  const auto stepped = [&](int ranks, int iteration, const std::vector<float>& weights) {
    const std::vector<float> grads = probes(layout, ranks, iteration, weights);
    std::vector<float> out;
    for (std::size_t i = 0; i < weights.size(); ++i) out.push_back(math::sgdElement(weights[i], grads[i], kLr));
    return out;
  };
  ProbeCheck check(layout, kSeed, 4, kLr, Probed::UpdatedParameters);
  std::vector<float> weights = params;
  for (int iteration = 0; iteration < 3; ++iteration) {
    weights = stepped(4, iteration, weights);
    EXPECT_EQ(check.check(iteration, weights), "") << iteration;
  }
  // A step that never reached the parameters (the all-gather left the old values).
  ProbeCheck stale(layout, kSeed, 4, kLr, Probed::UpdatedParameters);
  const std::string not_gathered = stale.check(0, params);
  EXPECT_NE(not_gathered.find("iteration 0: the updated parameter of wte.weight at element 0 is"), std::string::npos)
      << not_gathered;
  EXPECT_NE(not_gathered.find("SGD with the average gradient over the 4 ranks should be"), std::string::npos)
      << not_gathered;
  // One rank's gradients missing from the average.
  ProbeCheck lost(layout, kSeed, 4, kLr, Probed::UpdatedParameters);
  EXPECT_NE(lost.check(0, stepped(3, 0, params)), "");
}

TEST(Checksum, TheDevicesChunkHashesFoldIntoOneValueWhateverTheLaunches) {
  // Three tensors hashed by the checksum body over a plan of several launches.
  const std::vector<std::int64_t> numels{3 * kChunkSize + 5, 17, kChunkSize};
  std::vector<std::vector<float>> tensors;
  std::vector<std::int64_t> chunk_base;
  std::int64_t chunks = 0;
  for (std::size_t t = 0; t < numels.size(); ++t) {
    std::vector<float>& v = tensors.emplace_back(static_cast<std::size_t>(numels[t]));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) * 0.25f + static_cast<float>(t);
    chunk_base.push_back(chunks);
    chunks += chunksOf(numels[t]);
  }
  std::vector<std::uint64_t> hashes(static_cast<std::size_t>(chunks));
  std::vector<float> probe_values(2 * numels.size());
  const ChecksumFunctor f{hashes.data(), chunk_base.data(), probe_values.data()};
  for (const TensorListLaunch& launch : planTensorLists(numels, 1)) {
    TensorListMetadata<1> md{};
    for (int local = 0; local < launch.tensors; ++local) {
      md.addresses[0][local] = tensors[static_cast<std::size_t>(launch.first_tensor + local)].data();
      md.numel_for_tensor[local] = numels[static_cast<std::size_t>(launch.first_tensor + local)];
    }
    for (std::size_t b = 0; b < launch.block_to_chunk.size(); ++b) {
      md.block_to_tensor[b] = launch.block_to_tensor[b];
      md.block_to_chunk[b] = launch.block_to_chunk[b];
    }
    md.start_tensor_this_launch = launch.first_tensor;
    md.blocks_this_launch = static_cast<int>(launch.block_to_chunk.size());
    for (int b = 0; b < md.blocks_this_launch; ++b) body::multiTensorBlock(md, f, b, 0, 1);
  }
  // The same bytes hashed chunk by chunk in order.
  std::vector<std::uint64_t> expected;
  for (const std::vector<float>& v : tensors) {
    for (std::size_t start = 0; start < v.size(); start += kChunkSize) {
      std::uint64_t h = math::kFnvOffset;
      for (std::size_t i = start; i < std::min(v.size(), start + kChunkSize); ++i) {
        std::uint32_t word = 0;
        std::memcpy(&word, &v[i], sizeof word);
        h = math::fnvWord(h, word);
      }
      expected.push_back(h);
    }
  }
  EXPECT_EQ(hashes, expected);
  EXPECT_EQ(foldChunkHashes(hashes), foldChunkHashes(expected));
  EXPECT_NE(foldChunkHashes(hashes), foldChunkHashes(std::vector<std::uint64_t>(hashes.rbegin(), hashes.rend())));
  EXPECT_EQ(probe_values[0], tensors[0].front());
  EXPECT_EQ(probe_values[1], tensors[0].back());
  EXPECT_EQ(probe_values[3], tensors[1].back());
  EXPECT_EQ(probe_values[5], tensors[2].back());
}

TEST(KernelBodies, SgdOverAPlanUpdatesEveryElementOnce) {
  const std::vector<std::int64_t> numels{2 * kChunkSize + 3, 9};
  std::vector<std::vector<float>> params, grads;
  for (std::int64_t n : numels) {
    params.emplace_back(static_cast<std::size_t>(n), 1.0f);
    grads.emplace_back(static_cast<std::size_t>(n), 2.0f);
  }
  for (const TensorListLaunch& launch : planTensorLists(numels, 2)) {
    TensorListMetadata<2> md{};
    for (int local = 0; local < launch.tensors; ++local) {
      const auto t = static_cast<std::size_t>(launch.first_tensor + local);
      md.addresses[0][local] = params[t].data();
      md.addresses[1][local] = grads[t].data();
      md.numel_for_tensor[local] = numels[t];
    }
    for (std::size_t b = 0; b < launch.block_to_chunk.size(); ++b) {
      md.block_to_tensor[b] = launch.block_to_tensor[b];
      md.block_to_chunk[b] = launch.block_to_chunk[b];
    }
    md.blocks_this_launch = static_cast<int>(launch.block_to_chunk.size());
    for (int b = 0; b < md.blocks_this_launch; ++b) body::multiTensorBlock(md, SgdFunctor{0.25f}, b, 0, 1);
  }
  for (const std::vector<float>& p : params)
    for (float v : p) ASSERT_EQ(v, 0.5f);
}

TEST(KernelBodies, GemmsOfOneToken) {
  // a [1 x 2], b [2 x 3]: c = a * b + bias, and a' [1 x 3] * b^T.
  const float a[2] = {1.0f, 2.0f};
  const float b[6] = {1, 2, 3, 4, 5, 6};
  const float bias[3] = {0.5f, 0.5f, 0.5f};
  float c[3] = {};
  GemmArgs g{a, b, bias, c, 1, 2, 3, {}};
  for (int i = 0; i < 3; ++i) body::gemmAB(g, i);
  EXPECT_EQ(c[0], 9.5f);
  EXPECT_EQ(c[2], 15.5f);
  const float grad_out[3] = {1.0f, 0.0f, -1.0f};
  float grad_in[2] = {};
  GemmArgs t{grad_out, b, nullptr, grad_in, 1, 2, 3, {}};
  for (int i = 0; i < 2; ++i) body::gemmABt(t, i);
  EXPECT_EQ(grad_in[0], -2.0f);
  EXPECT_EQ(grad_in[1], -2.0f);
  float wgrad[6] = {};
  GemmArgs w{nullptr, b, nullptr, wgrad, 1, 2, 3, GradRule{0.5f, 1.0f, 0}};
  for (int i = 0; i < 6; ++i) body::gemmWeightGrad(w, i);
  EXPECT_EQ(wgrad[5], 4.0f);
  w.rule.accumulate = 1;
  body::gemmWeightGrad(w, 5);
  EXPECT_EQ(wgrad[5], 8.0f);
}

}  // namespace
}  // namespace framework_trainer
