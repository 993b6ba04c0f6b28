// The decodings every layer shares (call_facts.hpp).
#include "syncopate/dispatch/call_facts.hpp"

namespace syncopate::preload {

const char* const kApiNameText[static_cast<std::size_t>(ApiName::Count)] = {
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) #name,
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) #name,
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) #name,
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
};

trace::MemcpyKind memcpyKindOf(cudaMemcpyKind kind) noexcept {
  switch (kind) {
    case cudaMemcpyHostToHost: return trace::MemcpyKind::HostToHost;
    case cudaMemcpyHostToDevice: return trace::MemcpyKind::HostToDevice;
    case cudaMemcpyDeviceToHost: return trace::MemcpyKind::DeviceToHost;
    case cudaMemcpyDeviceToDevice: return trace::MemcpyKind::DeviceToDevice;
    default: return trace::MemcpyKind::Unknown;  // cudaMemcpyDefault: the runtime decides
  }
}

trace::DataType dataTypeOf(ncclDataType_t type) noexcept {
  const auto value = static_cast<int>(type);
  return value >= 0 && value <= static_cast<int>(trace::DataType::Float8e5m2) ? static_cast<trace::DataType>(value)
                                                                            : trace::DataType::Unknown;
}

trace::RedOp redOpOf(ncclRedOp_t op) noexcept {
  const auto value = static_cast<int>(op);
  return value >= 0 && value <= static_cast<int>(trace::RedOp::Avg) ? static_cast<trace::RedOp>(value)
                                                                   : trace::RedOp::Unknown;  // PreMulSum & co
}

}  // namespace syncopate::preload
