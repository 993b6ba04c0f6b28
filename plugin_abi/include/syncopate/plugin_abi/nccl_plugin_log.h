/* NCCL's logging callback, which NCCL hands every plugin at init (profiler and tuner alike), as
 * NCCL's plugin headers declare it. One declaration for both plugin ABIs of plugin_abi/. */
#ifndef SYNCOPATE_PLUGIN_ABI_NCCL_PLUGIN_LOG_H_
#define SYNCOPATE_PLUGIN_ABI_NCCL_PLUGIN_LOG_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
