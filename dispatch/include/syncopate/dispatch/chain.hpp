// Inline fast path of the dispatch tables: one acquire load of the family's top table.
#pragma once

#include <atomic>

#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload::detail {

extern std::atomic<const CudartTable*> cudartTop;
extern std::atomic<const DriverTable*> driverTop;
extern std::atomic<const NcclTable*> ncclTop;

const CudartTable& buildCudart() noexcept;
const DriverTable& buildDriver() noexcept;
const NcclTable& buildNccl() noexcept;

}  // namespace syncopate::preload::detail

namespace syncopate::preload {

inline const CudartTable& cudart() noexcept {
  if (const CudartTable* top = detail::cudartTop.load(std::memory_order_acquire)) [[likely]] return *top;
  return detail::buildCudart();
}

inline const DriverTable& driver() noexcept {
  if (const DriverTable* top = detail::driverTop.load(std::memory_order_acquire)) [[likely]] return *top;
  return detail::buildDriver();
}

inline const NcclTable& nccl() noexcept {
  if (const NcclTable* top = detail::ncclTop.load(std::memory_order_acquire)) [[likely]] return *top;
  return detail::buildNccl();
}

}  // namespace syncopate::preload
