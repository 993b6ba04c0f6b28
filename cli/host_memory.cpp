#include "host_memory.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace syncopate::cli {

namespace {

namespace fs = std::filesystem;

// v1 reports "no limit" as a number near 2^63 (PAGE_COUNTER_MAX pages); anything above this is none.
constexpr std::uint64_t kNoLimitAbove = std::uint64_t{1} << 60;

// MemAvailable from /proc/meminfo, in bytes (the file says kB).
std::optional<std::uint64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kb = 0;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return std::nullopt;
}

// The number alone on the first line of a control-group file; nullopt for "max", no file, or a
// value that means no limit.
std::optional<std::uint64_t> number(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::uint64_t value = std::stoull(text);
  if (value > kNoLimitAbove) return std::nullopt;
  return value;
}

// A key's value in a memory.stat file (0 when absent).
std::uint64_t statValue(const fs::path& file, std::string_view key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// Where this process's group of `controller` lies: v2 ("0::/path", controller empty) or v1
// ("N:memory:/path"); nullopt when /proc/self/cgroup does not name it.
std::optional<std::string> groupPath(std::string_view controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    bool match = controller.empty() && line.compare(0, first, "0") == 0 && controllers.empty();
    // v1 lists a hierarchy's controllers joined by commas ("cpu,cpuacct").
    std::stringstream names(controllers);
    for (std::string name; !controller.empty() && std::getline(names, name, ',');) match = match || name == controller;
    if (match) return line.substr(second + 1);
  }
  return std::nullopt;
}

// The smallest headroom of the group at `path` under `mount` and its ancestors up to the mount:
// limit - (usage - inactive page cache). Inside a container the group's path may not exist under
// the mount (its namespace starts there): the walk then starts at the mount itself.
std::optional<std::uint64_t> headroom(const fs::path& mount, const std::string& path, const char* limit_file,
                                      const char* usage_file, std::string_view inactive_key) {
  fs::path dir = mount / fs::path(path).relative_path();
  std::error_code error;
  if (!fs::is_directory(dir, error)) dir = mount;
  std::optional<std::uint64_t> least;
  for (;;) {
    if (const std::optional<std::uint64_t> limit = number(dir / limit_file)) {
      const std::uint64_t usage = number(dir / usage_file).value_or(0);
      const std::uint64_t inactive = statValue(dir / "memory.stat", inactive_key);
      const std::uint64_t used = usage > inactive ? usage - inactive : 0;
      const std::uint64_t left = *limit > used ? *limit - used : 0;
      least = least ? std::min(*least, left) : left;
    }
    if (dir == mount || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return least;
}

}  // namespace

std::optional<std::uint64_t> availableHostMemory() {
  std::optional<std::uint64_t> available = memAvailable();
  auto take = [&](std::optional<std::uint64_t> left) {
    if (left) available = available ? std::min(*available, *left) : *left;
  };
  if (const auto v2 = groupPath(""); v2 && fs::exists("/sys/fs/cgroup/cgroup.controllers"))
    take(headroom("/sys/fs/cgroup", *v2, "memory.max", "memory.current", "inactive_file"));
  if (const auto v1 = groupPath("memory"))
    take(headroom("/sys/fs/cgroup/memory", *v1, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"));
  return available;
}

}  // namespace syncopate::cli
