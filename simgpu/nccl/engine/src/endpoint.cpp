#include "simgpu/nccl/endpoint.hpp"

#include "simgpu/nccl/futex.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace simgpu::nccl {
namespace {

constexpr std::int64_t kLivenessPeriodNs = 100'000'000;
constexpr std::int64_t kSleepSliceNs = 100'000'000;

// kill(pid, 0) also succeeds for a zombie (exited, not yet reaped by its parent).
bool processAlive(std::int32_t pid) {
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no procfs: trust kill()
  const auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= line.size()) return true;
  const char state = line[close_paren + 2];
  return state != 'Z' && state != 'X';
}

std::string seconds(std::int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", s);
  return text;
}

}  // namespace

std::string formatRanks(std::span<const int> ranks) {
  std::string out;
  for (int r : ranks) {
    if (!out.empty()) out += ", ";
    out += std::to_string(r);
  }
  return out;
}

Endpoint::Endpoint(const CommKey& key, int nranks, int rank, const Geometry& geometry, std::int64_t timeout_ns)
    : sent_messages(static_cast<std::size_t>(nranks), 0),
      received_messages(static_cast<std::size_t>(nranks), 0),
      key_(key),
      rank_(rank),
      nranks_(nranks),
      layout_(geometry),
      timeout_ns_(timeout_ns) {}

std::string Endpoint::label() const { return "communicator " + shortHex(key_); }

