#include "framework_trainer/tensor_lists.hpp"

#include <gtest/gtest.h>

namespace framework_trainer {
namespace {

std::int64_t blocksOf(const std::vector<TensorListLaunch>& launches) {
  std::int64_t blocks = 0;
  for (const TensorListLaunch& l : launches) blocks += static_cast<std::int64_t>(l.block_to_chunk.size());
  return blocks;
}

TEST(TensorLists, ALaunchHoldsAtMost320Blocks) {
  // 500 chunks and a bit: the first launch is full, the tensor goes on in the second.
  const std::vector<std::int64_t> numels{500LL * kChunkSize + 7, 10};
  const std::vector<TensorListLaunch> launches = planTensorLists(numels, 2);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].first_tensor, 0);
  EXPECT_EQ(launches[0].tensors, 1);
  EXPECT_EQ(launches[0].block_to_chunk.size(), 320u);
  EXPECT_EQ(launches[0].elements, 320LL * kChunkSize);
  EXPECT_EQ(launches[1].first_tensor, 0);  // cut mid-way: continues
  EXPECT_EQ(launches[1].tensors, 2);
  EXPECT_EQ(launches[1].block_to_chunk.front(), 320);
  EXPECT_EQ(launches[1].block_to_chunk.back(), 0);
  EXPECT_EQ(launches[1].block_to_tensor.back(), 1);
  EXPECT_EQ(launches[1].elements, 180LL * kChunkSize + 7 + 10);
}

TEST(TensorLists, ALaunchHoldsAsManyTensorsAsItsDepthAllows) {
  const std::vector<std::int64_t> numels(150, 100);
  const std::vector<TensorListLaunch> depth1 = planTensorLists(numels, 1);
  ASSERT_EQ(depth1.size(), 2u);
  EXPECT_EQ(depth1[0].tensors, 110);
  EXPECT_EQ(depth1[1].first_tensor, 110);
  EXPECT_EQ(depth1[1].tensors, 40);
  const std::vector<TensorListLaunch> depth2 = planTensorLists(numels, 2);
  ASSERT_EQ(depth2.size(), 3u);
  EXPECT_EQ(depth2[0].tensors, 64);
  EXPECT_EQ(depth2[2].tensors, 150 - 128);
  EXPECT_EQ(blocksOf(depth2), 150);
}

TEST(TensorLists, EmptyTensorsHaveNoBlocksAndBadDepthsAreRefused) {
  const std::vector<TensorListLaunch> launches = planTensorLists({0, 5, 0, 6}, 2);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].first_tensor, 1);
  EXPECT_EQ(launches[0].block_to_tensor, (std::vector<unsigned char>{0, 2}));
  EXPECT_EQ(launches[0].elements, 11);
  EXPECT_TRUE(planTensorLists({}, 1).empty());
  EXPECT_THROW(planTensorLists({1}, 0), std::invalid_argument);
  EXPECT_THROW(planTensorLists({1}, 6), std::invalid_argument);
}

TEST(TensorLists, TheMetadataFitsAKernelParameterBuffer) {
  // CUDA's limit before 12.1 was 4 KB of parameters; PyTorch's sizes stay within it.
  EXPECT_LT(sizeof(TensorListMetadata<1>), 4096u - 64u);
  EXPECT_LT(sizeof(TensorListMetadata<2>), 4096u - 64u);
}

}  // namespace
}  // namespace framework_trainer
