// The reductions in fixed rank order, type by type, against values worked out by hand.
#include "simgpu/nccl/datatype.hpp"
#include "simgpu/nccl/reduction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace simgpu::nccl {
namespace {

template <typename T>
std::vector<T> reduce(ncclDataType_t type, RedOp op, const std::vector<std::vector<T>>& ranks) {
  std::vector<const void*> inputs;
  for (const auto& r : ranks) inputs.push_back(r.data());
  std::vector<T> out(ranks.front().size());
  reduceInRankOrder(type, op, inputs.data(), static_cast<int>(inputs.size()), out.data(), out.size());
  return out;
}

TEST(Reduction, IntegerSumAndProdWrapAround) {
  using L = std::numeric_limits<std::int32_t>;
  EXPECT_EQ(reduce<std::int32_t>(ncclInt32, RedOp::Sum, {{L::max()}, {1}})[0], L::min());
  EXPECT_EQ(reduce<std::int8_t>(ncclInt8, RedOp::Prod, {{16}, {16}})[0], 0);      // 256 wraps to 0
  EXPECT_EQ(reduce<std::uint8_t>(ncclUint8, RedOp::Sum, {{200}, {100}})[0], 44);  // 300 - 256
  EXPECT_EQ(reduce<std::uint64_t>(ncclUint64, RedOp::Prod, {{1ULL << 40}, {1ULL << 30}})[0], 0u);
  EXPECT_EQ(reduce<std::int64_t>(ncclInt64, RedOp::Sum, {{-5}, {7}, {-9}})[0], -7);
}

TEST(Reduction, IntegerAvgTruncatesTowardsZero) {
  EXPECT_EQ(reduce<std::int32_t>(ncclInt32, RedOp::Avg, {{-3}, {-4}})[0], -3);  // -7 / 2
  EXPECT_EQ(reduce<std::uint32_t>(ncclUint32, RedOp::Avg, {{3}, {4}, {6}})[0], 4u);  // 13 / 3
  EXPECT_EQ(reduce<std::int8_t>(ncclInt8, RedOp::Avg, {{100}, {100}})[0], -28);  // sum wraps to -56
}

TEST(Reduction, MaxMinOnIntegersAndFloats) {
  EXPECT_EQ(reduce<std::int8_t>(ncclInt8, RedOp::Max, {{-3, 4}, {-7, 9}, {2, -1}}), (std::vector<std::int8_t>{2, 9}));
  EXPECT_EQ(reduce<std::uint64_t>(ncclUint64, RedOp::Min, {{5, 1}, {3, 8}}), (std::vector<std::uint64_t>{3, 1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(reduce<float>(ncclFloat32, RedOp::Max, {{nan}, {2.5f}})[0], 2.5f);  // fmax ignores NaN
  EXPECT_EQ(reduce<double>(ncclFloat64, RedOp::Min, {{-0.5}, {1.0}})[0], -0.5);
}

TEST(Reduction, Float32SumsInRankOrder) {
  // (1e8 + 1) + -1e8 loses the 1 in float; another order would keep it.
  EXPECT_EQ(reduce<float>(ncclFloat32, RedOp::Sum, {{1e8f}, {1.0f}, {-1e8f}})[0], 0.0f);
  EXPECT_EQ(reduce<float>(ncclFloat32, RedOp::Sum, {{1e8f}, {-1e8f}, {1.0f}})[0], 1.0f);
  EXPECT_EQ(reduce<float>(ncclFloat32, RedOp::Avg, {{1.0f}, {2.0f}, {4.0f}})[0], 7.0f / 3.0f);
  EXPECT_EQ(reduce<double>(ncclFloat64, RedOp::Prod, {{1.5}, {-2.0}, {0.25}})[0], -0.75);
}

TEST(Reduction, Float16AccumulatesInFloatAndRoundsOnce) {
  // 1 + 2^-11 + 2^-11: rounding to half after each step would give 1 (ties to even);
  // accumulating in float gives 1 + 2^-10, which half represents exactly.
  const std::uint16_t one = floatToHalf(1.0f);
  const std::uint16_t tiny = floatToHalf(std::ldexp(1.0f, -11));
  const auto out = reduce<std::uint16_t>(ncclFloat16, RedOp::Sum, {{one}, {tiny}, {tiny}});
  EXPECT_EQ(halfToFloat(out[0]), 1.0f + std::ldexp(1.0f, -10));
  // Overflow of half gives infinity.
  const std::uint16_t big = floatToHalf(60000.0f);
  EXPECT_TRUE(std::isinf(halfToFloat(reduce<std::uint16_t>(ncclFloat16, RedOp::Sum, {{big}, {big}})[0])));
  // Avg rounds once: (1 + 2 + 2) / 3 = 1.6666..., the nearest half is 1707 / 1024.
  const auto avg = reduce<std::uint16_t>(ncclFloat16, RedOp::Avg, {{floatToHalf(1)}, {floatToHalf(2)}, {floatToHalf(2)}});
  EXPECT_EQ(halfToFloat(avg[0]), 1707.0f / 1024.0f);
}

TEST(Reduction, Bfloat16AccumulatesInFloat) {
  // bfloat16 has 8 significant bits: 256 + 1 + 1 is 256 step by step but 258 in float.
  const auto out = reduce<std::uint16_t>(ncclBfloat16, RedOp::Sum,
                                         {{floatToBfloat16(256)}, {floatToBfloat16(1)}, {floatToBfloat16(1)}});
  EXPECT_EQ(bfloat16ToFloat(out[0]), 258.0f);
  EXPECT_EQ(bfloat16ToFloat(reduce<std::uint16_t>(ncclBfloat16, RedOp::Prod, {{floatToBfloat16(-3)}, {floatToBfloat16(0.5f)}})[0]), -1.5f);
}

TEST(Reduction, Fp8SaturatesToLargestFinite) {
  const std::uint8_t e4 = floatToFp8e4m3(448.0f);
  EXPECT_EQ(fp8e4m3ToFloat(reduce<std::uint8_t>(ncclFloat8e4m3, RedOp::Sum, {{e4}, {e4}})[0]), 448.0f);
  const std::uint8_t e5 = floatToFp8e5m2(57344.0f);
  EXPECT_EQ(fp8e5m2ToFloat(reduce<std::uint8_t>(ncclFloat8e5m2, RedOp::Sum, {{e5}, {e5}})[0]), 57344.0f);
  EXPECT_EQ(fp8e4m3ToFloat(reduce<std::uint8_t>(ncclFloat8e4m3, RedOp::Max, {{floatToFp8e4m3(-2)}, {floatToFp8e4m3(1.5f)}})[0]), 1.5f);
  EXPECT_EQ(fp8e5m2ToFloat(reduce<std::uint8_t>(ncclFloat8e5m2, RedOp::Avg, {{floatToFp8e5m2(1)}, {floatToFp8e5m2(3)}})[0]), 2.0f);
}

TEST(Reduction, PreMultiplyScalesEachElementOnce) {
  std::vector<float> v{1.0f, -2.0f, 0.5f};
  const float s = 0.25f;
  preMultiply(ncclFloat32, v.data(), v.data(), v.size(), &s);
  EXPECT_EQ(v, (std::vector<float>{0.25f, -0.5f, 0.125f}));
  std::vector<std::int32_t> ints{3, -4};
  const std::int32_t k = -2;
  preMultiply(ncclInt32, ints.data(), ints.data(), ints.size(), &k);
  EXPECT_EQ(ints, (std::vector<std::int32_t>{-6, 8}));
  std::vector<std::uint16_t> halves{floatToHalf(3.0f)};
  const std::uint16_t third = floatToHalf(1.0f / 3.0f);
  preMultiply(ncclFloat16, halves.data(), halves.data(), 1, &third);
  // The product is formed in float and rounded to half once.
  EXPECT_EQ(halves[0], floatToHalf(3.0f * halfToFloat(third)));
  EXPECT_NEAR(halfToFloat(halves[0]), 1.0f, 1e-3);
}

// The invariant the tuner relies on: an element's result does not depend on the calls it
// was reduced in.
TEST(Reduction, ResultIsIndependentOfHowElementsAreSplit) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  constexpr int kRanks = 5;
  constexpr std::size_t kCount = 10007;
  for (ncclDataType_t type : {ncclFloat32, ncclFloat16, ncclBfloat16}) {
    const std::size_t es = datatypeSize(type);
    std::vector<std::vector<char>> ranks(kRanks, std::vector<char>(kCount * es));
    for (auto& r : ranks) {
      for (std::size_t i = 0; i < kCount; ++i) {
        const float x = dist(rng);
        if (type == ncclFloat32) std::memcpy(r.data() + i * 4, &x, 4);
        else {
          const std::uint16_t h = type == ncclFloat16 ? floatToHalf(x) : floatToBfloat16(x);
          std::memcpy(r.data() + i * 2, &h, 2);
        }
      }
    }
    std::vector<char> whole(kCount * es), pieces(kCount * es);
    std::vector<const void*> in;
    for (auto& r : ranks) in.push_back(r.data());
    reduceInRankOrder(type, RedOp::Sum, in.data(), kRanks, whole.data(), kCount);
    std::size_t done = 0;
    while (done < kCount) {
      const std::size_t n = std::min<std::size_t>(kCount - done, 1 + rng() % 900);
      std::vector<const void*> part;
      for (auto& r : ranks) part.push_back(r.data() + done * es);
      reduceInRankOrder(type, RedOp::Sum, part.data(), kRanks, pieces.data() + done * es, n);
      done += n;
    }
    EXPECT_EQ(whole, pieces) << datatypeName(type);
  }
}

TEST(Datatype, SizesAndNames) {
  EXPECT_EQ(datatypeSize(ncclFloat8e5m2), 1u);
  EXPECT_EQ(datatypeSize(ncclBfloat16), 2u);
  EXPECT_EQ(datatypeSize(ncclUint64), 8u);
  EXPECT_EQ(datatypeSize(static_cast<ncclDataType_t>(12)), 0u);
  EXPECT_FALSE(isValidDatatype(ncclNumTypes));
  EXPECT_FALSE(isValidDatatype(-1));
  EXPECT_STREQ(datatypeName(ncclFloat8e4m3), "float8e4m3");
}

}  // namespace
}  // namespace simgpu::nccl
