// The project's declaration of NCCL's tuner plugin ABI, version 5 (plugin_abi/nccl_tuner_v5.h),
// against NCCL's own tuner header, read in place from ../shared/third_party/nccl-plugin-api
// (never copied here): sizes, offsets and constants the preload library's tuner plugin and
// simgpu's NCCL exchange. A separate file from the profiler's check: both NCCL headers declare
// the log types, and each is held against ours on its own.
#include <gtest/gtest.h>
#include <nccl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cstddef>
#include <type_traits>

#include "same_member.hpp"
#include "syncopate/plugin_abi/nccl_tuner_v5.h"

// NCCL's tuner header includes its own err.h (ncclResult_t, already declared by nccl.h, whose
// guard it shares) and common.h; inside the namespace its declarations stay apart from ours.
namespace nccl_real {
#undef NCCL_NUM_ALGORITHMS
#undef NCCL_ALGO_UNDEF
#undef NCCL_ALGO_TREE
#undef NCCL_ALGO_RING
#undef NCCL_ALGO_COLLNET_DIRECT
#undef NCCL_ALGO_COLLNET_CHAIN
#undef NCCL_ALGO_NVLS
#undef NCCL_ALGO_NVLS_TREE
#undef NCCL_ALGO_PAT
#undef NCCL_NUM_PROTOCOLS
#undef NCCL_PROTO_UNDEF
#undef NCCL_PROTO_LL
#undef NCCL_PROTO_LL128
#undef NCCL_PROTO_SIMPLE
#undef NCCL_ALGO_PROTO_IGNORE
#undef NCCL_HW_NVLINK
#undef NCCL_HW_PCI
#undef NCCL_HW_NET
#undef NCCL_NUM_HW_LINKS
#undef NCCL_VOLTA_COMPCAP_IDX
#undef NCCL_AMPERE_COMPCAP_IDX
#undef NCCL_HOPPER_COMPCAP_IDX
#undef NCCL_BLACKWELL_COMPCAP_IDX
#undef NCCL_NUM_COMPCAPS
#undef NCCL_TUNING_SCALE_1NODE
#undef NCCL_TUNING_SCALE_2NODES
#undef NCCL_TUNING_SCALE_4NODES
#undef NCCL_NUM_TUNING_SCALES
#include "tuner/tuner.h"
}  // namespace nccl_real

namespace {

using OursConstants = ::ncclTunerConstants_v5_t;
using RealConstants = nccl_real::ncclTunerConstants_v5_t;
static_assert(sizeof(OursConstants) == sizeof(RealConstants));
SAME_MEMBER(OursConstants, RealConstants, baseLatencies);
SAME_MEMBER(OursConstants, RealConstants, hwLatencies);
SAME_MEMBER(OursConstants, RealConstants, llMaxBws);
SAME_MEMBER(OursConstants, RealConstants, perChMaxRingLL128Bws);
SAME_MEMBER(OursConstants, RealConstants, perChMaxTreeLL128Bws);
SAME_MEMBER(OursConstants, RealConstants, perChMaxTreeBws);

using OursDomains = ::ncclNvlDomainInfo_v5_t;
using RealDomains = nccl_real::ncclNvlDomainInfo_v5_t;
static_assert(sizeof(OursDomains) == sizeof(RealDomains));
SAME_MEMBER(OursDomains, RealDomains, nNvlDomains);
SAME_MEMBER(OursDomains, RealDomains, minRanksPerNvlDomain);
SAME_MEMBER(OursDomains, RealDomains, maxRanksPerNvlDomain);

using OursTuner = ::ncclTuner_v5_t;
using RealTuner = nccl_real::ncclTuner_v5_t;
static_assert(sizeof(OursTuner) == sizeof(RealTuner));
SAME_MEMBER(OursTuner, RealTuner, name);
SAME_MEMBER(OursTuner, RealTuner, init);
SAME_MEMBER(OursTuner, RealTuner, getCollInfo);
SAME_MEMBER(OursTuner, RealTuner, finalize);

static_assert(sizeof(::ncclFunc_t) == sizeof(nccl_real::ncclFunc_t));

TEST(NcclTunerAbi, FunctionsAreNcclsOwn) {
  EXPECT_EQ(static_cast<int>(ncclFuncBroadcast), static_cast<int>(nccl_real::ncclFuncBroadcast));
  EXPECT_EQ(static_cast<int>(ncclFuncReduce), static_cast<int>(nccl_real::ncclFuncReduce));
  EXPECT_EQ(static_cast<int>(ncclFuncAllGather), static_cast<int>(nccl_real::ncclFuncAllGather));
  EXPECT_EQ(static_cast<int>(ncclFuncReduceScatter), static_cast<int>(nccl_real::ncclFuncReduceScatter));
  EXPECT_EQ(static_cast<int>(ncclFuncAllReduce), static_cast<int>(nccl_real::ncclFuncAllReduce));
  EXPECT_EQ(static_cast<int>(ncclFuncSendRecv), static_cast<int>(nccl_real::ncclFuncSendRecv));
  EXPECT_EQ(static_cast<int>(ncclNumFuncs), static_cast<int>(nccl_real::ncclNumFuncs));
}

// The callbacks take NCCL's argument types, one by one: a size_t where NCCL has an int would
// pass the size checks above and still misread every call.
TEST(NcclTunerAbi, CallbacksHaveNcclsSignatures) {
  using OursInit = decltype(OursTuner::init);
  using RealInit = decltype(RealTuner::init);
  using OursGet = decltype(OursTuner::getCollInfo);
  using RealGet = decltype(RealTuner::getCollInfo);
  EXPECT_EQ(sizeof(OursInit), sizeof(RealInit));
  EXPECT_TRUE((std::is_same_v<std::invoke_result_t<OursGet, void*, ::ncclFunc_t, size_t, int, float**, int, int, int, int*>,
                              ncclResult_t>));
  EXPECT_TRUE((std::is_invocable_v<RealGet, void*, nccl_real::ncclFunc_t, size_t, int, float**, int, int, int, int*>));
  EXPECT_TRUE((std::is_invocable_v<OursInit, void**, uint64_t, size_t, size_t, ::ncclDebugLogger_t,
                                   ::ncclNvlDomainInfo_v5_t*, ::ncclTunerConstants_v5_t*>));
  EXPECT_TRUE((std::is_invocable_v<RealInit, void**, uint64_t, size_t, size_t, nccl_real::ncclDebugLogger_t,
                                   nccl_real::ncclNvlDomainInfo_v5_t*, nccl_real::ncclTunerConstants_v5_t*>));
}

TEST(NcclTunerAbi, TableDimensionsAreNcclsOwn) {
  EXPECT_EQ(sizeof(OursConstants::baseLatencies) / sizeof(double), 7u * 3u);
  EXPECT_EQ(sizeof(OursConstants::hwLatencies) / sizeof(double), 3u * 7u * 3u);
  EXPECT_EQ(sizeof(OursConstants::perChMaxRingLL128Bws) / sizeof(double), 4u * 3u);
}

}  // namespace
