#include "syncopate/trace/catalog.hpp"

#include <atomic>
#include <cstring>
#include <new>
#include <type_traits>

#include "intern_table.hpp"

namespace syncopate::trace {

namespace {

using detail::InternTable;

// Keys are the identifying fields packed without padding, so equal keys are equal bytes.
template <std::size_t N>
struct KeyBytes {
  char bytes[N];
  std::size_t used = 0;
  template <class T>
  KeyBytes& add(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(bytes + used, &value, sizeof value);
    used += sizeof value;
    return *this;
  }
  std::string_view view() const { return {bytes, used}; }
};

template <class T>
std::optional<T> readValue(const InternTable& table, std::uint32_t id) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (id == 0 || id > table.size()) return std::nullopt;
  T out;
  std::memcpy(&out, table.value(id), sizeof out);
  return out;
}

KeyBytes<28> shapeKey(const LaunchShape& s) {
  KeyBytes<28> k;
  k.add(s.name_id).add(s.grid.x).add(s.grid.y).add(s.grid.z).add(s.block.x).add(s.block.y).add(s.block.z);
  return k;
}

}  // namespace

static_assert(std::is_trivially_copyable_v<CatalogStream> && std::is_trivially_copyable_v<CatalogCommunicator> &&
              std::is_trivially_copyable_v<CatalogDevice> && std::is_trivially_copyable_v<CatalogThread>);

struct Catalog::Impl {
  InternTable strings{0};
  InternTable shapes{0};
  InternTable streams{sizeof(CatalogStream)};
  InternTable events{0};
  InternTable communicators{sizeof(CatalogCommunicator)};
  InternTable comm_by_handle{sizeof(std::uint32_t)};  // value: the latest CommId, updated atomically
  InternTable threads{sizeof(CatalogThread)};
  InternTable devices{sizeof(CatalogDevice)};
  std::atomic<std::uint64_t> failures{0};

  std::uint32_t insert(InternTable& table, std::string_view key, const void* value) noexcept {
    bool inserted = false;
    const std::uint32_t id = table.insert(key, value, inserted);
    if (id == 0) failures.fetch_add(1, std::memory_order_relaxed);
    return id;
  }
};

Catalog::Catalog() noexcept : impl_(new (std::nothrow) Impl) {}
Catalog::~Catalog() = default;

bool Catalog::valid() const noexcept { return impl_ != nullptr; }

StringId Catalog::intern(std::string_view text) noexcept {
  if (!impl_) return kNoString;
  return impl_->insert(impl_->strings, text, nullptr);
}

StringId Catalog::findString(std::string_view text) const noexcept {
  return impl_ ? impl_->strings.find(text) : kNoString;
}

std::string_view Catalog::string(StringId id) const noexcept { return impl_ ? impl_->strings.key(id) : ""; }

std::uint32_t Catalog::stringCount() const noexcept { return impl_ ? impl_->strings.size() : 0; }

ShapeId Catalog::internShape(const LaunchShape& shape) noexcept {
  if (!impl_) return kNoShape;
  return impl_->insert(impl_->shapes, shapeKey(shape).view(), nullptr);
}

LaunchShape Catalog::shape(ShapeId id) const noexcept {
  LaunchShape s;
  if (!impl_) return s;
  const std::string_view key = impl_->shapes.key(id);
  if (key.size() != 28) return s;
  std::uint32_t v[7];
  std::memcpy(v, key.data(), sizeof v);
  s.name_id = v[0];
  s.grid = {v[1], v[2], v[3]};
  s.block = {v[4], v[5], v[6]};
  return s;
}

std::uint32_t Catalog::shapeCount() const noexcept { return impl_ ? impl_->shapes.size() : 0; }

StreamId Catalog::registerStream(const CatalogStream& info) noexcept {
  if (!impl_) return kNoStream;
  return impl_->insert(impl_->streams, KeyBytes<12>{}.add(info.device).add(info.handle).view(), &info);
}

