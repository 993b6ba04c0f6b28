#include "dp_trainer/machine_profile.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dp_trainer {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw std::runtime_error(fmt::format("machine profile {}: {}", origin, what));
}

const json& member(const json& object, const char* key, const std::string& path, const std::string& origin) {
  if (!object.is_object() || !object.contains(key)) fail(origin, fmt::format("missing \"{}{}\"", path, key));
  return object.at(key);
}

double number(const json& object, const char* key, const std::string& path, const std::string& origin) {
  const json& value = member(object, key, path, origin);
  if (!value.is_number()) fail(origin, fmt::format("\"{}{}\" must be a number", path, key));
  return value.get<double>();
}

double positive(const json& object, const char* key, const std::string& path, const std::string& origin) {
  const double value = number(object, key, path, origin);
  if (!(value > 0.0)) fail(origin, fmt::format("\"{}{}\" must be positive", path, key));
  return value;
}

double numberOr(const json& object, const char* key, double fallback, const std::string& path,
                const std::string& origin) {
  return object.contains(key) ? number(object, key, path, origin) : fallback;
}

KernelCostTerm costTerm(const json& term, const std::string& path, const std::string& origin) {
  KernelCostTerm result;
  result.coef = number(term, "coef", path, origin);
  const json& params = member(term, "params", path, origin);
  if (!params.is_array()) fail(origin, fmt::format("\"{}params\" must be an array of parameter indices", path));
  for (const json& index : params) {
    if (!index.is_number_integer() || index.get<int>() < 0) {
      fail(origin, fmt::format("\"{}params\" must hold non-negative integers", path));
    }
    result.params.push_back(index.get<int>());
  }
  return result;
}

LinkLevel link(const json& links, const char* key, const std::string& origin) {
  const json& level = member(links, key, "links.", origin);
  const std::string path = fmt::format("links.{}.", key);
  return {number(level, "latency_ns", path, origin), positive(level, "bandwidth", path, origin)};
}

double evaluate(const KernelCostTerm& term, std::span<const std::int64_t> params) {
  double value = term.coef;
  for (int index : term.params) {
    value *= index < static_cast<int>(params.size()) ? static_cast<double>(params[static_cast<std::size_t>(index)]) : 0.0;
  }
  return value;
}

}  // namespace

double MachineProfile::kernelNs(std::string_view kernel, std::span<const std::int64_t> params) const {
  const auto entry = std::find_if(kernels.begin(), kernels.end(), [&](const KernelCost& k) { return k.name == kernel; });
  if (entry == kernels.end()) return std::max(default_kernel_ns, min_kernel_ns);
  double busy = 0.0;
  if (entry->has_flops) busy = std::max(busy, evaluate(entry->flops, params) / (flops * entry->efficiency) * 1e9);
  if (entry->has_bytes) busy = std::max(busy, evaluate(entry->bytes, params) / memory_bandwidth * 1e9);
  return std::max(entry->fixed_ns + busy, min_kernel_ns);
}

double MachineProfile::allReduceNs(double bytes, int ranks) const {
  if (ranks <= 1) return intra_process.latency_ns;  // a communicator of one rank: one hop
  const LinkLevel& level = linkFor(ranks);
  const double p = ranks;
  return 2.0 * (p - 1.0) * level.latency_ns + 2.0 * (p - 1.0) / p * bytes * bytes_scale / level.bandwidth * 1e9;
}

MachineProfile parseMachineProfile(std::string_view json_text, const std::string& origin) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond a double
    fail(origin, fmt::format("not valid JSON ({})", e.what()));
  }
  if (!root.is_object()) fail(origin, "must be a JSON object");
  MachineProfile profile;
  profile.name = root.value("name", std::string{"(unnamed)"});
  profile.devices_per_process = static_cast<int>(numberOr(root, "devices_per_process", 1, "", origin));
  profile.ranks_per_host = static_cast<int>(numberOr(root, "ranks_per_host", 8, "", origin));
  if (profile.ranks_per_host < 1) fail(origin, "\"ranks_per_host\" must be at least 1");

  const json& device = member(root, "device", "", origin);
  profile.flops = positive(device, "flops", "device.", origin);
  profile.memory_bandwidth = positive(device, "memory_bandwidth", "device.", origin);
  profile.launch_latency_ns = numberOr(device, "launch_latency_ns", 0, "device.", origin);
  profile.min_kernel_ns = numberOr(device, "min_kernel_ns", 0, "device.", origin);

  const json& copy = member(root, "copy", "", origin);
  profile.h2d_bandwidth = positive(copy, "h2d_bandwidth", "copy.", origin);
  profile.d2h_bandwidth = positive(copy, "d2h_bandwidth", "copy.", origin);
  profile.d2d_bandwidth = positive(copy, "d2d_bandwidth", "copy.", origin);
  profile.copy_latency_ns = numberOr(copy, "latency_ns", 0, "copy.", origin);

  const json& links = member(root, "links", "", origin);
  profile.intra_process = link(links, "intra_process", origin);
  profile.intra_host = link(links, "intra_host", origin);
  profile.inter_host = link(links, "inter_host", origin);

  const json& collectives = member(root, "collectives", "", origin);
  profile.algorithm = collectives.value("algorithm", std::string{"ring"});
  if (profile.algorithm != "ring") {
    fail(origin, fmt::format("dp_trainer's prediction models ring all-reduce only (collectives.algorithm is \"{}\")",
                             profile.algorithm));
  }
  profile.bytes_scale = numberOr(collectives, "bytes_scale", 1.0, "collectives.", origin);
  if (!(profile.bytes_scale > 0.0)) fail(origin, "\"collectives.bytes_scale\" must be positive");

  if (root.contains("interference")) {
    const json& interference = root.at("interference");
    profile.compute_slowdown = numberOr(interference, "compute_slowdown", 0, "interference.", origin);
    profile.communication_slowdown = numberOr(interference, "communication_slowdown", 0, "interference.", origin);
  }
  profile.default_kernel_ns = numberOr(root, "default_kernel_ns", 0, "", origin);

  if (root.contains("kernels")) {
    const json& kernels = root.at("kernels");
    if (!kernels.is_array()) fail(origin, "\"kernels\" must be an array");
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const json& entry = kernels[i];
      const std::string path = fmt::format("kernels[{}].", i);
      KernelCost cost;
      const json& name = member(entry, "name", path, origin);
      if (!name.is_string()) fail(origin, fmt::format("\"{}name\" must be a string", path));
      cost.name = name.get<std::string>();
      if (entry.contains("flops")) {
        cost.has_flops = true;
        cost.flops = costTerm(entry.at("flops"), path + "flops.", origin);
      }
      if (entry.contains("bytes")) {
        cost.has_bytes = true;
        cost.bytes = costTerm(entry.at("bytes"), path + "bytes.", origin);
      }
      cost.efficiency = numberOr(entry, "efficiency", 1.0, path, origin);
      if (!(cost.efficiency > 0.0)) fail(origin, fmt::format("\"{}efficiency\" must be positive", path));
      cost.fixed_ns = numberOr(entry, "fixed_ns", 0.0, path, origin);
      profile.kernels.push_back(std::move(cost));
    }
  }
  return profile;
}

MachineProfile loadMachineProfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("machine profile {}: cannot open it", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parseMachineProfile(text.str(), path);
}

}  // namespace dp_trainer
