// The project's one error convention, from the store up to the command line: a function that
// can fail returns a Status (a code and one sentence for the user: what was wrong and what to
// do) or a Result<T> (a value, or the Status that says why there is none). Errors are values,
// never exceptions: the collector links this library into a preloaded shared object that must
// not throw into the traced program, so these types are noexcept where the collector calls
// them. The analyzer, the tuner and the GUI use the same types; the command line prints the
// sentence as it is and exits 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <type_traits>
#include <utility>

namespace syncopate::trace {

enum class StatusCode : std::uint8_t {
  Ok = 0,
  InvalidArgument = 1,    // the caller passed something the API does not accept
  NotFound = 2,           // a file or directory that should exist does not
  AlreadyExists = 3,      // a file that must not be overwritten exists (rank-<R>.sqlite)
  PermissionDenied = 4,   // the directory or file cannot be written / read
  DiskFull = 5,           // SQLITE_FULL: the disk (or the store's size limit) is full
  IoError = 6,            // any other I/O failure reported by the OS or SQLite
  NotAStore = 7,          // the file is not a SQLite database, or not a Syncopate store
  Corrupt = 8,            // a Syncopate store whose content is damaged or truncated
  UnsupportedVersion = 9, // a store of a schema major version this build does not read
  OutOfMemory = 10,
  Internal = 11,          // a bug: an invariant of this library did not hold
};

std::string_view toString(StatusCode code) noexcept;

// A code and one sentence saying what went wrong and, where it helps, what to do.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message) noexcept : code_(code), message_(std::move(message)) {}

  bool ok() const noexcept { return code_ == StatusCode::Ok; }
  explicit operator bool() const noexcept { return ok(); }
  StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

// A failure of the input a user gave (a file, a run, an argument), in one sentence; the code
// says which kind where the caller knows better.
inline Status failure(std::string message, StatusCode code = StatusCode::InvalidArgument) noexcept {
  return Status(code, std::move(message));
}

// Either a value or the Status that says why there is none (std::expected is C++23).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) noexcept(std::is_nothrow_move_constructible_v<T>) : value_(std::move(value)) {}
  Result(Status status) noexcept : status_(std::move(status)) {
    if (status_.ok()) status_ = Status(StatusCode::Internal, "a Result was made from an ok Status");
  }

  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }

  // The failure; an ok Status when there is a value.
  const Status& status() const noexcept { return status_; }
  const std::string& message() const noexcept { return status_.message(); }
  StatusCode code() const noexcept { return status_.code(); }

  // Precondition: ok().
  T& value() & noexcept { return *value_; }
  const T& value() const& noexcept { return *value_; }
  T&& value() && noexcept { return std::move(*value_); }
  T* operator->() noexcept { return &*value_; }
  const T* operator->() const noexcept { return &*value_; }
  T& operator*() & noexcept { return *value_; }
  const T& operator*() const& noexcept { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace syncopate::trace
