// The arm/attach control channel's files, shared by the armed processes (the preload library)
// and `syncopate attach`. They live in DIR/.control/, a directory only its owner can enter
// (0700), holding files only the owner can read and write (0600): nothing listens on a socket
// or a port, a request or directory that is not the same user's (or that others could write)
// is refused, and it works across hosts when DIR is on a shared filesystem.
//
//   request.json                written by `syncopate attach`, atomically (rename):
//     {"id": 3, "first_iteration": 42, "iterations": 5}
//     {"id": 4, "first_iteration": 42, "seconds": 2.0}   (first_iteration -1: start at once)
//   process-<host>-<pid>.json   written by each armed process, atomically, at every change and
//                               at least every heartbeat:
//     {"pid": 1234, "host": "n1", "rank": 0, "state": "waiting", "request": 3,
//      "iteration": 40, "iterations_per_second": 9.5, "recorded_iterations": 0,
//      "marker": "ProfilerStep", "heartbeat_unix_ns": 1700000000000000000, "message": ""}
//   states: armed (no request yet), waiting (for the first planned iteration), recording,
//   done (the plan was recorded), missed (the process was already past the first iteration),
//   error (message says what), exited (the process ended).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncopate::collector {

inline constexpr const char* kControlDirectoryName = ".control";
inline constexpr const char* kRequestFileName = "request.json";
inline constexpr const char* kStatusFilePrefix = "process-";
inline constexpr std::int64_t kHeartbeatNs = 500'000'000;
// A process whose heartbeat is older than this is taken to be gone (killed without a word).
inline constexpr std::int64_t kStaleHeartbeatNs = 3'000'000'000;

struct AttachRequest {
  std::uint64_t id = 0;
  std::int64_t first_iteration = -1;  // -1: start at once (seconds plans only)
  std::int64_t iterations = 0;        // > 0 for an iterations plan
  double seconds = 0.0;               // > 0 for a seconds plan
};

struct ProcessStatus {
  std::int64_t pid = 0;
  std::string host;
  std::int32_t rank = -1;
  std::string state;
  std::uint64_t request = 0;
  std::int64_t iteration = -1;
  double iterations_per_second = 0.0;
  std::int64_t recorded_iterations = 0;
  std::string marker;
  std::int64_t heartbeat_unix_ns = 0;
  std::string message;
};

std::string formatRequest(const AttachRequest& request);
// nullopt, with `error` saying why, when `text` is not a valid request.
std::optional<AttachRequest> parseRequest(std::string_view text, std::string& error);

std::string formatStatus(const ProcessStatus& status);
std::optional<ProcessStatus> parseStatus(std::string_view text, std::string& error);

std::string statusFileName(std::string_view host, std::int64_t pid);

// Creates `directory` with mode 0700 if missing; false (with `error`) if it is not a directory
// owned by this user that nobody else can enter.
bool ensurePrivateDirectory(const std::filesystem::path& directory, std::string& error);

// True when `file` is a regular file owned by this user that nobody else can write.
bool isPrivateFile(const std::filesystem::path& file, std::string& error);

// Writes `text` to `file` through a temporary file renamed over it, with mode 0600.
bool writePrivateFileAtomically(const std::filesystem::path& file, std::string_view text, std::string& error);

// The whole file, or nullopt (with `error`).
std::optional<std::string> readFile(const std::filesystem::path& file, std::string& error);

// The status files of a run's control directory, parsed (unreadable ones are reported in
// `problems`, one sentence each).
std::vector<ProcessStatus> readStatuses(const std::filesystem::path& control_directory,
                                        std::vector<std::string>& problems);

// The iteration an NVTX range name stands for under the marker rule shared with the
// analyzer: a range whose name equals MARKER, or starts with "MARKER " or "MARKER#";
// "MARKER#<digits>" numbers the iteration, otherwise `counted` (the caller's running count of
// markers) is its number. nullopt when the name is not a marker.
std::optional<std::int64_t> iterationOfMarker(std::string_view marker, std::string_view name, std::int64_t counted);

}  // namespace syncopate::collector
