#include "host_memory.hpp"

#include <algorithm>
#include <fstream>
#include <string>

namespace syncopate::cli {

namespace {

// MemAvailable from /proc/meminfo, in bytes (the file says kB).
std::optional<std::uint64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return std::nullopt;
}

// A number alone on the first line of a cgroup file; nullopt for "max" (no limit) or no file.
std::optional<std::uint64_t> cgroupValue(const char* file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(text);
}

}  // namespace

std::optional<std::uint64_t> availableHostMemory() {
  std::optional<std::uint64_t> available = memAvailable();
  // cgroup v2, as the group this process is in sees its own files.
  const std::optional<std::uint64_t> limit = cgroupValue("/sys/fs/cgroup/memory.max");
  const std::optional<std::uint64_t> used = cgroupValue("/sys/fs/cgroup/memory.current");
  if (limit) {
    const std::uint64_t left = *limit > used.value_or(0) ? *limit - used.value_or(0) : 0;
    available = available ? std::min(*available, left) : left;
  }
  return available;
}

}  // namespace syncopate::cli
