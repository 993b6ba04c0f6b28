// What the preload library does for each NVTX call it receives through NVTX's injection
// interface: ranges (push/pop per thread, start/end across threads) and marks become
// nvtx_ranges rows while recording; the start of every range is shown to the iteration window
// of an armed process (the marker rule). Named domains and registered strings are the
// library's own objects, handed back to NVTX as opaque handles.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace syncopate::preload::nvtx {

int rangePushEx(const nvtxEventAttributes_t* attributes) noexcept;
int rangePushA(const char* message) noexcept;
int rangePushW(const wchar_t* message) noexcept;
int rangePop() noexcept;
nvtxRangeId_t rangeStartEx(const nvtxEventAttributes_t* attributes) noexcept;
nvtxRangeId_t rangeStartA(const char* message) noexcept;
nvtxRangeId_t rangeStartW(const wchar_t* message) noexcept;
void rangeEnd(nvtxRangeId_t id) noexcept;
void markEx(const nvtxEventAttributes_t* attributes) noexcept;
void markA(const char* message) noexcept;
void markW(const wchar_t* message) noexcept;

void domainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept;
nvtxRangeId_t domainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept;
void domainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) noexcept;
int domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept;
int domainRangePop(nvtxDomainHandle_t domain) noexcept;
nvtxStringHandle_t domainRegisterStringA(nvtxDomainHandle_t domain, const char* text) noexcept;
nvtxStringHandle_t domainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text) noexcept;
nvtxDomainHandle_t domainCreateA(const char* name) noexcept;
nvtxDomainHandle_t domainCreateW(const wchar_t* name) noexcept;
void domainDestroy(nvtxDomainHandle_t domain) noexcept;

}  // namespace syncopate::preload::nvtx
