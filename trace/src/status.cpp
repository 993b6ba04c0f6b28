#include "syncopate/trace/status.hpp"

namespace syncopate::trace {

std::string_view toString(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::Ok: return "ok";
    case StatusCode::InvalidArgument: return "invalid argument";
    case StatusCode::NotFound: return "not found";
    case StatusCode::AlreadyExists: return "already exists";
    case StatusCode::PermissionDenied: return "permission denied";
    case StatusCode::DiskFull: return "disk full";
    case StatusCode::IoError: return "I/O error";
    case StatusCode::NotAStore: return "not a store";
    case StatusCode::Corrupt: return "corrupt";
    case StatusCode::UnsupportedVersion: return "unsupported version";
    case StatusCode::OutOfMemory: return "out of memory";
    case StatusCode::Internal: return "internal error";
  }
  return "unknown";
}

}  // namespace syncopate::trace
