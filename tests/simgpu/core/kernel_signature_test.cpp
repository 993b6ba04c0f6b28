// Parameter layouts derived from mangled kernel names (names as nvcc/g++ mangle them).
#include <simgpu/core/kernels.hpp>

#include <gtest/gtest.h>

namespace simgpu {
namespace {

struct Expected {
  ParamType type;
  std::size_t size;
  std::size_t offset;
};

void expectLayout(const KernelSignature& k, const std::vector<Expected>& expected) {
  ASSERT_TRUE(k.params_known);
  ASSERT_TRUE(k.layout_known);
  ASSERT_EQ(k.params.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(k.params[i].type, expected[i].type) << "parameter " << i;
    EXPECT_EQ(k.params[i].size, expected[i].size) << "parameter " << i;
    EXPECT_EQ(k.params[i].offset, expected[i].offset) << "parameter " << i;
  }
}

constexpr auto P = ParamType::Pointer;
constexpr auto S = ParamType::Signed;
constexpr auto U = ParamType::Unsigned;
constexpr auto F = ParamType::Float;
constexpr auto B = ParamType::Bool;

TEST(KernelSignature, PlainKernelWithSubstitutions) {
  // void linear_fwd(float*, const float*, const float*, int x6): S1_ stands for "const float*".
  const KernelSignature k = describeKernel("_Z10linear_fwdPfPKfS1_iiiiii");
  EXPECT_EQ(k.name, "linear_fwd");
  expectLayout(k, {{P, 8, 0}, {P, 8, 8}, {P, 8, 16}, {S, 4, 24}, {S, 4, 28}, {S, 4, 32},
                   {S, 4, 36}, {S, 4, 40}, {S, 4, 44}});
  EXPECT_EQ(k.params_bytes, 48u);
}

TEST(KernelSignature, ScalarsAreAlignedNaturally) {
  // void axpy(float, float*, const float*, int)
  const KernelSignature k = describeKernel("_Z4axpyfPfPKfi");
  EXPECT_EQ(k.name, "axpy");
  expectLayout(k, {{F, 4, 0}, {P, 8, 8}, {P, 8, 16}, {S, 4, 24}});
  EXPECT_EQ(k.params_bytes, 28u);
}

TEST(KernelSignature, TemplateParametersResolveToTheirArguments) {
  // template <typename T> void fill(T*, T, size_t) with T = float; S0_ is T_ here.
  const KernelSignature k = describeKernel("_Z4fillIfEvPT_S0_m");
  EXPECT_EQ(k.name, "fill");
  expectLayout(k, {{P, 8, 0}, {F, 4, 8}, {U, 8, 16}});
}

TEST(KernelSignature, NamespacesAndNonTypeTemplateArguments) {
  // a::b::k2<float, 4>(float*, unsigned long long, bool, short, unsigned char)
  const KernelSignature k = describeKernel("_ZN1a1b2k2IfLi4EEEvPT_ybsh");
  EXPECT_EQ(k.name, "k2");
  expectLayout(k, {{P, 8, 0}, {U, 8, 8}, {B, 1, 16}, {S, 2, 18}, {U, 1, 20}});
}

TEST(KernelSignature, ParameterPacksExpand) {
  // kv<int, float>(int, float) and kp<double, char>(const double*, const char*, int)
  expectLayout(describeKernel("_Z2kvIJifEEvDpT_"), {{S, 4, 0}, {F, 4, 4}});
  expectLayout(describeKernel("_Z2kpIJdcEEvDpPKT_i"), {{P, 8, 0}, {P, 8, 8}, {S, 4, 16}});
}

TEST(KernelSignature, ReferencesAndExtendedBuiltins) {
  expectLayout(describeKernel("_Z4krefRiOKfPd"), {{P, 8, 0}, {P, 8, 8}, {P, 8, 16}});
  // kh(_Float16, __int128, char16_t)
  expectLayout(describeKernel("_Z2khDF16_nDs"), {{F, 2, 0}, {S, 16, 16}, {U, 2, 32}});
}

TEST(KernelSignature, NoParameters) {
  const KernelSignature k = describeKernel("_Z3kv0v");
  EXPECT_EQ(k.name, "kv0");
  expectLayout(k, {});
}

TEST(KernelSignature, ClassParametersLeaveTheLayoutUnknownButTypesKnown) {
  // ns::withS(ns::S, int*, long): the struct's size is not in the name.
  const KernelSignature k = describeKernel("_ZN2ns5withSENS_1SEPil");
  EXPECT_EQ(k.name, "withS");
  ASSERT_TRUE(k.params_known);
  EXPECT_FALSE(k.layout_known);
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].type, ParamType::Other);
  EXPECT_EQ(k.params[1].type, ParamType::Pointer);
  EXPECT_EQ(k.params[2].type, ParamType::Signed);
  // An enum is a named type too.
  EXPECT_FALSE(describeKernel("_Z3ken1Ei").layout_known);
}

TEST(KernelSignature, ExternCKernelsHaveNoSignature) {
  const KernelSignature k = describeKernel("cfun");
  EXPECT_EQ(k.name, "cfun");
  EXPECT_FALSE(k.params_known);
  EXPECT_FALSE(k.layout_known);
}

TEST(KernelSignature, GarbageIsNotASignature) {
  const KernelSignature k = describeKernel("_Zgarbage");
  EXPECT_FALSE(k.params_known);
  EXPECT_EQ(k.name, "_Zgarbage");
}

}  // namespace
}  // namespace simgpu
