#include "syncopate/analyzer/run_loader.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/run_model_builder.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::analyzer {

namespace {

std::optional<std::int64_t> metaInt(const trace::StoreReader& r, std::string_view key) {
  const auto v = r.metaValue(key);
  if (!v) return std::nullopt;
  std::int64_t out = 0;
  const auto [end, err] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (err != std::errc{} || end != v->data() + v->size()) return std::nullopt;
  return out;
}

// Reports progress at most every 1% of the rows.
class Progress {
 public:
  Progress(const ProgressFn& fn, std::size_t total) : fn_(fn), total_(std::max<std::size_t>(total, 1)) {}
  void add(std::string_view what, std::size_t rows = 1) {
    done_ += rows;
    if (fn_ && (done_ >= next_ || done_ == total_)) {
      fn_(what, std::min(done_, total_), total_);
      next_ = done_ + total_ / 100 + 1;
    }
  }

 private:
  const ProgressFn& fn_;
  std::size_t total_, done_ = 0, next_ = 0;
};

// One store's rows into the builder. Store-local ids (strings, streams, threads, correlation)
// are translated here; rows that refer to ids the store does not have are counted, not kept.
class StoreLoader {
 public:
  StoreLoader(const trace::StoreReader& reader, RunModelBuilder& builder, Progress& progress)
      : r_(reader), b_(builder), progress_(progress), name_(reader.path().filename().string()) {}

  Status load() {
    addRank();
    if (Status s = loadStreamsAndThreads(); !s) return s;
    if (Status s = loadApiCalls(); !s) return s;
    if (Status s = loadOps(); !s) return s;
    if (Status s = loadCollectives(); !s) return s;
    if (Status s = loadRanges(); !s) return s;
    if (Status s = loadDiagnostics(); !s) return s;
    reportSkipped();
    return {};
  }

 private:
  Error fail(const trace::Status& s) const { return Error{s.message()}; }

  StringId str(trace::StringId id) {
    if (id == trace::kNoString) return 0;
    if (id >= strings_.size()) strings_.resize(std::max<std::size_t>(id + 1, strings_.size() * 2), kUnset);
    if (strings_[id] == kUnset) strings_[id] = b_.intern(r_.string(id));
    return strings_[id];
  }

  void addRank() {
    RankInfo info;
    info.rank = r_.rank().value_or(-1);
    info.pid = r_.pid().value_or(-1);
    info.host = std::string(r_.metaValue("host").value_or(""));
    info.source = std::string(r_.metaValue("source").value_or("record"));
    info.store_path = r_.path().string();
    info.realtime_offset_ns = r_.realtimeOffsetNs();
    info.world_size = static_cast<std::int32_t>(metaInt(r_, "world_size").value_or(-1));
    const auto start = metaInt(r_, kTraceStartMetaKey) ? metaInt(r_, kTraceStartMetaKey) : metaInt(r_, "start_ns");
    const auto end = metaInt(r_, kTraceEndMetaKey) ? metaInt(r_, kTraceEndMetaKey) : metaInt(r_, "end_ns");
    if (start && end && *end >= *start) info.recording_start_ns = *start, info.recording_end_ns = *end;
    rank_ = b_.addRank(std::move(info));
  }

  Status loadStreamsAndThreads() {
    trace::Status s = r_.forEachStream([&](const trace::StreamRow& row) {
      const std::int64_t handle = static_cast<std::int64_t>(row.handle.value_or(row.id));
      const std::string label = row.name.empty() ? "stream " + std::to_string(handle) : row.name;
      if (row.id >= streams_.size()) streams_.resize(row.id + 1, kNone);
      streams_[row.id] = b_.addStream(rank_, row.device_id, handle, label, row.priority.value_or(0), row.id);
    });
    if (!s.ok()) return fail(s);
    s = r_.forEachThread([&](const trace::ThreadRow& row) {
      if (row.id >= threads_.size()) threads_.resize(row.id + 1, kNone);
      threads_[row.id] = b_.addThread(rank_, row.tid, row.name, row.id);
    });
    return s.ok() ? Status{} : fail(s);
  }

  Status loadApiCalls() {
    trace::Status s = r_.forEachApiCall([&](const trace::ApiCallRow& row) {
      progress_.add(name_);
      const Index thread = row.thread_id < threads_.size() ? threads_[row.thread_id] : kNone;
      if (thread == kNone) return void(++skipped_calls_);
      const Index call = b_.addApiCall({.thread = thread, .domain = row.domain, .name = str(row.name_id),
                                        .start = row.start_ns, .end = row.end_ns, .store_id = row.id});
      if (row.correlation_id) calls_by_correlation_.push_back({*row.correlation_id, call});
    });
    if (!s.ok()) return fail(s);
    std::sort(calls_by_correlation_.begin(), calls_by_correlation_.end());
    return {};
  }

  Index callOf(const std::optional<std::int64_t>& correlation) const {
    if (!correlation) return kNone;
    auto it = std::lower_bound(calls_by_correlation_.begin(), calls_by_correlation_.end(),
                               std::make_pair(*correlation, Index{0}));
    return it != calls_by_correlation_.end() && it->first == *correlation ? it->second : kNone;
  }

  Index streamOf(const std::optional<trace::StreamId>& id) const {
    if (!id || *id >= streams_.size()) return kNone;
    return streams_[*id];
  }

