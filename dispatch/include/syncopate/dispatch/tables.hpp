// Dispatch tables: one struct of function pointers per interposed API family, generated from
// the lists in *_api.inc. The exported symbols call the top table of their family; each layer
// (the recorder, later the tuner's reordering runtime) owns a table whose entries either are
// its own functions or the entries of the table below it; the bottom table is the real
// library's. A layer reaches the next stage only through the `next` table it was given.
#pragma once

#include "syncopate/dispatch/cuda_headers.hpp"

namespace syncopate::preload {

struct CudartTable {
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) ret(*name) params = nullptr;
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
};

struct DriverTable {
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) ret(*name) params = nullptr;
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
};

struct NcclTable {
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) ret(*name) params = nullptr;
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
};

// Real functions the layers call for themselves without interposing them; entries the loaded
// library lacks stay null (callers check).
struct CudartHelpers {
#define SYNCOPATE_CUDART_HELPER(ret, name, params) ret(*name) params = nullptr;
#include "syncopate/dispatch/cudart_helpers.inc"
#undef SYNCOPATE_CUDART_HELPER
};

struct DriverHelpers {
#define SYNCOPATE_DRIVER_HELPER(ret, name, params) ret(*name) params = nullptr;
#include "syncopate/dispatch/driver_helpers.inc"
#undef SYNCOPATE_DRIVER_HELPER
};

struct NcclHelpers {
#define SYNCOPATE_NCCL_HELPER(ret, name, params) ret(*name) params = nullptr;
#include "syncopate/dispatch/nccl_helpers.inc"
#undef SYNCOPATE_NCCL_HELPER
};

// The real libraries' functions, bypassing every layer: what a layer uses for its own calls
// (the recorder's timing events, for instance) so that they are neither recorded nor reordered.
// Null when the family's library is not loaded yet.
const CudartTable* realCudart() noexcept;
const DriverTable* realDriver() noexcept;
const NcclTable* realNccl() noexcept;
const CudartHelpers* cudartHelpers() noexcept;
const DriverHelpers* driverHelpers() noexcept;
const NcclHelpers* ncclHelpers() noexcept;

// Any other function of the real runtime (null if absent or the runtime is not loaded yet).
void* resolveRealCudart(const char* name) noexcept;

// The top of each family's chain, built on first use (after the real library is found).
const CudartTable& cudart() noexcept;
const DriverTable& driver() noexcept;
const NcclTable& nccl() noexcept;

}  // namespace syncopate::preload
