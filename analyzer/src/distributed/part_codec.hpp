// What the processes of a distributed analysis exchange after the stores' summaries, as bytes
// (docs/analyzer.md, "Ranks analysed where they were read").
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace syncopate::analyzer {

// Values that are trivially copyable, strings and vectors of either, written as bytes. Every process runs the same build, so the layout is
// this build's own; reading checks every length.
class PartWriter {
 public:
  template <class T>
  PartWriter& put(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      put(std::uint64_t{v.size()});
      out_.append(v);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      put(std::uint64_t{v.size()});
      for (const auto& e : v) put(e);
    }
    return *this;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class PartReader {
 public:
  explicit PartReader(std::string_view in) : in_(in) {}
  template <class T>
  PartReader& get(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      std::uint64_t n = 0;
      get(n);
      if (!take(n)) return *this;
      v.assign(in_.substr(at_ - n, n));
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      if (take(sizeof v)) std::memcpy(&v, in_.data() + at_ - sizeof v, sizeof v);
    } else {
      std::uint64_t n = 0;
      get(n);
      // Each element takes at least a byte: a count beyond what is left is damage, not a size.
      if (n > in_.size() - at_) {
        ok_ = false;
        return *this;
      }
      v.clear();
      v.resize(n);
      for (auto& e : v) get(e);
    }
    return *this;
  }
  bool ok() const { return ok_; }

 private:
  bool take(std::size_t n) {
    if (!ok_ || n > in_.size() - at_) return ok_ = false;
    at_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace syncopate::analyzer
