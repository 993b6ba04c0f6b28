// NVTX's injection entry point. A program's NVTX calls (NVTX 3 is header-only: each module
// has its own copy of the loader) initialise on first use by loading the library named in
// NVTX_INJECTION64_PATH — `syncopate record` points it at this preloaded library, so the
// already-loaded instance is found — and calling InitializeInjectionNvtx2, which fills NVTX's
// function tables with this library's handlers. NVTX calls cost nothing here until then.
#include <nvtx3/nvToolsExt.h>

#include "syncopate/dispatch/export.hpp"
#include "syncopate/dispatch/log.hpp"
#include "nvtx/nvtx_handlers.hpp"

namespace syncopate::preload::nvtx {
namespace {

template <class Function>
void install(NvtxFunctionTable table, unsigned int size, unsigned int id, Function function) {
  if (table != nullptr && id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

}  // namespace
}  // namespace syncopate::preload::nvtx

extern "C" SYNCOPATE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  namespace h = syncopate::preload::nvtx;
  using syncopate::preload::nvtx::install;
  if (getExportTable == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;

  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0) return 0;
  install(table, size, NVTX_CBID_CORE_MarkEx, h::markEx);
  install(table, size, NVTX_CBID_CORE_MarkA, h::markA);
  install(table, size, NVTX_CBID_CORE_MarkW, h::markW);
  install(table, size, NVTX_CBID_CORE_RangeStartEx, h::rangeStartEx);
  install(table, size, NVTX_CBID_CORE_RangeStartA, h::rangeStartA);
  install(table, size, NVTX_CBID_CORE_RangeStartW, h::rangeStartW);
  install(table, size, NVTX_CBID_CORE_RangeEnd, h::rangeEnd);
  install(table, size, NVTX_CBID_CORE_RangePushEx, h::rangePushEx);
  install(table, size, NVTX_CBID_CORE_RangePushA, h::rangePushA);
  install(table, size, NVTX_CBID_CORE_RangePushW, h::rangePushW);
  install(table, size, NVTX_CBID_CORE_RangePop, h::rangePop);

  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) != 0) {
    install(table, size, NVTX_CBID_CORE2_DomainMarkEx, h::domainMarkEx);
    install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, h::domainRangeStartEx);
    install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, h::domainRangeEnd);
    install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, h::domainRangePushEx);
    install(table, size, NVTX_CBID_CORE2_DomainRangePop, h::domainRangePop);
    install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, h::domainRegisterStringA);
    install(table, size, NVTX_CBID_CORE2_DomainRegisterStringW, h::domainRegisterStringW);
    install(table, size, NVTX_CBID_CORE2_DomainCreateA, h::domainCreateA);
    install(table, size, NVTX_CBID_CORE2_DomainCreateW, h::domainCreateW);
    install(table, size, NVTX_CBID_CORE2_DomainDestroy, h::domainDestroy);
  }
  syncopate::preload::log(syncopate::preload::LogLevel::Debug, "NVTX injection initialised");
  return 1;
}
