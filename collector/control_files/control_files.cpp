#include "syncopate/collector/control_files.hpp"
#include "syncopate/trace/json_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

namespace syncopate::collector {
namespace {

using nlohmann::json;

std::string errnoText(const char* what, const std::filesystem::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

}  // namespace

std::string formatRequest(const AttachRequest& request) {
  json j{{"id", request.id}, {"first_iteration", request.first_iteration}};
  if (request.iterations > 0) j["iterations"] = request.iterations;
  if (request.seconds > 0) j["seconds"] = request.seconds;
  return trace::jsonText(j);
}

namespace {

// An integer field that fits T, else nullopt: nlohmann's get<T>() would narrow a larger
// integer silently and convert a float, which is undefined behaviour beyond T's range.
template <typename T>
std::optional<T> integerField(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (!std::in_range<T>(value)) return std::nullopt;
    return static_cast<T>(value);
  }
  const auto value = it->get<std::int64_t>();
  if (!std::in_range<T>(value)) return std::nullopt;
  return static_cast<T>(value);
}

}  // namespace

std::optional<AttachRequest> parseRequest(std::string_view text, std::string& error) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the request is not a JSON object";
    return std::nullopt;
  }
  AttachRequest request;
  const auto id = integerField<std::uint64_t>(j, "id");
  const auto first_iteration = integerField<std::int64_t>(j, "first_iteration");
  if (!id || !first_iteration) {
    error = "the request lacks a numeric id or first_iteration";
    return std::nullopt;
  }
  request.id = *id;
  request.first_iteration = *first_iteration;
  request.iterations = integerField<std::int64_t>(j, "iterations").value_or(0);
  if (j.contains("seconds") && j["seconds"].is_number()) request.seconds = j["seconds"].get<double>();
  if ((request.iterations > 0) == (request.seconds > 0)) {
    error = "the request must ask for either a positive number of iterations or of seconds";
    return std::nullopt;
  }
  if (request.iterations > 0 && request.first_iteration < 0) {
    error = "an iterations request needs a first iteration";
    return std::nullopt;
  }
  return request;
}

std::string formatStatus(const ProcessStatus& status) {
  return trace::jsonText(json{{"pid", status.pid},
              {"host", status.host},
              {"rank", status.rank},
              {"state", status.state},
              {"request", status.request},
              {"iteration", status.iteration},
              {"iterations_per_second", status.iterations_per_second},
              {"recorded_iterations", status.recorded_iterations},
              {"marker", status.marker},
              {"heartbeat_unix_ns", status.heartbeat_unix_ns},
              {"message", status.message}});
}

std::optional<ProcessStatus> parseStatus(std::string_view text, std::string& error) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  ProcessStatus status;
  std::string bad_integer;
  auto integer = [&]<typename T>(T& field, const char* key) {
    if (auto value = integerField<T>(j, key)) field = *value;
    else if (bad_integer.empty()) bad_integer = key;
  };
  integer(status.pid, "pid");
  integer(status.rank, "rank");
  integer(status.request, "request");
  integer(status.iteration, "iteration");
  integer(status.recorded_iterations, "recorded_iterations");
  integer(status.heartbeat_unix_ns, "heartbeat_unix_ns");
  if (!bad_integer.empty()) {
    error = "\"" + bad_integer + "\" is missing or not an integer in range";
    return std::nullopt;
  }
  try {
    status.host = j.at("host").get<std::string>();
    status.state = j.at("state").get<std::string>();
    status.iterations_per_second = j.at("iterations_per_second").get<double>();
    status.marker = j.at("marker").get<std::string>();
    status.message = j.value("message", std::string());
    return status;
  } catch (const json::exception& e) {
    error = std::string("a field is missing or has the wrong type (") + e.what() + ")";
    return std::nullopt;
  }
}

std::string statusFileName(std::string_view host, std::int64_t pid) {
  return std::string(kStatusFilePrefix) + std::string(host) + "-" + std::to_string(pid) + ".json";
}

bool ensurePrivateDirectory(const std::filesystem::path& directory, std::string& error) {
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    error = errnoText("cannot create", directory);
    return false;
  }
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0) {
    error = errnoText("cannot inspect", directory);
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = directory.string() + " is not a directory";
    return false;
  }
  if (info.st_uid != ::geteuid()) {
    error = directory.string() + " belongs to another user; the control channel only works for its owner";
    return false;
  }
  if ((info.st_mode & 077) != 0) {
    error = directory.string() + " is accessible to other users; make it private (chmod 700)";
    return false;
  }
  return true;
}

bool isPrivateFile(const std::filesystem::path& file, std::string& error) {
  struct stat info {};
  if (::lstat(file.c_str(), &info) != 0) {
    error = errnoText("cannot inspect", file);
    return false;
  }
  if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || (info.st_mode & 022) != 0) {
    error = file.string() + " is not a regular file of this user that only this user can write";
    return false;
  }
  return true;
}

bool writePrivateFileAtomically(const std::filesystem::path& file, std::string_view text, std::string& error) {
  std::filesystem::path temporary = file;
  temporary += ".tmp" + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = errnoText("cannot write", temporary);
    return false;
  }
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      error = errnoText("cannot write", temporary);
      ::close(fd);
      ::unlink(temporary.c_str());
      return false;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    error = errnoText("cannot rename onto", file);
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

std::optional<std::string> readFile(const std::filesystem::path& file, std::string& error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    error = errnoText("cannot read", file);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<ProcessStatus> readStatuses(const std::filesystem::path& control_directory,
                                        std::vector<std::string>& problems) {
  std::vector<ProcessStatus> statuses;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(control_directory, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(kStatusFilePrefix) || !name.ends_with(".json")) continue;
    std::string error;
    if (!isPrivateFile(entry.path(), error)) {
      problems.push_back(error);
      continue;
    }
    auto text = readFile(entry.path(), error);
    if (!text) {
      problems.push_back(error);
      continue;
    }
    auto status = parseStatus(*text, error);
    if (!status) {
      problems.push_back(entry.path().string() + ": " + error);
      continue;
    }
    statuses.push_back(std::move(*status));
  }
  if (ec) problems.push_back("cannot list " + control_directory.string() + ": " + ec.message());
  return statuses;
}

std::optional<std::int64_t> iterationOfMarker(std::string_view marker, std::string_view name, std::int64_t counted) {
  if (marker.empty() || !name.starts_with(marker)) return std::nullopt;
  std::string_view rest = name.substr(marker.size());
  if (rest.empty() || rest.front() == ' ') return counted;
  if (rest.front() != '#') return std::nullopt;
  rest.remove_prefix(1);
  std::int64_t number = 0;
  auto [end, result] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  if (result == std::errc{} && end != rest.data() && (end == rest.data() + rest.size() || *end == ' ')) return number;
  return counted;
}

}  // namespace syncopate::collector
