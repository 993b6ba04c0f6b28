// What kernel names say about their parameters: each name below is what g++ (and nvcc, whose
// kernels follow the same Itanium C++ ABI) mangles for the signature beside it, demangled by
// the C++ runtime as the kernel registry does.
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "syncopate/dispatch/param_types.hpp"

namespace syncopate::preload {
namespace {

std::string demangled(const char* mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && text != nullptr ? text : mangled;
  std::free(text);
  return out;
}

// "P8" for a pointer, "S4" for a 4-byte scalar, "V" for a parameter scanned by value.
std::vector<std::string> kinds(const char* mangled) {
  ParamType types[16];
  const int count = parameterTypesOf(demangled(mangled), types, 16);
  std::vector<std::string> out;
  if (count < 0) return {"not a signature"};
  for (int i = 0; i < count; ++i) {
    switch (types[i].kind) {
      case ParamKind::Pointer: out.push_back("P" + std::to_string(types[i].size)); break;
      case ParamKind::Scalar: out.push_back("S" + std::to_string(types[i].size)); break;
      case ParamKind::Scanned: out.push_back("V" + std::to_string(types[i].size)); break;
    }
  }
  return out;
}

using Kinds = std::vector<std::string>;

TEST(ParamTypes, TemplateArgumentsResolvedInTheSignature) {
  // template <class T> void scale(T* out, const T* in, T factor, int n), T = float
  EXPECT_EQ(kinds("_Z5scaleIfEvPT_PKS0_S0_i"), (Kinds{"P8", "P8", "S4", "S4"}));
}

TEST(ParamTypes, ReferencesArePointers) {
  // refs(const foo::Params&, float&, int&&)
  EXPECT_EQ(kinds("_Z4refsRKN3foo6ParamsERfOi"), (Kinds{"P8", "P8", "P8"}));
}

TEST(ParamTypes, ArraysThroughPointersAndAggregatesByValue) {
  // arrays(float (*)[4], int (&)[3], std::array<float*, 4>, foo::Pair<double, 2>)
  EXPECT_EQ(kinds("_Z6arraysPA4_fRA3_iSt5arrayIPfLm4EEN3foo4PairIdLi2EEE"), (Kinds{"P8", "P8", "V0", "V0"}));
}

TEST(ParamTypes, FunctionPointersWithTheirOwnParameterLists) {
  // fnptr(void (*)(int, float), int, float* (*)(std::pair<int, long>))
  EXPECT_EQ(kinds("_Z5fnptrPFvifEiPFPfSt4pairIilEE"), (Kinds{"P8", "S4", "P8"}));
}

TEST(ParamTypes, NestedTemplatesWithCommas) {
  // nested<foo::Pair<int, 3>, float>(foo::Pair<int, 3>, bar::Map<foo::Pair<int, 3>,
  //                                  std::pair<int, float>>, unsigned long long, bool)
  EXPECT_EQ(kinds("_Z6nestedIN3foo4PairIiLi3EEEfEvT_N3bar3MapIS3_St4pairIiT0_EEEyb"),
            (Kinds{"V0", "V0", "S8", "S1"}));
  // A template argument's expression holds a '>' inside parentheses:
  // expr<3>(foo::Pair<int, (3 > 2 ? 1 : 2)>, int*)
  EXPECT_EQ(kinds("_Z4exprILi3EEvN3foo4PairIiXqugtT_Li2ELi1ELi2EEEEPi"), (Kinds{"V0", "P8"}));
}

TEST(ParamTypes, ScalarsEnumsAndQualifiedPointers) {
  // scalars(char, short, unsigned, long, double, foo::Mode, const volatile float* __restrict__)
  EXPECT_EQ(kinds("_Z7scalarscsjldN3foo4ModeEPVKf"), (Kinds{"S1", "S2", "S4", "S8", "S8", "V0", "P8"}));
}

TEST(ParamTypes, NoParametersAndExternC) {
  EXPECT_EQ(kinds("_Z4nonev"), Kinds{});
  EXPECT_EQ(kinds("inspect_gradient"), Kinds{"not a signature"});  // extern "C": not mangled
  ParamType types[1];
  EXPECT_EQ(parameterTypesOf("", types, 1), -1);
  EXPECT_EQ(parameterTypesOf("broken)", types, 1), -1);
}

TEST(ParamTypes, CountsParametersBeyondTheRoomGiven) {
  ParamType types[2];
  EXPECT_EQ(parameterTypesOf(demangled("_Z7scalarscsjldN3foo4ModeEPVKf"), types, 2), 7);
  EXPECT_EQ(types[1].kind, ParamKind::Scalar);
  EXPECT_EQ(types[1].size, 2);
}

}  // namespace
}  // namespace syncopate::preload
