// The engine's error convention: an NCCL result code and a sentence saying what went wrong.
// The API layer turns a failed Status into the ncclResult_t it returns and the text of
// ncclGetLastError.
#pragma once

#include <nccl.h>

#include <string>
#include <utility>

namespace simgpu::nccl {

struct Status {
  ncclResult_t code = ncclSuccess;
  std::string message;

  bool ok() const { return code == ncclSuccess; }
  static Status success() { return {}; }
  static Status error(ncclResult_t c, std::string text) { return {c, std::move(text)}; }
};

}  // namespace simgpu::nccl
