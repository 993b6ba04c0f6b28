// An NVTX push/pop range for the enclosing scope (PyTorch's step and phase markers are push/pop
// ranges too, on the thread that opens them).
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace sample_common {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  ~NvtxRange() { nvtxRangePop(); }
};

}  // namespace sample_common
