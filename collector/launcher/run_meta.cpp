// meta.json of a recorded run, and what the run's stores say about it afterwards.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "host_name.hpp"
#include "syncopate/collector/record.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::collector {

using trace::Result;
using trace::Status;
using trace::StatusCode;

namespace {

// Several `syncopate record` of one run (srun starts one per rank) update meta.json in turn.
// O_NOFOLLOW: a symbolic link planted as the lock file must not create or open a file elsewhere.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::filesystem::path& directory)
      : fd_(::open((directory / ".meta.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_;
};

void setExtra(trace::RunMeta& meta, const std::string& key, const nlohmann::json& value) {
  std::string text = trace::jsonText(value);
  for (auto& [name, json] : meta.extra_json) {
    if (name == key) {
      json = text;
      return;
    }
  }
  meta.extra_json.emplace_back(key, text);
}

void addHost(trace::RunMeta& meta, const std::string& host) {
  if (!host.empty() && std::find(meta.hosts.begin(), meta.hosts.end(), host) == meta.hosts.end()) {
    meta.hosts.push_back(host);
  }
}

}  // namespace

Status writeStartMeta(const RecordOptions& options, std::int64_t start_unix_ns) {
  DirectoryLock lock(options.output_dir);
  auto existing = trace::readRunMeta(options.output_dir);
  trace::RunMeta meta = existing.ok() ? existing.value() : trace::RunMeta{};
  if (!existing.ok()) {
    meta.tool_version = SYNCOPATE_VERSION;
    meta.command = options.command;
    meta.start_unix_ns = start_unix_ns;
    meta.source = "record";
    setExtra(meta, "backend_requested", options.backend);
    setExtra(meta, "armed", options.armed);
    setExtra(meta, "iteration_marker", options.iteration_marker);
    setExtra(meta, "nccl_profiler_requested", ncclProfilerRequest(options, currentEnvironment()));
  }
  addHost(meta, hostName());
  return trace::writeRunMeta(options.output_dir, meta);
}

Result<RecordSummary> summarizeRun(const std::filesystem::path& directory) {
  auto stores = trace::listStores(directory);
  if (!stores.ok()) return stores.status();
  RecordSummary summary;
  std::set<std::string> hosts;
  std::set<std::string> reasons;
  for (const trace::StoreFile& file : stores.value()) {
    auto reader = trace::StoreReader::open(file.path);
    if (!reader.ok()) {
      summary.problems.push_back(reader.message());
      continue;
    }
    ++summary.stores;
    if (auto rank = reader->rank()) summary.ranks.push_back(*rank);
    if (auto host = reader->metaValue("host")) hosts.emplace(*host);
    if (auto backend = reader->metaValue("backend")) ++summary.backends[std::string(*backend)];
    if (auto reason = reader->metaValue("backend_reason")) reasons.emplace(*reason);
    if (reader->metaValue("nccl_profiler") == "loaded") ++summary.nccl_profiler_loaded;
    if (auto queues = reader->metaValue("cuda_device_max_connections")) ++summary.max_connections[std::string(*queues)];
    Status scanned = reader->forEachCounter([&](const trace::CounterRow& row) {
      if (row.value != 0) summary.counters[row.name] += row.value;
    });
    if (!scanned.ok()) summary.problems.push_back(scanned.message());
  }
  std::sort(summary.ranks.begin(), summary.ranks.end());
  summary.hosts.assign(hosts.begin(), hosts.end());
  summary.backend_reasons.assign(reasons.begin(), reasons.end());
  return summary;
}

Status writeEndMeta(const std::filesystem::path& directory, const RecordSummary& summary) {
  DirectoryLock lock(directory);
  auto existing = trace::readRunMeta(directory);
  if (!existing.ok()) return existing.status();
  trace::RunMeta meta = existing.value();
  for (const std::string& host : summary.hosts) addHost(meta, host);
  if (summary.backends.size() == 1) {
    meta.backend = summary.backends.begin()->first;
  } else if (summary.backends.size() > 1) {
    meta.backend = "mixed";
  }
  meta.backend_reason.clear();
  for (const std::string& reason : summary.backend_reasons) {
    if (!meta.backend_reason.empty()) meta.backend_reason += "; ";
    meta.backend_reason += reason;
  }
  setExtra(meta, "stores", summary.stores);
  setExtra(meta, "nccl_profiler_loaded_stores", summary.nccl_profiler_loaded);
  return trace::writeRunMeta(directory, meta);
}

}  // namespace syncopate::collector
