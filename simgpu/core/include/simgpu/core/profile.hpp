// The machine profile: everything simgpu's time model needs, read from JSON (docs/simgpu.md
// documents every field and its default; simgpu/profiles/default.json is the built-in one).
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simgpu {

// coef * product of the integer kernel parameters at `params` (0-based indices).
struct ParamProduct {
  double coef = 0.0;
  std::vector<int> params;
};

// Cost of one kernel, matched by its demangled function name (no namespace, no signature).
struct KernelCostSpec {
  std::string name;
  std::optional<ParamProduct> flops;
  std::optional<ParamProduct> bytes;
  double efficiency = 1.0;  // fraction of device.flops the kernel reaches
  TimeNs fixed_ns = 0;
};

struct LinkSpec {
  TimeNs latency_ns = 0;
  double bandwidth = 0.0;  // bytes per second
};

struct SIMGPU_API Profile {
  std::string source;  // the file it came from, or "built-in default"
  std::string name;
  int devices_per_process = 0;
  int ranks_per_host = 0;
  struct Device {
    std::string name;
    int sm_count = 0;
    std::uint64_t memory_bytes = 0;
    double flops = 0.0;             // FLOP/s at full efficiency
    double memory_bandwidth = 0.0;  // bytes per second
    TimeNs launch_latency_ns = 0;   // host call to earliest start of the op on an idle stream
    TimeNs min_kernel_ns = 0;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
  } device;
  struct Copy {
    double h2d_bandwidth = 0.0;
    double d2h_bandwidth = 0.0;
    double d2d_bandwidth = 0.0;
    TimeNs latency_ns = 0;
  } copy;
  struct Links {
    LinkSpec intra_process;
    LinkSpec intra_host;
    LinkSpec inter_host;
  } links;
  struct Collectives {
    std::string algorithm;  // "ring" or "tree"
    double bytes_scale = 1.0;
  } collectives;
  struct Interference {
    double compute_slowdown = 0.0;
    double communication_slowdown = 0.0;
  } interference;
  // NCCL's channels (one CTA, hence one SM, each): a collective on c channels moves at most
  // c * per_channel_bandwidth bytes/s, capped by its link (docs/simgpu-nccl.md, "Channels").
  // Absent: a collective takes its link's full bandwidth whatever its channel count.
  struct Channels {
    int default_count = 0;  // what NCCL uses when neither NCCL_MIN/MAX_CTAS nor a tuner says
    int max_count = 0;      // the most channels a communicator has
    double per_channel_bandwidth = 0.0;  // bytes per second
  };
  std::optional<Channels> channels;
  TimeNs default_kernel_ns = 0;
  // The CUDA version of the simulated driver (1000 * major + 10 * minor): what
  // cudaDriverGetVersion says, and which queries exist (cudaFuncGetParamInfo from 12040).
  int driver_version = 0;
  std::vector<KernelCostSpec> kernels;

  const KernelCostSpec* findKernel(std::string_view demangled_name) const;
};

struct ProfileResult {
  std::optional<Profile> profile;
  std::string error;  // "profile <source>: field \"x.y\": what is wrong", when !profile
};

// Parses and validates a profile; fields left out take the built-in default's value.
SIMGPU_API ProfileResult parseProfile(std::string_view json_text, std::string_view source);
SIMGPU_API ProfileResult loadProfileFile(const std::string& path);
SIMGPU_API const Profile& builtinProfile();
// The JSON text of the built-in default (simgpu/profiles/default.json, embedded at build time).
SIMGPU_API std::string_view builtinProfileJson();

}  // namespace simgpu
