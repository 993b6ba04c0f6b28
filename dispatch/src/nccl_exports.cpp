// The NCCL symbols the preload library exports; each forwards to the top of NCCL's dispatch
// chain. (NCCL's own pnccl* names are left alone: programs call the nccl* ones.)
#include "syncopate/dispatch/export.hpp"
#include "syncopate/dispatch/chain.hpp"

#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) \
  extern "C" SYNCOPATE_EXPORT ret name params { return ::syncopate::preload::nccl().name args; }
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
