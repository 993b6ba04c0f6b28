// The part of simgpu's machine profile (format: docs/simgpu.md, "The profile") that dp_trainer's
// step prediction reads, with the documented duration formulas. This is the trainer's own
// reading of the profile, independent of simgpu's, so the end-to-end tests can compare what
// simgpu measures with what the profile says a step should take.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dp_trainer {

struct KernelCostTerm {
  double coef = 0.0;
  std::vector<int> params;  // 0-based kernel parameter positions, multiplied with coef
};

struct KernelCost {
  std::string name;
  bool has_flops = false;
  KernelCostTerm flops;
  bool has_bytes = false;
  KernelCostTerm bytes;
  double efficiency = 1.0;
  double fixed_ns = 0.0;
};

struct LinkLevel {
  double latency_ns = 0.0;
  double bandwidth = 0.0;  // bytes per second
};

struct MachineProfile {
  std::string name;
  int devices_per_process = 1;
  int ranks_per_host = 1;
  double flops = 0.0;             // device FLOP/s
  double memory_bandwidth = 0.0;  // bytes per second
  double launch_latency_ns = 0.0;
  double min_kernel_ns = 0.0;
  double h2d_bandwidth = 0.0, d2h_bandwidth = 0.0, d2d_bandwidth = 0.0, copy_latency_ns = 0.0;
  LinkLevel intra_process, intra_host, inter_host;
  std::string algorithm;
  double bytes_scale = 1.0;
  double compute_slowdown = 0.0, communication_slowdown = 0.0;
  double default_kernel_ns = 0.0;
  std::vector<KernelCost> kernels;

  // fixed_ns + max(flops / (flops * efficiency), bytes / memory_bandwidth), at least
  // min_kernel_ns; `params[i]` is the integer value of kernel parameter i (0 for others).
  double kernelNs(std::string_view kernel, std::span<const std::int64_t> params) const;
  // A host<->device copy of `bytes`: latency + bytes / bandwidth.
  double h2dNs(double bytes) const { return copy_latency_ns + bytes / h2d_bandwidth * 1e9; }
  double d2hNs(double bytes) const { return copy_latency_ns + bytes / d2h_bandwidth * 1e9; }
  // A memset runs as a kernel: bytes / memory_bandwidth, at least min_kernel_ns.
  double memsetNs(double bytes) const { return std::max(min_kernel_ns, bytes / memory_bandwidth * 1e9); }
  // The link a collective among `ranks` ranks (one device per process) crosses.
  const LinkLevel& linkFor(int ranks) const { return ranks > ranks_per_host ? inter_host : intra_host; }
  const char* linkNameFor(int ranks) const { return ranks > ranks_per_host ? "inter_host" : "intra_host"; }
  // Ring all-reduce of `bytes` (before bytes_scale) among `ranks`:
  // 2(P-1) latency + 2(P-1)/P * scaled bytes / bandwidth; one rank alone costs one
  // intra-process latency.
  double allReduceNs(double bytes, int ranks) const;
};

// Reads a profile file; throws std::runtime_error saying what is missing or malformed.
MachineProfile loadMachineProfile(const std::string& path);
MachineProfile parseMachineProfile(std::string_view json_text, const std::string& origin);

}  // namespace dp_trainer
