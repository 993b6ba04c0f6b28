#include "syncopate/trace/run_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sqlite_util.hpp"
#include "syncopate/trace/json_text.hpp"

namespace syncopate::trace {

namespace {

constexpr std::string_view kStoreSuffix = ".sqlite";
constexpr std::string_view kFormat = "syncopate-run";

// The number between `prefix` and ".sqlite" in a store's file name; nullopt for any other name.
template <class T>
std::optional<T> numberIn(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() + kStoreSuffix.size() || !name.starts_with(prefix) || !name.ends_with(kStoreSuffix)) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - kStoreSuffix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  T value{};
  const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (err != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::string isoTime(std::int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(unix_ns % 1'000'000'000));
  return text;
}

// Keys RunMeta knows; everything else is kept in extra_json.
constexpr const char* kKnownKeys[] = {"format", "version", "tool_version", "command", "hosts", "start_unix_ns",
                                      "start_time", "backend", "backend_reason", "source"};

}  // namespace

std::string rankStoreName(std::int32_t rank) { return "rank-" + std::to_string(rank) + std::string(kStoreSuffix); }
std::string pidStoreName(std::int64_t pid) { return "pid-" + std::to_string(pid) + std::string(kStoreSuffix); }

Result<std::vector<StoreFile>> listStores(const std::filesystem::path& run_dir) noexcept {
  try {
    std::error_code ec;
    if (!std::filesystem::is_directory(run_dir, ec)) {
      return Status{StatusCode::NotFound, run_dir.string() + " is not a directory (expected a run directory)"};
    }
    std::vector<StoreFile> stores;
    std::filesystem::directory_iterator it(run_dir, ec);
    if (ec) return detail::errnoStatus(ec.value(), "cannot list " + run_dir.string());
    for (const auto& entry : it) {
      const std::string name = entry.path().filename().string();
      StoreFile store{entry.path(), numberIn<std::int32_t>(name, "rank-"), numberIn<std::int64_t>(name, "pid-")};
      if ((store.rank || store.pid) && entry.is_regular_file(ec)) stores.push_back(std::move(store));
    }
    std::sort(stores.begin(), stores.end(), [](const StoreFile& a, const StoreFile& b) {
      if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();  // ranks first
      if (a.rank) return *a.rank < *b.rank;
      return *a.pid < *b.pid;
    });
    return stores;
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory listing " + run_dir.string()};
  } catch (const std::exception& e) {
    return Status{StatusCode::IoError, "cannot list " + run_dir.string() + ": " + e.what()};
  }
}

std::string openFailure(int err) {
  return err == ELOOP ? "it is a symbolic link, and a run directory's files are never written through one"
                      : std::strerror(err);
}

Status writeRunMeta(const std::filesystem::path& run_dir, const RunMeta& meta) noexcept {
  try {
    nlohmann::ordered_json j;
    j["format"] = kFormat;
    j["version"] = kRunMetaVersion;
    j["tool_version"] = meta.tool_version;
    j["command"] = meta.command;
    j["hosts"] = meta.hosts;
    j["start_unix_ns"] = meta.start_unix_ns;
    j["start_time"] = isoTime(meta.start_unix_ns);  // for people; readers use start_unix_ns
    j["backend"] = meta.backend;
    j["backend_reason"] = meta.backend_reason;
    j["source"] = meta.source;
    for (const auto& [key, text] : meta.extra_json) {
      if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) != std::end(kKnownKeys)) {
        return Status{StatusCode::InvalidArgument, "meta.json extra key '" + key + "' is a key RunMeta owns"};
      }
      j[key] = nlohmann::ordered_json::parse(text);
    }
    const std::string content = trace::jsonText(j, 2) + "\n";

    const std::filesystem::path target = run_dir / kRunMetaFileName;
    const std::filesystem::path temp = run_dir / (std::string(kRunMetaFileName) + ".tmp");
    // O_NOFOLLOW: a symbolic link planted under this name must not make us write elsewhere.
    const int fd = ::open(temp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return detail::errnoStatus(errno, "cannot write " + temp.string());
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        ::unlink(temp.c_str());
        return detail::errnoStatus(err, "cannot write " + temp.string());
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
      const int err = errno;
      ::unlink(temp.c_str());
      return detail::errnoStatus(err, "cannot write " + temp.string());
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::unlink(temp.c_str());
      return detail::errnoStatus(err, "cannot write " + target.string());
    }
    return {};
  } catch (const nlohmann::json::exception& e) {
    return Status{StatusCode::InvalidArgument, std::string("meta.json extra value is not valid JSON: ") + e.what()};
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory writing meta.json"};
  } catch (...) {
    return Status{StatusCode::Internal, "unexpected failure writing meta.json"};
  }
}

Result<RunMeta> readRunMeta(const std::filesystem::path& run_dir) noexcept {
  const std::filesystem::path file = run_dir / kRunMetaFileName;
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) return Status{StatusCode::NotFound, file.string() + ": no such file"};
      return detail::errnoStatus(errno != 0 ? errno : EACCES, "cannot read " + file.string());
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    const auto j = nlohmann::json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
    const auto bad = [&](const std::string& why) {
      return Status{StatusCode::InvalidArgument, file.string() + " " + why};
    };
    if (j.is_discarded()) return bad("is not valid JSON");
    if (!j.is_object()) return bad("is not a JSON object");
    if (!j.contains("format") || j["format"] != kFormat) return bad("is not a Syncopate run's meta.json (no \"format\": \"syncopate-run\")");
    if (!j.contains("version") || !j["version"].is_number_integer()) return bad("has no integer \"version\"");
    const int version = j["version"].get<int>();
    if (version > kRunMetaVersion) {
      return bad("has version " + std::to_string(version) + ", this syncopate reads up to " +
                 std::to_string(kRunMetaVersion) + "; use a newer syncopate");
    }
    RunMeta meta;
    const auto text = [&](const char* key, std::string& out) -> bool {
      if (!j.contains(key)) return true;
      if (!j[key].is_string()) return false;
      out = j[key].get<std::string>();
      return true;
    };
    const auto texts = [&](const char* key, std::vector<std::string>& out) -> bool {
      if (!j.contains(key)) return true;
      if (!j[key].is_array()) return false;
      for (const auto& item : j[key]) {
        if (!item.is_string()) return false;
        out.push_back(item.get<std::string>());
      }
      return true;
    };
    if (!text("tool_version", meta.tool_version)) return bad("has a non-string \"tool_version\"");
    if (!texts("command", meta.command)) return bad("has a \"command\" that is not an array of strings");
    if (!texts("hosts", meta.hosts)) return bad("has \"hosts\" that is not an array of strings");
    if (j.contains("start_unix_ns")) {
      if (!j["start_unix_ns"].is_number_integer()) return bad("has a non-integer \"start_unix_ns\"");
      meta.start_unix_ns = j["start_unix_ns"].get<std::int64_t>();
    }
    if (!text("backend", meta.backend)) return bad("has a non-string \"backend\"");
    if (!text("backend_reason", meta.backend_reason)) return bad("has a non-string \"backend_reason\"");
    if (!text("source", meta.source)) return bad("has a non-string \"source\"");
    for (const auto& [key, value] : j.items()) {
      if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys)) {
        meta.extra_json.emplace_back(key, trace::jsonText(value));
      }
    }
    return meta;
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::OutOfMemory, "out of memory reading " + file.string()};
  } catch (const std::exception& e) {
    return Status{StatusCode::InvalidArgument, file.string() + " cannot be read: " + e.what()};
  }
}

}  // namespace syncopate::trace
