/* The ABI of NCCL's tuner plugin, version 5 (NCCL 2.28), declared by this project for both sides
 * of it: the preload library exports `ncclTunerPlugin_v5` (the runtime applies a plan's channel
 * counts through it; the collector records what NCCL told it) and simgpu's libnccl.so.2 loads
 * and calls tuner plugins through it. The layout follows NCCL's own tuner header field by field;
 * tests/plugin_abi/nccl_plugin_layout_test.cpp checks sizes, offsets and enumerators against it
 * (read in place from ../shared/third_party/nccl-plugin-api/).
 *
 * A tuner plugin is a shared library named by NCCL_TUNER_PLUGIN (a path, or NAME for
 * libnccl-tuner-NAME.so; unset tries libnccl-tuner.so) exporting `ncclTunerPlugin_v5`:
 *   init         once per communicator (its id, ranks, nodes), with NCCL's tuning constants,
 *                which the plugin may read and change;
 *   getCollInfo  once per collective, with its function and size in bytes: the plugin may lower
 *                the cost of an algorithm/protocol pair in NCCL's cost table to have it chosen,
 *                and may set *nChannels (> 0) to the number of channels, hence CTAs and SMs, the
 *                collective runs on; left at 0, NCCL chooses;
 *   finalize     when the communicator is destroyed. */
#ifndef SYNCOPATE_PLUGIN_ABI_NCCL_TUNER_V5_H_
#define SYNCOPATE_PLUGIN_ABI_NCCL_TUNER_V5_H_

#include <nccl.h>
#include <stddef.h>
#include <stdint.h>

#include "syncopate/plugin_abi/nccl_plugin_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The collective a getCollInfo call is about (NCCL's ncclFunc_t). */
typedef enum {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclNumFuncs = 8
} ncclFunc_t;

/* Rows and columns of the cost table: collCostTable[algorithm][protocol], in microseconds;
 * NCCL_ALGO_PROTO_IGNORE marks a pair NCCL will not use. */
#define NCCL_NUM_ALGORITHMS 7
#define NCCL_ALGO_UNDEF -1
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6

#define NCCL_NUM_PROTOCOLS 3
#define NCCL_PROTO_UNDEF -1
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2

#define NCCL_ALGO_PROTO_IGNORE -1.0

#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2
#define NCCL_NUM_HW_LINKS 3

/* Rows of the per-generation constants (the device's compute capability). */
#define NCCL_VOLTA_COMPCAP_IDX 0
#define NCCL_AMPERE_COMPCAP_IDX 1
#define NCCL_HOPPER_COMPCAP_IDX 2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_NUM_COMPCAPS 4

/* Columns of the per-generation constants (the communicator's node count: 1, 2, 4 or more). */
#define NCCL_TUNING_SCALE_1NODE 0
#define NCCL_TUNING_SCALE_2NODES 1
#define NCCL_TUNING_SCALE_4NODES 2
#define NCCL_NUM_TUNING_SCALES 3

typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

/* NCCL's tuning constants: latencies in microseconds, bandwidths in GB/s. The per-channel
 * maxima bound what one channel moves: a collective on n channels moves at most n times it. */
typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double llMaxBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       ncclNvlDomainInfo_v5_t* nvlDomainInfo, ncclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;

#ifdef __cplusplus
}
#endif

#endif