Status Endpoint::attach(const CommKey& key, int nranks, int rank, const RankIdentity& self,
                        const Geometry& geometry, std::int64_t timeout_ns, std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> ep(new Endpoint(key, nranks, rank, geometry, timeout_ns));
  const std::string name = segmentName(key);
  const std::int64_t deadline = monotonicNowNs() + timeout_ns;
  if (Status st = ShmFile::createOrOpen(name, ep->layout_.totalBytes(), deadline, &ep->file_); !st.ok()) return st;
  if (ep->file_.size() < sizeof(SegmentHeader)) {
    return Status::error(ncclSystemError, "shared memory " + name + " is too small to be a communicator");
  }
  SegmentHeader& h = ep->header();
  if (ep->file_.created()) {
    h.layout_version = kLayoutVersion;
    h.geometry = geometry;
    h.total_bytes = ep->layout_.totalBytes();
    h.creator_pid = static_cast<std::int32_t>(getpid());
    h.magic.store(kSegmentMagic, std::memory_order_release);
  } else {
    while (h.magic.load(std::memory_order_acquire) != kSegmentMagic) {
      if (monotonicNowNs() > deadline) {
        return Status::error(ncclRemoteError, "the rank that created " + ep->label() + " never initialised it");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (h.layout_version != kLayoutVersion || !(h.geometry == geometry) ||
        h.total_bytes != ep->file_.size()) {
      return Status::error(
          ncclInvalidUsage,
          "rank " + std::to_string(rank) + " joined " + ep->label() + " as one of " + std::to_string(nranks) +
              " ranks with " + std::to_string(geometry.chunk_bytes) + "-byte chunks, but another rank created it for " +
              std::to_string(h.geometry.nranks) + " ranks with " + std::to_string(h.geometry.chunk_bytes) +
              "-byte chunks: every rank must pass the same nranks (and the same SIMGPU_NCCL_CHUNK_BYTES)");
    }
  }
  RankRecord& rec = ep->record(rank);
  std::int32_t unclaimed = 0;
  if (!rec.pid.compare_exchange_strong(unclaimed, static_cast<std::int32_t>(getpid()))) {
    return Status::error(ncclInvalidUsage, "rank " + std::to_string(rank) + " of " + ep->label() +
                                               " was already taken by process " + std::to_string(unclaimed) +
                                               ": two callers passed the same rank to ncclCommInitRank");
  }
  ep->claimed_ = true;
  rec.device = self.device;
  rec.host = self.host;
  rec.ready.store(1, std::memory_order_release);
  // Once every rank has the segment mapped, its name is no longer needed: unlinking it now
  // means the memory goes away with the last mapping, even if every rank is killed.
  if (h.attached.fetch_add(1) + 1 == static_cast<std::uint32_t>(nranks)) ShmFile::unlink(name);
  ep->ringAllPeers();
  *out = std::move(ep);
  return Status::success();
}

Status Endpoint::awaitAllRanks() {
  Watchdog dog(timeout_ns_);
  std::vector<int> missing;
  auto findMissing = [&] {
    missing.clear();
    for (int r = 0; r < nranks_; ++r) {
      if (record(r).ready.load(std::memory_order_acquire) == 0) missing.push_back(r);
    }
    return !missing.empty();
  };
  for (;;) {
    const std::uint32_t seen = doorbell();
    if (!findMissing()) break;
    dog.startRound();
    if (Status st = dog.check(*this, missing, "joining " + label() + " (ncclCommInitRank)"); !st.ok()) {
      abortCommunicator(st);
      return st;
    }
    if (!dog.recheckNow()) sleep(seen, kSleepSliceNs);
  }
  std::vector<RankIdentity> peers;
  places_.clear();
  for (int r = 0; r < nranks_; ++r) {
    const RankRecord& rec = record(r);
    peers.push_back(RankIdentity{rec.device, rec.host, rec.pid.load()});
    places_.push_back(RankPlace{peers.back().process, peers.back().host});
  }
  for (int a = 0; a < nranks_; ++a) {
    for (int b = a + 1; b < nranks_; ++b) {
      const RankIdentity& x = peers[static_cast<std::size_t>(a)];
      const RankIdentity& y = peers[static_cast<std::size_t>(b)];
      if (x.process == y.process && x.device == y.device) {
        return Status::error(ncclInvalidUsage, "ranks " + std::to_string(a) + " and " + std::to_string(b) + " of " +
                                                   label() + " are both on device " + std::to_string(x.device) +
                                                   " of process " + std::to_string(x.process) +
                                                   " (duplicate GPU: NCCL needs one rank per device)");
      }
    }
  }
  return Status::success();
}

Endpoint::~Endpoint() {
  if (!claimed_) return;
  record(rank_).departed.store(1);
  ringAllPeers();
  // A communicator that never had all its ranks leaves no name behind.
  if (header().attached.load() < static_cast<std::uint32_t>(nranks_)) ShmFile::unlink(segmentName(key_));
}

void Endpoint::ring(int r) const {
  RankRecord& rec = record(r);
  rec.doorbell.fetch_add(1);
  if (rec.sleepers.load() != 0) futexWakeAll(rec.doorbell);
}

void Endpoint::ringAllPeers() const {
  for (int r = 0; r < nranks_; ++r) {
    if (r != rank_) ring(r);
  }
}

void Endpoint::sleep(std::uint32_t seen, std::int64_t timeout_ns) const {
  RankRecord& rec = record(rank_);
  rec.sleepers.fetch_add(1);
  if (rec.doorbell.load() == seen) futexWait(rec.doorbell, seen, timeout_ns);
  rec.sleepers.fetch_sub(1);
}

void Endpoint::abortCommunicator(const Status& why) const {
  SegmentHeader& h = header();
  std::uint32_t healthy = 0;
  if (h.abort_code.compare_exchange_strong(healthy, static_cast<std::uint32_t>(why.code))) {
    const std::size_t n = std::min(why.message.size(), kAbortMessageBytes - 1);
    std::memcpy(h.abort_message, why.message.data(), n);
    h.abort_message[n] = '\0';
    h.abort_message_ready.store(1, std::memory_order_release);
  }
  ringAllPeers();
}

void Endpoint::requestLocalAbort() {
  local_abort_.store(true);
  ring(rank_);
}

Status Endpoint::abortStatus() const {
  if (local_abort_.load()) {
    return Status::error(ncclRemoteError, label() + " was aborted on rank " + std::to_string(rank_) + " (ncclCommAbort)");
  }
  const SegmentHeader& h = header();
  const std::uint32_t code = h.abort_code.load();
  if (code == 0) return Status::success();
  // The failing rank writes its message right after the code.
  for (int spins = 0; spins < 1000 && h.abort_message_ready.load(std::memory_order_acquire) == 0; ++spins) {
    std::this_thread::yield();
  }
  std::string message = h.abort_message_ready.load(std::memory_order_acquire) != 0
                            ? std::string(h.abort_message)
                            : label() + " failed on another rank";
  return Status::error(static_cast<ncclResult_t>(code), std::move(message));
}

std::string Endpoint::unreachableReason(int r) const {
  const RankRecord& rec = record(r);
  if (rec.departed.load() != 0) {
    return "rank " + std::to_string(r) + " left the communicator (ncclCommDestroy or ncclCommAbort)";
  }
  const std::int32_t pid = rec.pid.load();
  if (pid == 0 || pid == getpid()) return "";
  if (!processAlive(pid)) return "rank " + std::to_string(r) + " (process " + std::to_string(pid) + ") has exited";
  return "";
}

Status Endpoint::allGatherSmall(const void* mine, std::size_t bytes, void* all) {
  RankRecord& self = record(rank_);
  const std::uint64_t round = self.boot_posted.load();
  Watchdog dog(timeout_ns_);
  std::vector<int> waiting;
  // Wait until every rank has read the previous round (held in the same buffer), post,
  // wait until every rank has posted, read, acknowledge.
  auto waitFor = [&](auto counter, std::uint64_t at_least) -> Status {
    for (;;) {
      const std::uint32_t seen = doorbell();
      waiting.clear();
      for (int r = 0; r < nranks_; ++r) {
        if ((record(r).*counter).load(std::memory_order_acquire) < at_least) waiting.push_back(r);
      }
      if (waiting.empty()) return Status::success();
      dog.startRound();
      if (Status st = dog.check(*this, waiting, "ncclCommSplit on " + label()); !st.ok()) return st;
      if (!dog.recheckNow()) sleep(seen, kSleepSliceNs);
    }
  };
  if (Status st = waitFor(&RankRecord::boot_consumed, round); !st.ok()) return st;
  std::memcpy(self.boot_data, mine, bytes);
  self.boot_posted.store(round + 1, std::memory_order_release);
  ringAllPeers();
  if (Status st = waitFor(&RankRecord::boot_posted, round + 1); !st.ok()) return st;
  for (int r = 0; r < nranks_; ++r) {
    std::memcpy(static_cast<char*>(all) + static_cast<std::size_t>(r) * bytes, record(r).boot_data, bytes);
  }
  self.boot_consumed.store(round + 1, std::memory_order_release);
  ringAllPeers();
  return Status::success();
}

Watchdog::Watchdog(std::int64_t timeout_ns)
    : timeout_ns_(timeout_ns), last_progress_ns_(monotonicNowNs()), next_liveness_check_ns_(0) {}

void Watchdog::progressed() { last_progress_ns_ = monotonicNowNs(); }

void Watchdog::startRound() {
  const std::int64_t now = monotonicNowNs();
  confirming_ = suspect_;
  suspect_ = false;
  check_liveness_ = confirming_ || now >= next_liveness_check_ns_;
  if (check_liveness_) next_liveness_check_ns_ = now + kLivenessPeriodNs;
}

Status Watchdog::check(const Endpoint& endpoint, std::span<const int> awaited, std::string_view what) {
  if (Status st = endpoint.abortStatus(); !st.ok()) return st;
  const std::int64_t now = monotonicNowNs();
  auto where = [&] {
    return std::string(what) + " on rank " + std::to_string(endpoint.rank()) + " of " + std::to_string(endpoint.nranks());
  };
  if (check_liveness_) {
    for (int r : awaited) {
      std::string reason = endpoint.unreachableReason(r);
      if (reason.empty()) continue;
      if (!confirming_) {
        suspect_ = true;
        break;
      }
      // A rank that failed publishes why before it exits: prefer its reason.
      if (Status st = endpoint.abortStatus(); !st.ok()) return st;
      return Status::error(ncclRemoteError, where() + " cannot complete: " + reason);
    }
  }
  if (now - last_progress_ns_ > timeout_ns_) {
    return Status::error(ncclRemoteError, "no progress for " + seconds(timeout_ns_) + " in " + where() +
                                              ": waiting for rank(s) " + formatRanks(awaited) +
                                              " (a rank may have skipped or mismatched a call, or hung; "
                                              "SIMGPU_NCCL_TIMEOUT_S sets the limit)");
  }
  return Status::success();
}

Status timeoutFromEnvironment(std::int64_t* timeout_ns) {
  *timeout_ns = kDefaultTimeoutNs;
  const char* text = std::getenv("SIMGPU_NCCL_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return Status::success();
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0) || !std::isfinite(value)) {
    return Status::error(ncclInvalidArgument, std::string("SIMGPU_NCCL_TIMEOUT_S=") + text +
                                                  " is not a positive number of seconds");
  }
  *timeout_ns = static_cast<std::int64_t>(std::min(value, 1e9) * 1e9);
  return Status::success();
}

Status chunkBytesFromEnvironment(std::size_t* chunk_bytes) {
  *chunk_bytes = 0;
  const char* text = std::getenv("SIMGPU_NCCL_CHUNK_BYTES");
  if (text == nullptr || *text == '\0') return Status::success();
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < 64 || value > (1ULL << 30)) {
    return Status::error(ncclInvalidArgument, std::string("SIMGPU_NCCL_CHUNK_BYTES=") + text +
                                                  " is not a byte count between 64 and 1073741824");
  }
  *chunk_bytes = static_cast<std::size_t>(value);
  return Status::success();
}

}  // namespace simgpu::nccl
