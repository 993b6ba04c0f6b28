#include "store_codec.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

namespace syncopate::analyzer {

namespace {

// Every field of a store row, named once by the tables' declaration, so that a column added
// there travels without an edit here.
#define SYNCOPATE_TABLE(Name, table, Enumerator, added_in_minor, comment) \
  template <class Row, class F>                                          \
    requires std::same_as<std::remove_const_t<Row>, trace::Name##Row>    \
  void forEachField(Row& row, F&& f) {
#define SYNCOPATE_COLUMN(field, Type, init, sql, comment) f(row.field);
#define SYNCOPATE_ROWID(field, comment) f(row.field);
#define SYNCOPATE_DIM3(field, comment) f(row.field);
#define SYNCOPATE_END_TABLE(Name, constraint) }
#include "syncopate/trace/store_tables.inc"

template <class T>
concept StoreRow = requires(T& row) { forEachField(row, [](auto&) {}); };

class Packer {
 public:
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      put(std::uint64_t{v.size()});
      raw(v.data(), v.size());
    } else if constexpr (requires { typename T::value_type; v.has_value(); }) {  // std::optional
      put(static_cast<std::uint8_t>(v.has_value()));
      if (v) put(*v);
    } else if constexpr (requires { v.data(); v.size(); }) {  // std::vector
      put(std::uint64_t{v.size()});
      if constexpr (std::is_trivially_copyable_v<typename T::value_type>)
        raw(v.data(), v.size() * sizeof(typename T::value_type));
      else
        for (const auto& e : v) put(e);
    } else if constexpr (StoreRow<T>) {
      forEachField(v, [this](const auto& field) { put(field); });
    } else if constexpr (std::is_same_v<T, trace::TornTable>) {
      put(v.table), put(v.rows_kept);
    } else {
      static_assert(std::is_trivially_copyable_v<T>);
      raw(&v, sizeof v);
    }
  }
  std::vector<std::byte> take() && { return std::move(out_); }

 private:
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::byte> out_;
};

// The mirror of Packer; after the first short read every get() is a no-op and ok() is false.
class Unpacker {
 public:
  explicit Unpacker(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  void get(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      std::uint64_t n = 0;
      get(n);
      if (!fits(n)) return;
      v.assign(reinterpret_cast<const char*>(in_.data() + at_), n);
      at_ += n;
    } else if constexpr (requires { typename T::value_type; v.has_value(); }) {
      std::uint8_t has = 0;
      get(has);
      if (!has) return v.reset();
      typename T::value_type inner{};
      get(inner);
      v = inner;
    } else if constexpr (requires { v.data(); v.size(); }) {
      std::uint64_t n = 0;
      get(n);
      using E = typename T::value_type;
      // Each element takes at least one byte, so a count beyond the rest is damage, caught
      // before it sizes a vector; a vector grows only by what the message really holds.
      if (!fits(n)) return;
      if constexpr (std::is_trivially_copyable_v<E>) {
        if (n > (in_.size() - at_) / sizeof(E) || !fits(n * sizeof(E))) {
          ok_ = false;
          return;
        }
        v.resize(n);
        // An empty vector's data() may be null, which memcpy must not be given even for 0 bytes.
        if (n > 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(E));
        at_ += n * sizeof(E);
      } else {
        v.clear();
        for (std::uint64_t i = 0; i < n && ok_; ++i) {
          E e{};
          get(e);
          v.push_back(std::move(e));
        }
      }
    } else if constexpr (StoreRow<T>) {
      forEachField(v, [this](auto& field) { get(field); });
    } else if constexpr (std::is_same_v<T, trace::TornTable>) {
      get(v.table), get(v.rows_kept);
    } else {
      static_assert(std::is_trivially_copyable_v<T>);
      if (!fits(sizeof v)) return;
      std::memcpy(&v, in_.data() + at_, sizeof v);
      at_ += sizeof v;
    }
  }
  bool done() const { return ok_ && at_ == in_.size(); }

 private:
  bool fits(std::uint64_t n) {
    ok_ = ok_ && n <= in_.size() - at_;
    return ok_;
  }
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// One list of what travels, for both directions.
template <class Io, class Facts, class Rows>
void transfer(Io& io, Facts& f, Rows& r) {
  auto each = [&io](auto&... v) { (io(v), ...); };
  each(f.path, f.rank, f.pid, f.host, f.source, f.realtime_offset_ns, f.world_size, f.trace_start_ns, f.trace_end_ns,
       f.start_ns, f.end_ns, f.strings, f.tear.file_bytes, f.tear.header_bytes, f.tear.tables);
  each(r.streams, r.threads, r.calls, r.ops, r.collectives, r.ranges, r.diagnostics, r.implausible_rows, r.torn);
}

}  // namespace

std::vector<std::byte> packStore(const StoreFacts& facts, const StoreRows& rows) {
  Packer p;
  auto io = [&p](const auto& v) { p.put(v); };
  transfer(io, facts, rows);
  return std::move(p).take();
}

trace::Status unpackStore(std::span<const std::byte> bytes, StoreFacts& facts, StoreRows& rows) {
  Unpacker u(bytes);
  auto io = [&u](auto& v) { u.get(v); };
  transfer(io, facts, rows);
  if (!u.done()) return trace::failure("its rows arrived damaged (" + std::to_string(bytes.size()) + " bytes that do not decode)");
  return {};
}

}  // namespace syncopate::analyzer
