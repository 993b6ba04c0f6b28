// Parsing and validation of machine profiles. A profile overrides the built-in default field
// by field; every field is checked for its type and range, and unknown fields are refused so
// that a misspelt name never silently falls back to a default.
#include <simgpu/core/profile.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

namespace simgpu {
namespace {

using nlohmann::json;

// Thrown inside this file only, turned into ProfileResult::error at the boundary.
struct FieldError {
  std::string path;
  std::string what;
};

std::string join(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

void refuseUnknownKeys(const json& object, const std::string& path,
                       std::initializer_list<std::string_view> known) {
  for (const auto& item : object.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || item.key() == k;
    if (!found) throw FieldError{join(path, item.key()), "is not a profile field"};
  }
}

const json* member(const json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json* objectMember(const json& object, std::string_view key, const std::string& path) {
  const json* value = member(object, key);
  if (value != nullptr && !value->is_object())
    throw FieldError{join(path, key), "must be an object, got " + describe(*value)};
  return value;
}

// Numbers: `positive` refuses 0 and negatives, otherwise only negatives are refused.
enum class Range { Positive, NonNegative };

void readNumber(const json& object, std::string_view key, const std::string& path, Range range,
                double& out) {
  const json* value = member(object, key);
  if (value == nullptr) return;
  const std::string where = join(path, key);
  if (!value->is_number()) throw FieldError{where, "must be a number, got " + describe(*value)};
  const double v = value->get<double>();
  if (!std::isfinite(v)) throw FieldError{where, "must be finite"};
  if (range == Range::Positive && !(v > 0))
    throw FieldError{where, "must be a positive number, got " + describe(*value)};
  if (range == Range::NonNegative && v < 0)
    throw FieldError{where, "must not be negative, got " + describe(*value)};
  out = v;
}

template <typename Int>
void readInteger(const json& object, std::string_view key, const std::string& path, Int min,
                 Int max, Int& out) {
  const json* value = member(object, key);
  if (value == nullptr) return;
  const std::string where = join(path, key);
  if (!value->is_number_integer())
    throw FieldError{where, "must be an integer, got " + describe(*value)};
  // nlohmann/json keeps non-negative integers unsigned and negative ones signed.
  auto check = [&](auto v) {
    if (std::cmp_less(v, min) || std::cmp_greater(v, max))
      throw FieldError{where, "must be between " + std::to_string(min) + " and " +
                                  std::to_string(max) + ", got " + describe(*value)};
    out = static_cast<Int>(v);
  };
  if (value->is_number_unsigned())
    check(value->get<std::uint64_t>());
  else
    check(value->get<std::int64_t>());
}

void readDuration(const json& object, std::string_view key, const std::string& path, TimeNs& out) {
  readInteger<TimeNs>(object, key, path, 0, std::numeric_limits<TimeNs>::max() / 4, out);
}

void readString(const json& object, std::string_view key, const std::string& path,
                std::string& out) {
  const json* value = member(object, key);
  if (value == nullptr) return;
  if (!value->is_string())
    throw FieldError{join(path, key), "must be a string, got " + describe(*value)};
  out = value->get<std::string>();
}

void readLink(const json& links, std::string_view key, const std::string& path, LinkSpec& out) {
  const json* link = objectMember(links, key, path);
  if (link == nullptr) return;
  const std::string where = join(path, key);
  refuseUnknownKeys(*link, where, {"latency_ns", "bandwidth"});
  readDuration(*link, "latency_ns", where, out.latency_ns);
  readNumber(*link, "bandwidth", where, Range::Positive, out.bandwidth);
}

std::optional<ParamProduct> readProduct(const json& kernel, std::string_view key,
                                        const std::string& path) {
  const json* term = objectMember(kernel, key, path);
  if (term == nullptr) return std::nullopt;
  const std::string where = join(path, key);
  refuseUnknownKeys(*term, where, {"coef", "params"});
  ParamProduct product;
  product.coef = 1.0;
  readNumber(*term, "coef", where, Range::NonNegative, product.coef);
  const json* params = member(*term, "params");
  if (params == nullptr) throw FieldError{join(where, "params"), "is required"};
  if (!params->is_array())
    throw FieldError{join(where, "params"), "must be an array of parameter indices"};
  for (std::size_t i = 0; i < params->size(); ++i) {
    const json& index = (*params)[i];
    const std::string at = join(where, "params[" + std::to_string(i) + "]");
    if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
        index.get<std::int64_t>() > 4095)
      throw FieldError{at, "must be a parameter index from 0 to 4095, got " + describe(index)};
    product.params.push_back(index.get<int>());
  }
  return product;
}

KernelCostSpec readKernel(const json& kernel, const std::string& path) {
  if (!kernel.is_object()) throw FieldError{path, "must be an object, got " + describe(kernel)};
  refuseUnknownKeys(kernel, path, {"name", "flops", "bytes", "efficiency", "fixed_ns"});
  KernelCostSpec spec;
  readString(kernel, "name", path, spec.name);
  if (spec.name.empty()) throw FieldError{join(path, "name"), "is required and must not be empty"};
  spec.flops = readProduct(kernel, "flops", path);
  spec.bytes = readProduct(kernel, "bytes", path);
  readNumber(kernel, "efficiency", path, Range::Positive, spec.efficiency);
  if (spec.efficiency > 1.0) throw FieldError{join(path, "efficiency"), "must be at most 1"};
  readDuration(kernel, "fixed_ns", path, spec.fixed_ns);
  return spec;
}

void readDevice(const json& root, Profile::Device& d) {
  const json* device = objectMember(root, "device", "");
  if (device == nullptr) return;
  const std::string p = "device";
  refuseUnknownKeys(*device, p,
                    {"name", "sm_count", "memory_bytes", "flops", "memory_bandwidth",
                     "launch_latency_ns", "min_kernel_ns", "compute_capability"});
  readString(*device, "name", p, d.name);
  readInteger(*device, "sm_count", p, 1, 100000, d.sm_count);
  readInteger<std::uint64_t>(*device, "memory_bytes", p, 1, std::uint64_t{1} << 50, d.memory_bytes);
  readNumber(*device, "flops", p, Range::Positive, d.flops);
  readNumber(*device, "memory_bandwidth", p, Range::Positive, d.memory_bandwidth);
  readDuration(*device, "launch_latency_ns", p, d.launch_latency_ns);
  readDuration(*device, "min_kernel_ns", p, d.min_kernel_ns);
  if (const json* cc = member(*device, "compute_capability")) {
    if (!cc->is_array() || cc->size() != 2 || !(*cc)[0].is_number_integer() ||
        !(*cc)[1].is_number_integer() || (*cc)[0].get<int>() < 1 || (*cc)[1].get<int>() < 0)
      throw FieldError{join(p, "compute_capability"),
                       "must be [major, minor] with major >= 1, got " + describe(*cc)};
    d.compute_capability_major = (*cc)[0].get<int>();
    d.compute_capability_minor = (*cc)[1].get<int>();
  }
}

// All three fields are required: a channel model half inherited from elsewhere would be a guess.
Profile::Channels readChannels(const json& channels) {
  const std::string p = "channels";
  refuseUnknownKeys(channels, p, {"default", "max", "per_channel_bandwidth"});
  for (std::string_view key : {"default", "max", "per_channel_bandwidth"})
    if (member(channels, key) == nullptr) throw FieldError{join(p, key), "is required in a channels section"};
  Profile::Channels out;
  readInteger(channels, "default", p, 1, 1024, out.default_count);
  readInteger(channels, "max", p, 1, 1024, out.max_count);
  readNumber(channels, "per_channel_bandwidth", p, Range::Positive, out.per_channel_bandwidth);
  if (out.max_count < out.default_count)
    throw FieldError{join(p, "max"), "must be at least channels.default (" + std::to_string(out.default_count) +
                                         "), got " + std::to_string(out.max_count)};
  return out;
}

void readProfile(const json& root, Profile& out) {
  if (!root.is_object()) throw FieldError{"(top level)", "must be a JSON object"};
  refuseUnknownKeys(root, "",
                    {"name", "devices_per_process", "ranks_per_host", "device", "copy", "links",
                     "collectives", "interference", "channels", "default_kernel_ns", "driver_version", "kernels"});
  readString(root, "name", "", out.name);
  readInteger(root, "devices_per_process", "", 1, 64, out.devices_per_process);
  readInteger(root, "ranks_per_host", "", 1, 1 << 20, out.ranks_per_host);
  readDevice(root, out.device);
  if (const json* copy = objectMember(root, "copy", "")) {
    refuseUnknownKeys(*copy, "copy", {"h2d_bandwidth", "d2h_bandwidth", "d2d_bandwidth", "latency_ns"});
    readNumber(*copy, "h2d_bandwidth", "copy", Range::Positive, out.copy.h2d_bandwidth);
    readNumber(*copy, "d2h_bandwidth", "copy", Range::Positive, out.copy.d2h_bandwidth);
    readNumber(*copy, "d2d_bandwidth", "copy", Range::Positive, out.copy.d2d_bandwidth);
    readDuration(*copy, "latency_ns", "copy", out.copy.latency_ns);
  }
  if (const json* links = objectMember(root, "links", "")) {
    refuseUnknownKeys(*links, "links", {"intra_process", "intra_host", "inter_host"});
    readLink(*links, "intra_process", "links", out.links.intra_process);
    readLink(*links, "intra_host", "links", out.links.intra_host);
    readLink(*links, "inter_host", "links", out.links.inter_host);
  }
  if (const json* coll = objectMember(root, "collectives", "")) {
    refuseUnknownKeys(*coll, "collectives", {"algorithm", "bytes_scale"});
    readString(*coll, "algorithm", "collectives", out.collectives.algorithm);
    if (out.collectives.algorithm != "ring" && out.collectives.algorithm != "tree")
      throw FieldError{"collectives.algorithm",
                       "must be \"ring\" or \"tree\", got \"" + out.collectives.algorithm + "\""};
    readNumber(*coll, "bytes_scale", "collectives", Range::Positive, out.collectives.bytes_scale);
  }
  if (const json* inter = objectMember(root, "interference", "")) {
    refuseUnknownKeys(*inter, "interference", {"compute_slowdown", "communication_slowdown"});
    readNumber(*inter, "compute_slowdown", "interference", Range::NonNegative,
               out.interference.compute_slowdown);
    readNumber(*inter, "communication_slowdown", "interference", Range::NonNegative,
               out.interference.communication_slowdown);
  }
  if (const json* channels = objectMember(root, "channels", "")) out.channels = readChannels(*channels);
  readDuration(root, "default_kernel_ns", "", out.default_kernel_ns);
  readInteger(root, "driver_version", "", 9000, 99990, out.driver_version);
  if (const json* kernels = member(root, "kernels")) {
    if (!kernels->is_array()) throw FieldError{"kernels", "must be an array of kernel entries"};
    out.kernels.clear();
    std::set<std::string> names;
    for (std::size_t i = 0; i < kernels->size(); ++i) {
      const std::string path = "kernels[" + std::to_string(i) + "]";
      KernelCostSpec spec = readKernel((*kernels)[i], path);
      if (!names.insert(spec.name).second)
        throw FieldError{join(path, "name"), "\"" + spec.name + "\" appears twice"};
      out.kernels.push_back(std::move(spec));
    }
  }
}

// Fields that a complete profile must have (only the built-in one can lack none of them by
// construction; a user profile inherits them).
void requireComplete(const Profile& p) {
  if (p.devices_per_process < 1) throw FieldError{"devices_per_process", "is required"};
  if (p.ranks_per_host < 1) throw FieldError{"ranks_per_host", "is required"};
  if (p.device.sm_count < 1) throw FieldError{"device.sm_count", "is required"};
  if (p.device.memory_bytes == 0) throw FieldError{"device.memory_bytes", "is required"};
  if (!(p.device.flops > 0)) throw FieldError{"device.flops", "is required"};
  if (!(p.device.memory_bandwidth > 0)) throw FieldError{"device.memory_bandwidth", "is required"};
  if (p.device.compute_capability_major < 1) throw FieldError{"device.compute_capability", "is required"};
  if (!(p.copy.h2d_bandwidth > 0)) throw FieldError{"copy.h2d_bandwidth", "is required"};
  if (!(p.copy.d2h_bandwidth > 0)) throw FieldError{"copy.d2h_bandwidth", "is required"};
  if (!(p.copy.d2d_bandwidth > 0)) throw FieldError{"copy.d2d_bandwidth", "is required"};
  if (!(p.links.intra_process.bandwidth > 0)) throw FieldError{"links.intra_process.bandwidth", "is required"};
  if (!(p.links.intra_host.bandwidth > 0)) throw FieldError{"links.intra_host.bandwidth", "is required"};
  if (!(p.links.inter_host.bandwidth > 0)) throw FieldError{"links.inter_host.bandwidth", "is required"};
  if (p.collectives.algorithm.empty()) throw FieldError{"collectives.algorithm", "is required"};
}

ProfileResult parseOver(const Profile& base, std::string_view text, std::string_view source) {
  ProfileResult result;
  const std::string prefix = "profile " + std::string(source) + ": ";
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond a double
    result.error = prefix + "not valid JSON: " + e.what();
    return result;
  }
  Profile profile = base;
  profile.source = std::string(source);
  try {
    readProfile(root, profile);
    requireComplete(profile);
  } catch (const FieldError& e) {
    result.error = prefix + "field \"" + e.path + "\" " + e.what;
    return result;
  }
  result.profile = std::move(profile);
  return result;
}

}  // namespace

const KernelCostSpec* Profile::findKernel(std::string_view demangled_name) const {
  for (const KernelCostSpec& k : kernels)
    if (k.name == demangled_name) return &k;
  return nullptr;
}

const Profile& builtinProfile() {
  // Parsed once from the embedded default.json; a broken embedded file is a build bug that the
  // profile tests catch, so it is reported loudly rather than papered over.
  static const Profile builtin = [] {
    ProfileResult r = parseOver(Profile{}, builtinProfileJson(), "built-in default");
    if (!r.profile) {
      std::fprintf(stderr, "simgpu: %s\n", r.error.c_str());
      std::abort();
    }
    return std::move(*r.profile);
  }();
  return builtin;
}

ProfileResult parseProfile(std::string_view json_text, std::string_view source) {
  return parseOver(builtinProfile(), json_text, source);
}

ProfileResult loadProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ProfileResult result;
    result.error = "profile " + path + ": cannot open the file: " + std::strerror(errno);
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseProfile(text.str(), path);
}

}  // namespace simgpu
