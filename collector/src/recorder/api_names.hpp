// Every intercepted function as a small enum, so that the hot path finds its interned name by
// index. Generated from the same lists as the dispatch tables.
#pragma once

#include <cstdint>

namespace syncopate::preload {

enum class ApiName : std::uint16_t {
#define SYNCOPATE_CUDART(ret, name, params, args) name,
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args) name,
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args) name,
#include "dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
  Count
};

inline constexpr const char* kApiNameText[] = {
#define SYNCOPATE_CUDART(ret, name, params, args) #name,
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args) #name,
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args) #name,
#include "dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
};

static_assert(sizeof(kApiNameText) / sizeof(kApiNameText[0]) == static_cast<std::size_t>(ApiName::Count));

}  // namespace syncopate::preload
