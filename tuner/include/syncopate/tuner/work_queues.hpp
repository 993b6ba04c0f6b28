// CUDA_DEVICE_MAX_CONNECTIONS: how many hardware work queues (connections) CUDA opens from the
// host to each device, 8 unless the job's environment says otherwise (1 to 32). A process's
// streams share them; streams in one queue leave it in issue order, so with fewer queues than
// streams an op waits for whatever was issued to its queue before it, on any stream. With 1,
// which Megatron-LM asks for its tensor-parallel overlap, a data-parallel job's backward kernels
// wait behind each all-reduce or reduce-scatter that waits for the one before it
// (docs/tuner.md, "CUDA_DEVICE_MAX_CONNECTIONS").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {
struct RunModel;
}

namespace syncopate::tuner {

inline constexpr std::uint32_t kCudaDefaultConnections = 8;
inline constexpr std::uint32_t kCudaMostConnections = 32;

// The count of work queues a CUDA_DEVICE_MAX_CONNECTIONS value asks for, when it is one CUDA
// takes (1 to 32); nullopt for anything else.
std::optional<std::uint32_t> connectionsCudaTakes(std::string_view value) noexcept;

struct RecordedConnections {
  std::uint32_t connections = kCudaDefaultConnections;  // the fewest any rank ran with
  bool set = false;    // some rank's environment set the variable (meta.cuda_device_max_connections)
  std::string note;    // what the stores said, where it is worth saying: ranks that disagree, a value CUDA ignores
};

// Reads meta.cuda_device_max_connections of every rank's store (the collector writes it when the
// variable is set); an imported run has none, and is taken to have run with CUDA's default.
trace::Result<RecordedConnections> readRecordedConnections(const analyzer::RunModel& model);

}  // namespace syncopate::tuner
