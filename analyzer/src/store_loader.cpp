#include "store_loader.hpp"

#include <bit>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diagnostic_row.hpp"

namespace syncopate::analyzer {

namespace {

class StoreLoader {
 public:
  StoreLoader(const StoreFacts& facts, const StoreRows& rows, RunModelBuilder& builder, LoadProgress& progress)
      : f_(facts), rows_(rows), b_(builder), progress_(progress), name_(std::filesystem::path(facts.path).filename().string()) {}

  void load() {
    addRank();
    loadStreamsAndThreads();
    loadApiCalls();
    loadOps();
    loadCollectives();
    loadRanges();
    loadDiagnostics();
    reportSkipped();
    reportTear();
  }

 private:
  // A string id beyond the store's strings table (a damaged row) reads as the empty name,
  // counted; the table below is thus never larger than the store's own.
  StringId str(trace::StringId id) {
    if (id == trace::kNoString) return 0;
    if (id >= f_.strings.size()) {
      ++unknown_strings_;
      return 0;
    }
    if (id >= strings_.size()) strings_.resize(std::max<std::size_t>(id + 1, strings_.size() * 2), kUnset);
    if (strings_[id] == kUnset) strings_[id] = b_.intern(f_.strings[id]);
    return strings_[id];
  }

  void addRank() {
    RankInfo info;
    info.rank = f_.rank.value_or(-1);
    info.pid = f_.pid.value_or(-1);
    info.host = f_.host.value_or("");
    info.source = f_.source.value_or("record");
    info.store_path = f_.path;
    info.realtime_offset_ns = f_.realtime_offset_ns;
    info.world_size = static_cast<std::int32_t>(f_.world_size.value_or(-1));
    const auto start = f_.trace_start_ns ? f_.trace_start_ns : f_.start_ns;
    const auto end = f_.trace_end_ns ? f_.trace_end_ns : f_.end_ns;
    if (start && end && *end >= *start) info.recording_start_ns = *start, info.recording_end_ns = *end;
    // A writer sets end_ns when it closes its store; without it the process never got there.
    if (!f_.end_ns) {
      const std::string whose = info.rank >= 0 ? fmt::format("rank {}", info.rank) : fmt::format("process {}", info.pid);
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_store_not_closed>(name_, 1, whose));
    }
    rank_ = b_.addRank(std::move(info));
  }

  void loadStreamsAndThreads() {
    for (const trace::StreamRow& row : rows_.streams) {
      const std::int64_t handle = static_cast<std::int64_t>(row.handle.value_or(row.id));
      const std::string label = row.name.empty() ? "stream " + std::to_string(handle) : row.name;
      if (row.id >= streams_.size()) streams_.resize(row.id + 1, kNone);
      constexpr std::uint32_t kNonBlocking = 1;  // cudaStreamNonBlocking
      streams_[row.id] = b_.addStream(rank_, row.device_id, handle, label, row.priority.value_or(0), row.id,
                                      (row.flags.value_or(0) & kNonBlocking) != 0);
    }
    for (const trace::ThreadRow& row : rows_.threads) {
      if (row.id >= threads_.size()) threads_.resize(row.id + 1, kNone);
      threads_[row.id] = b_.addThread(rank_, row.tid, row.name, row.id);
    }
  }

