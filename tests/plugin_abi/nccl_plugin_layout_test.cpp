// The project's declaration of NCCL's profiler plugin ABI (plugin_abi/) against NCCL's own
// headers, read in place from ../shared/third_party/nccl-plugin-api (never copied here): every
// size, offset and enumerator the two sides exchange must be the same, or a plugin built with
// one would misread the other. Checked at compile time; the test body repeats the checks that
// name the mismatch at run time too.
#include <gtest/gtest.h>
#include <nccl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <cstddef>

#include "same_member.hpp"
#include "syncopate/plugin_abi/nccl_profiler_v5.h"

// NCCL's headers declare the same names in the global scope; a namespace keeps them apart. They
// use ncclResult_t without declaring it (a plugin includes nccl.h or its err.h first): the
// global one from nccl.h is found.
namespace nccl_real {
#include "profiler/profiler.h"
}  // namespace nccl_real

namespace {

using Ours = ::ncclProfilerEventDescr_v5_t;
using Real = nccl_real::ncclProfilerEventDescr_v5_t;

static_assert(sizeof(Ours) == sizeof(Real));
static_assert(alignof(Ours) == alignof(Real));
SAME_MEMBER(Ours, Real, type);
SAME_MEMBER(Ours, Real, parentObj);
SAME_MEMBER(Ours, Real, rank);
SAME_MEMBER(Ours, Real, groupApi.graphCaptured);
SAME_MEMBER(Ours, Real, groupApi.groupDepth);
SAME_MEMBER(Ours, Real, collApi.func);
SAME_MEMBER(Ours, Real, collApi.count);
SAME_MEMBER(Ours, Real, collApi.datatype);
SAME_MEMBER(Ours, Real, collApi.root);
SAME_MEMBER(Ours, Real, collApi.stream);
SAME_MEMBER(Ours, Real, collApi.graphCaptured);
SAME_MEMBER(Ours, Real, p2pApi.func);
SAME_MEMBER(Ours, Real, p2pApi.count);
SAME_MEMBER(Ours, Real, p2pApi.datatype);
SAME_MEMBER(Ours, Real, p2pApi.stream);
SAME_MEMBER(Ours, Real, p2pApi.graphCaptured);
SAME_MEMBER(Ours, Real, kernelLaunch.stream);
SAME_MEMBER(Ours, Real, coll.seqNumber);
SAME_MEMBER(Ours, Real, coll.func);
SAME_MEMBER(Ours, Real, coll.sendBuff);
SAME_MEMBER(Ours, Real, coll.recvBuff);
SAME_MEMBER(Ours, Real, coll.count);
SAME_MEMBER(Ours, Real, coll.root);
SAME_MEMBER(Ours, Real, coll.datatype);
SAME_MEMBER(Ours, Real, coll.nChannels);
SAME_MEMBER(Ours, Real, coll.nWarps);
SAME_MEMBER(Ours, Real, coll.algo);
SAME_MEMBER(Ours, Real, coll.proto);
SAME_MEMBER(Ours, Real, coll.parentGroup);
SAME_MEMBER(Ours, Real, p2p.func);
SAME_MEMBER(Ours, Real, p2p.buff);
SAME_MEMBER(Ours, Real, p2p.datatype);
SAME_MEMBER(Ours, Real, p2p.count);
SAME_MEMBER(Ours, Real, p2p.peer);
SAME_MEMBER(Ours, Real, p2p.nChannels);
SAME_MEMBER(Ours, Real, p2p.parentGroup);
SAME_MEMBER(Ours, Real, proxyOp.pid);
SAME_MEMBER(Ours, Real, proxyOp.channelId);
SAME_MEMBER(Ours, Real, proxyOp.peer);
SAME_MEMBER(Ours, Real, proxyOp.nSteps);
SAME_MEMBER(Ours, Real, proxyOp.chunkSize);
SAME_MEMBER(Ours, Real, proxyOp.isSend);
SAME_MEMBER(Ours, Real, proxyStep.step);
SAME_MEMBER(Ours, Real, kernelCh.channelId);
SAME_MEMBER(Ours, Real, kernelCh.pTimer);
SAME_MEMBER(Ours, Real, netPlugin.id);
SAME_MEMBER(Ours, Real, netPlugin.data);

using OursArgs = ::ncclProfilerEventStateArgs_v5_t;
using RealArgs = nccl_real::ncclProfilerEventStateArgs_v5_t;
static_assert(sizeof(OursArgs) == sizeof(RealArgs));
SAME_MEMBER(OursArgs, RealArgs, proxyStep.transSize);
SAME_MEMBER(OursArgs, RealArgs, proxyCtrl.appendedProxyOps);
SAME_MEMBER(OursArgs, RealArgs, netPlugin.data);
SAME_MEMBER(OursArgs, RealArgs, kernelCh.pTimer);

using OursPlugin = ::ncclProfiler_v5_t;
using RealPlugin = nccl_real::ncclProfiler_v5_t;
static_assert(sizeof(OursPlugin) == sizeof(RealPlugin));
SAME_MEMBER(OursPlugin, RealPlugin, name);
SAME_MEMBER(OursPlugin, RealPlugin, init);
SAME_MEMBER(OursPlugin, RealPlugin, startEvent);
SAME_MEMBER(OursPlugin, RealPlugin, stopEvent);
SAME_MEMBER(OursPlugin, RealPlugin, recordEventState);
SAME_MEMBER(OursPlugin, RealPlugin, finalize);

static_assert(sizeof(::ncclProfilerEventState_v5_t) == sizeof(nccl_real::ncclProfilerEventState_v5_t));
static_assert(sizeof(::ncclDebugLogLevel) == sizeof(nccl_real::ncclDebugLogLevel));

TEST(NcclProfilerAbi, EventTypeBitsAreNcclsOwn) {
  EXPECT_EQ(ncclProfileGroup, nccl_real::ncclProfileGroup);
  EXPECT_EQ(ncclProfileColl, nccl_real::ncclProfileColl);
  EXPECT_EQ(ncclProfileP2p, nccl_real::ncclProfileP2p);
  EXPECT_EQ(ncclProfileProxyOp, nccl_real::ncclProfileProxyOp);
  EXPECT_EQ(ncclProfileProxyStep, nccl_real::ncclProfileProxyStep);
  EXPECT_EQ(ncclProfileProxyCtrl, nccl_real::ncclProfileProxyCtrl);
  EXPECT_EQ(ncclProfileKernelCh, nccl_real::ncclProfileKernelCh);
  EXPECT_EQ(ncclProfileNetPlugin, nccl_real::ncclProfileNetPlugin);
  EXPECT_EQ(ncclProfileGroupApi, nccl_real::ncclProfileGroupApi);
  EXPECT_EQ(ncclProfileCollApi, nccl_real::ncclProfileCollApi);
  EXPECT_EQ(ncclProfileP2pApi, nccl_real::ncclProfileP2pApi);
  EXPECT_EQ(ncclProfileKernelLaunch, nccl_real::ncclProfileKernelLaunch);
}

TEST(NcclProfilerAbi, EventStatesAndLogLevelsAreNcclsOwn) {
  EXPECT_EQ(static_cast<int>(ncclProfilerKernelChStop), static_cast<int>(nccl_real::ncclProfilerKernelChStop));
  EXPECT_EQ(static_cast<int>(NCCL_LOG_NONE), static_cast<int>(nccl_real::NCCL_LOG_NONE));
  EXPECT_EQ(static_cast<int>(NCCL_LOG_WARN), static_cast<int>(nccl_real::NCCL_LOG_WARN));
  EXPECT_EQ(static_cast<int>(NCCL_LOG_INFO), static_cast<int>(nccl_real::NCCL_LOG_INFO));
  EXPECT_EQ(static_cast<int>(NCCL_LOG_TRACE), static_cast<int>(nccl_real::NCCL_LOG_TRACE));
}

// The same members, by type as well as by place: a bool where NCCL has an int would pass the
// size checks on some members but not mean the same thing.
TEST(NcclProfilerAbi, MembersHaveNcclsTypes) {
  EXPECT_TRUE((std::is_same_v<decltype(Ours::groupApi.graphCaptured), decltype(Real::groupApi.graphCaptured)>));
  EXPECT_TRUE((std::is_same_v<decltype(Ours::collApi.graphCaptured), decltype(Real::collApi.graphCaptured)>));
  EXPECT_TRUE((std::is_same_v<decltype(Ours::coll.nChannels), decltype(Real::coll.nChannels)>));
  EXPECT_TRUE((std::is_same_v<decltype(Ours::kernelCh.pTimer), decltype(Real::kernelCh.pTimer)>));
  EXPECT_TRUE((std::is_same_v<decltype(Ours::proxyOp.pid), decltype(Real::proxyOp.pid)>));
}

}  // namespace