  Status loadOps() {
    trace::Status s = r_.forEachOp([&](const trace::OpRow& row) {
      progress_.add(name_);
      const Index call = callOf(row.correlation_id);
      const std::int64_t event = row.event_id ? static_cast<std::int64_t>(*row.event_id) : kUnknown;
      if (row.kind == trace::OpKind::HostSync) {
        b_.addHostSync({.rank = rank_, .api_call = call, .sync_kind = row.sync_kind.value_or(trace::SyncKind::Unknown),
                        .stream = streamOf(row.stream_id), .event_id = event, .start = row.start_ns,
                        .end = row.end_ns, .store_id = row.id});
        return;
      }
      const Index stream = streamOf(row.stream_id);
      if (stream == kNone) return void(++skipped_ops_);
      const Index op = b_.addOp({.stream = stream, .kind = row.kind, .name = str(row.name_id), .start = row.start_ns,
                                 .end = row.end_ns, .api_call = call,
                                 .bytes = row.bytes ? *row.bytes : kUnknown, .event_id = event, .store_id = row.id});
      if ((row.kind == trace::OpKind::Collective || row.kind == trace::OpKind::P2P) && row.correlation_id)
        collective_ops_.push_back({*row.correlation_id, op});
    });
    if (!s.ok()) return fail(s);
    std::sort(collective_ops_.begin(), collective_ops_.end());
    return {};
  }

  Status loadCollectives() {
    trace::Status s = r_.forEachCollective([&](const trace::CollectiveRow& row) {
      // Several collectives of one call (a group) share its correlation id: each describes the
      // next op of that call not yet described.
      auto it = std::lower_bound(collective_ops_.begin(), collective_ops_.end(), std::make_pair(row.correlation_id, Index{0}));
      while (it != collective_ops_.end() && it->first == row.correlation_id && it->second == kNone) ++it;
      if (it == collective_ops_.end() || it->first != row.correlation_id) return void(++unjoined_collectives_);
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
    });
    return s.ok() ? Status{} : fail(s);
  }

  Status loadRanges() {
    trace::Status s = r_.forEachNvtxRange([&](const trace::NvtxRangeRow& row) {
      const Index thread = row.thread_id && *row.thread_id < threads_.size() ? threads_[*row.thread_id] : kNone;
      b_.addRange({.rank = rank_, .thread = thread, .domain = row.domain_id ? str(*row.domain_id) : 0,
                   .name = str(row.name_id), .start = row.start_ns, .end = row.end_ns,
                   .depth = row.depth ? static_cast<std::int16_t>(std::min<std::uint32_t>(*row.depth, 32767)) : std::int16_t{-1},
                   .store_id = row.id});
    });
    return s.ok() ? Status{} : fail(s);
  }

  Status loadDiagnostics() {
    trace::Status s = r_.forEachDiagnostic([&](const trace::DiagnosticRow& row) {
      b_.addDiagnostic(row.severity, name_ + ": " + row.source, row.message, row.count);
    });
    return s.ok() ? Status{} : fail(s);
  }

  void reportSkipped() {
    if (skipped_calls_ > 0)
      b_.addDiagnostic(trace::Severity::Warning, name_, "API calls naming a thread the store does not have were skipped", skipped_calls_);
    if (skipped_ops_ > 0)
      b_.addDiagnostic(trace::Severity::Warning, name_, "GPU ops without a known stream were skipped", skipped_ops_);
    if (unjoined_collectives_ > 0)
      b_.addDiagnostic(trace::Severity::Warning, name_,
                       "collective rows whose correlation id matches no collective op were skipped", unjoined_collectives_);
  }

  static constexpr StringId kUnset = ~StringId{0};
  const trace::StoreReader& r_;
  RunModelBuilder& b_;
  Progress& progress_;
  std::string name_;
  Index rank_ = 0;
  std::vector<StringId> strings_;
  std::vector<Index> streams_, threads_;
  std::vector<std::pair<std::int64_t, Index>> calls_by_correlation_, collective_ops_;
  std::int64_t skipped_calls_ = 0, skipped_ops_ = 0, unjoined_collectives_ = 0;
};

}  // namespace

Expected<RunModel> loadRun(const std::filesystem::path& dir, const LoadOptions& options) {
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return Error{stores.message()};
  if (stores->empty())
    return Error{dir.string() + " holds no run store (rank-<R>.sqlite or pid-<P>.sqlite): record a run with "
                                "'syncopate record -o DIR -- COMMAND' or import one with 'syncopate import'"};
  std::vector<trace::StoreReader> readers;
  std::size_t total_rows = 0;
  for (const trace::StoreFile& f : *stores) {
    auto reader = trace::StoreReader::open(f.path);
    if (!reader.ok()) return Error{reader.message()};
    for (trace::Table t : {trace::Table::Ops, trace::Table::ApiCalls}) {
      auto n = reader->rowCount(t);
      if (!n.ok()) return Error{n.message()};
      total_rows += static_cast<std::size_t>(*n);
    }
    readers.push_back(std::move(reader).value());
  }
  RunModelBuilder builder;
  builder.reserveOps(total_rows / 2);
  builder.reserveApiCalls(total_rows / 2);
  Progress progress(options.progress, total_rows);
  for (const trace::StoreReader& reader : readers) {
    if (Status s = StoreLoader(reader, builder, progress).load(); !s) return s.error();
  }
  auto model = std::move(builder).finish();
  if (!model) return model.error();
  alignClocks(*model, options.clock);
  return model;
}

}  // namespace syncopate::analyzer
