/* The versioned C interface of the preload library (libsyncopate_preload.so), for programs
 * and tools that want to talk to the collector running inside their own process: benchmarks
 * and tests read its counters, a program can ask for an immediate flush. Besides the
 * interposed CUDA/NCCL symbols and NVTX's injection entry point, this is all the library
 * exports. Look it up with dlsym so that a program also runs without the collector:
 *
 *   typedef int (*get_fn)(uint32_t, const void**);
 *   get_fn get = (get_fn)dlsym(RTLD_DEFAULT, "syncopate_preload_get_interface");
 *   const syncopate_preload_interface_v1* api = NULL;
 *   if (get && get(1, (const void**)&api) == 0) api->flush();
 *
 * Versions only grow: a newer library still answers older versions, and every struct starts
 * with its own size so that fields can be appended. Nothing here blocks for long or throws. */
#ifndef SYNCOPATE_COLLECTOR_PRELOAD_H
#define SYNCOPATE_COLLECTOR_PRELOAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCOPATE_PRELOAD_INTERFACE_VERSION 1

typedef struct syncopate_preload_status_v1 {
  uint32_t struct_size;        /* set by the caller to sizeof(syncopate_preload_status_v1) */
  int32_t active;              /* 1 when this process has a recorder (it used CUDA and is asked to record) */
  int32_t recording;           /* 1 while recording (0 when armed and not attached) */
  int32_t rank;                /* -1 while unknown */
  uint64_t records_dropped;    /* records refused because a thread's buffer was full */
  uint64_t ops_untimed;        /* ops issued but not timed (no timing slot, or timing failed) */
  uint64_t threads;            /* threads with a record buffer */
  const char* backend;         /* "cupti" | "events"; NULL when not active */
} syncopate_preload_status_v1;

typedef struct syncopate_preload_interface_v1 {
  uint32_t struct_size;
  uint32_t version;
  /* Fills *status; 0 on success, -1 for a NULL or too small struct. */
  int (*get_status)(syncopate_preload_status_v1* status);
  /* Asks the background thread to commit what it has now (asynchronous); 0 when there is a
   * recorder, -1 otherwise. */
  int (*flush)(void);
} syncopate_preload_interface_v1;

/* Stores the interface of `version` in *interface and returns 0; -1 for an unknown version or a
 * NULL pointer. */
int syncopate_preload_get_interface(uint32_t version, const void** interface);

#ifdef __cplusplus
}
#endif

#endif /* SYNCOPATE_COLLECTOR_PRELOAD_H */
