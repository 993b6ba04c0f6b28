#include <simgpu/core/symbols.hpp>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace simgpu {
namespace {

struct Variables {
  std::shared_mutex mu;
  std::unordered_map<const void*, std::size_t> size_by_address;
};

Variables& variables() {
  static Variables* const v = new Variables();  // used by late static destructors too
  return *v;
}

}  // namespace

void registerVariable(void* host_shadow, std::size_t size) {
  Variables& v = variables();
  std::unique_lock lock(v.mu);
  v.size_by_address[host_shadow] = size;
}

DeviceVariable findVariable(const void* symbol) {
  Variables& v = variables();
  std::shared_lock lock(v.mu);
  auto it = v.size_by_address.find(symbol);
  if (it == v.size_by_address.end()) return {};
  return DeviceVariable{const_cast<void*>(it->first), it->second};
}

}  // namespace simgpu