StreamId Catalog::findStream(std::int32_t device, std::uint64_t handle) const noexcept {
  return impl_ ? impl_->streams.find(KeyBytes<12>{}.add(device).add(handle).view()) : kNoStream;
}

std::optional<CatalogStream> Catalog::stream(StreamId id) const noexcept {
  return impl_ ? readValue<CatalogStream>(impl_->streams, id) : std::nullopt;
}

std::uint32_t Catalog::streamCount() const noexcept { return impl_ ? impl_->streams.size() : 0; }

EventId Catalog::eventId(std::uint64_t handle) noexcept {
  if (!impl_) return kNoEvent;
  return impl_->insert(impl_->events, KeyBytes<8>{}.add(handle).view(), nullptr);
}

EventId Catalog::findEvent(std::uint64_t handle) const noexcept {
  return impl_ ? impl_->events.find(KeyBytes<8>{}.add(handle).view()) : kNoEvent;
}

CommId Catalog::registerCommunicator(const CatalogCommunicator& info) noexcept {
  if (!impl_) return kNoComm;
  const CommId id =
      impl_->insert(impl_->communicators, KeyBytes<12>{}.add(info.comm_id).add(info.comm_rank).view(), &info);
  if (id == kNoComm) return kNoComm;
  const auto handle_key = KeyBytes<8>{}.add(info.handle);
  bool inserted = false;
  const std::uint32_t slot = impl_->comm_by_handle.insert(handle_key.view(), &id, inserted);
  if (slot == 0) {
    impl_->failures.fetch_add(1, std::memory_order_relaxed);
  } else if (!inserted) {
    // The handle was reused by a newer communicator: point it at this one.
    impl_->comm_by_handle.updateValue(slot, [id](std::byte* value) {
      std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(value)).store(id, std::memory_order_release);
    });
  }
  return id;
}

CommId Catalog::findCommunicator(std::uint64_t handle) const noexcept {
  if (!impl_) return kNoComm;
  const std::uint32_t slot = impl_->comm_by_handle.find(KeyBytes<8>{}.add(handle).view());
  if (slot == 0) return kNoComm;
  auto* value = reinterpret_cast<std::uint32_t*>(impl_->comm_by_handle.mutableValue(slot));
  return std::atomic_ref<std::uint32_t>(*value).load(std::memory_order_acquire);
}

std::optional<CatalogCommunicator> Catalog::communicator(CommId id) const noexcept {
  return impl_ ? readValue<CatalogCommunicator>(impl_->communicators, id) : std::nullopt;
}

std::uint32_t Catalog::communicatorCount() const noexcept { return impl_ ? impl_->communicators.size() : 0; }

ThreadId Catalog::registerThread(const CatalogThread& info) noexcept {
  if (!impl_) return kNoThread;
  return impl_->insert(impl_->threads, KeyBytes<8>{}.add(info.tid).view(), &info);
}

ThreadId Catalog::findThread(std::int64_t tid) const noexcept {
  return impl_ ? impl_->threads.find(KeyBytes<8>{}.add(tid).view()) : kNoThread;
}

std::optional<CatalogThread> Catalog::thread(ThreadId id) const noexcept {
  return impl_ ? readValue<CatalogThread>(impl_->threads, id) : std::nullopt;
}

std::uint32_t Catalog::threadCount() const noexcept { return impl_ ? impl_->threads.size() : 0; }

std::uint32_t Catalog::registerDevice(const CatalogDevice& info) noexcept {
  if (!impl_) return 0;
  return impl_->insert(impl_->devices, KeyBytes<4>{}.add(info.ordinal).view(), &info);
}

std::optional<CatalogDevice> Catalog::deviceAt(std::uint32_t index) const noexcept {
  return impl_ ? readValue<CatalogDevice>(impl_->devices, index) : std::nullopt;
}

std::uint32_t Catalog::deviceCount() const noexcept { return impl_ ? impl_->devices.size() : 0; }

std::uint64_t Catalog::failedRegistrations() const noexcept {
  return impl_ ? impl_->failures.load(std::memory_order_relaxed) : 0;
}

}  // namespace syncopate::trace
