/* The ABI of NCCL's profiler plugin, version 5 (NCCL 2.28), declared by this project for both
 * sides of it: the collector exports `ncclProfiler_v5` (collector/src/recorder/nccl_profiler.cpp)
 * and simgpu's libnccl.so.2 loads and calls plugins through it (simgpu/nccl/src/profiler.cpp).
 * NCCL's own ext-profiler headers are not shipped by the CUDA toolkit; the layout below follows
 * them field by field, and tests/plugin_abi/nccl_plugin_layout_test.cpp checks sizes and offsets
 * against NCCL's real headers (read in place from ../shared/third_party/nccl-plugin-api/), so a
 * plugin built for NCCL loads here unchanged and this plugin loads into NCCL.
 *
 * A plugin is a shared library named by NCCL_PROFILER_PLUGIN (a path, or NAME for
 * libnccl-profiler-NAME.so; "none" disables it; unset tries libnccl-profiler.so) that exports
 * `ncclProfiler_v5`, a struct of function pointers. The events NCCL reports:
 *   GroupApi      an API group (an implicit one around a call made outside a group)
 *     CollApi     a collective call (func "AllReduce", ...), parent: its GroupApi
 *     P2pApi      a send or receive call ("Send", "Recv")
 *     KernelLaunch one stream operation put on a stream by the group's end
 *   Coll / P2p    the operation running on the stream, parent: its CollApi/P2pApi
 *     KernelCh    one channel of it, with pTimer = the channel's start (startEvent) and its end
 *                 (recordEventState KernelChStop)
 *   ProxyOp / ProxyStep / ProxyCtrl / NetPlugin  the network proxy's events
 * Handles a plugin returns are passed back as parentObj, even after the parent stopped, as
 * NCCL does. What simgpu reports of these is in docs/simgpu-nccl.md. */
#ifndef SYNCOPATE_PLUGIN_ABI_NCCL_PROFILER_V5_H_
#define SYNCOPATE_PLUGIN_ABI_NCCL_PROFILER_V5_H_

#include <nccl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "syncopate/plugin_abi/nccl_plugin_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event types (bits of the activation mask a plugin returns from init). */
enum {
  ncclProfileGroup = (1 << 0),
  ncclProfileColl = (1 << 1),
  ncclProfileP2p = (1 << 2),
  ncclProfileProxyOp = (1 << 3),
  ncclProfileProxyStep = (1 << 4),
  ncclProfileProxyCtrl = (1 << 5),
  ncclProfileKernelCh = (1 << 6),
  ncclProfileNetPlugin = (1 << 7),
  ncclProfileGroupApi = (1 << 8),
  ncclProfileCollApi = (1 << 9),
  ncclProfileP2pApi = (1 << 10),
  ncclProfileKernelLaunch = (1 << 11)
};

/* Event states. */
typedef enum { ncclProfilerKernelChStop = 22 } ncclProfilerEventState_v5_t;

typedef struct {
  uint64_t type;   /* one event type bit */
  void* parentObj; /* the parent event's handle, or NULL */
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v5_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

typedef struct {
  const char* name;
  /* Once per communicator rank, after it joined; sets *eActivationMask. */
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v5_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  /* When the communicator rank goes (after its last operation ran). */
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

#ifdef __cplusplus
}
#endif

#endif