  void loadApiCalls() {
    calls_by_correlation_.reserve(rows_.calls.size());
    for (const CallLite& row : rows_.calls) {
      const Index thread = row.thread < threads_.size() ? threads_[row.thread] : kNone;
      if (thread == kNone) {
        ++skipped_calls_;
        continue;
      }
      const Index call = b_.addApiCall({.thread = thread, .domain = row.domain, .name = str(row.name),
                                        .start = row.start, .end = row.end, .store_id = row.id});
      if (row.correlation != kUnknown) calls_by_correlation_.push_back({row.correlation, call});
    }
    progress_.add(name_, rows_.calls.size());
    // Correlation ids count the process's calls, so they are usually dense: then a table
    // indexed by id replaces a binary search per op, and is filled without sorting (calls come
    // in index order, so the first call seen for an id is its lowest, as after a sort).
    if (calls_by_correlation_.empty()) return;
    const auto [lo_it, hi_it] = std::minmax_element(calls_by_correlation_.begin(), calls_by_correlation_.end(),
                                                    [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::int64_t lo = lo_it->first, hi = hi_it->first;
    // Unsigned: the ids of a damaged store may lie far enough apart to overflow a signed span.
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span < 4 * static_cast<std::uint64_t>(calls_by_correlation_.size()) + 1024) {
      first_correlation_ = lo;
      call_at_.assign(static_cast<std::size_t>(hi - lo + 1), kNone);
      for (const auto& [corr, call] : calls_by_correlation_)
        if (call_at_[static_cast<std::size_t>(corr - lo)] == kNone) call_at_[static_cast<std::size_t>(corr - lo)] = call;
      calls_by_correlation_ = {};
    } else if (!std::is_sorted(calls_by_correlation_.begin(), calls_by_correlation_.end())) {
      std::sort(calls_by_correlation_.begin(), calls_by_correlation_.end());
    }
  }

  Index callOf(std::int64_t correlation) const {
    if (correlation == kUnknown) return kNone;
    if (!call_at_.empty()) {
      const std::int64_t at = correlation - first_correlation_;
      return at >= 0 && at < static_cast<std::int64_t>(call_at_.size()) ? call_at_[static_cast<std::size_t>(at)] : kNone;
    }
    auto it = std::lower_bound(calls_by_correlation_.begin(), calls_by_correlation_.end(),
                               std::make_pair(correlation, Index{0}));
    return it != calls_by_correlation_.end() && it->first == correlation ? it->second : kNone;
  }

  Index streamOf(trace::StreamId id) const {
    if (id == trace::kNoStream || id >= streams_.size()) return kNone;
    return streams_[id];
  }

  void loadOps() {
    for (const OpLite& row : rows_.ops) {
      const Index call = callOf(row.correlation);
      if (row.kind == trace::OpKind::HostSync) {
        b_.addHostSync({.rank = rank_, .api_call = call,
                        .sync_kind = row.sync_kind == 255 ? trace::SyncKind::Unknown : static_cast<trace::SyncKind>(row.sync_kind),
                        .stream = streamOf(row.stream), .event_id = row.event, .start = row.start, .end = row.end,
                        .store_id = row.id});
        continue;
      }
      const Index stream = streamOf(row.stream);
      if (stream == kNone) {
        ++skipped_ops_;
        continue;
      }
      const Index op = b_.addOp({.stream = stream, .kind = row.kind, .name = str(row.name), .start = row.start,
                                 .end = row.end, .api_call = call, .bytes = row.bytes, .event_id = row.event,
                                 .store_id = row.id});
      if ((row.kind == trace::OpKind::Collective || row.kind == trace::OpKind::P2P) && row.correlation != kUnknown)
        collective_ops_.push_back({row.correlation, op});
    }
    progress_.add(name_, rows_.ops.size());
    std::sort(collective_ops_.begin(), collective_ops_.end());
  }

  void loadCollectives() {
    for (const trace::CollectiveRow& row : rows_.collectives) {
      // Several collectives of one call (a group) share its correlation id: each describes the
      // next op of that call not yet described.
      auto it = std::lower_bound(collective_ops_.begin(), collective_ops_.end(), std::make_pair(row.correlation_id, Index{0}));
      while (it != collective_ops_.end() && it->first == row.correlation_id && it->second == kNone) ++it;
      if (it == collective_ops_.end() || it->first != row.correlation_id) {
        ++unjoined_collectives_;
        continue;
      }
      b_.addCollective(it->second, {.comm_id = std::bit_cast<std::int64_t>(row.comm_id),
                                    .comm_rank = row.comm_rank.value_or(-1),
                                    .comm_size = row.comm_size.value_or(-1),
                                    .seq = static_cast<std::int64_t>(row.seq),
                                    .coll_type = row.coll_type,
                                    .dtype = row.dtype.value_or(trace::DataType::Unknown),
                                    .red_op = row.red_op.value_or(trace::RedOp::Unknown),
                                    .count = row.count ? static_cast<std::int64_t>(*row.count) : kUnknown,
                                    .bytes = row.bytes ? static_cast<std::int64_t>(*row.bytes) : kUnknown,
                                    .root_or_peer = row.root_or_peer.value_or(-1),
                                    .group_id = row.group_id ? static_cast<std::int64_t>(*row.group_id) : kUnknown});
      it->second = kNone;
    }
  }

  void loadRanges() {
    for (const RangeLite& row : rows_.ranges) {
      const Index thread = row.thread != trace::kNoThread && row.thread < threads_.size() ? threads_[row.thread] : kNone;
      b_.addRange({.rank = rank_, .thread = thread, .domain = str(row.domain), .name = str(row.name), .start = row.start,
                   .end = row.end,
                   .depth = row.depth < 0 ? std::int16_t{-1} : static_cast<std::int16_t>(std::min<std::int64_t>(row.depth, 32767)),
                   .store_id = row.id});
    }
  }

  void loadDiagnostics() {
    for (trace::DiagnosticRow row : rows_.diagnostics) {
      row.source = name_ + ": " + row.source;
      b_.addDiagnostic(std::move(row));
    }
  }

  void reportSkipped() {
    if (skipped_calls_ > 0) b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_calls_without_thread>(name_, skipped_calls_));
    if (skipped_ops_ > 0) b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_ops_without_stream>(name_, skipped_ops_));
    if (unjoined_collectives_ > 0)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_collectives_unjoined>(name_, unjoined_collectives_));
    if (rows_.implausible_rows + unknown_strings_ > 0)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_rows_damaged>(name_, rows_.implausible_rows + unknown_strings_));
  }

  // One diagnostic per table read only up to a tear, whichever connection met it.
  void reportTear() {
    const trace::StoreTear& tear = f_.tear;
    std::vector<trace::TornTable> tables = rows_.torn;
    for (const trace::TornTable& t : tear.tables)
      if (std::none_of(tables.begin(), tables.end(), [&](const trace::TornTable& k) { return k.table == t.table; }))
        tables.push_back(t);
    for (const trace::TornTable& t : tables)
      b_.addDiagnostic(diagnosticRow<trace::diagnostics::load_store_torn>(name_, 1, tearDescription(tear), t.table, t.rows_kept));
  }

  static constexpr StringId kUnset = ~StringId{0};
  const StoreFacts& f_;
  const StoreRows& rows_;
  RunModelBuilder& b_;
  LoadProgress& progress_;
  std::string name_;
  Index rank_ = 0;
  std::vector<StringId> strings_;
  std::vector<Index> streams_, threads_;
  std::vector<std::pair<std::int64_t, Index>> calls_by_correlation_, collective_ops_;
  std::vector<Index> call_at_;  // dense correlation id -> call, when ids are dense
  std::int64_t first_correlation_ = 0;
  std::int64_t skipped_calls_ = 0, skipped_ops_ = 0, unjoined_collectives_ = 0, unknown_strings_ = 0;
};

}  // namespace

void loadStoreRows(const StoreFacts& facts, const StoreRows& rows, RunModelBuilder& builder, LoadProgress& progress) {
  StoreLoader(facts, rows, builder, progress).load();
}

}  // namespace syncopate::analyzer
