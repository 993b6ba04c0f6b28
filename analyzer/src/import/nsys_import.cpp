// Nsight Systems SQLite export (`nsys export --type sqlite`) -> run stores, one per profiled
// process. docs/analyzer.md ("Importing Nsight Systems exports") is the mapping.
#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "nccl_names.hpp"
#include "nsys_export.hpp"
#include "nsys_sync_records.hpp"
#include "store_output.hpp"
#include "stream_completion.hpp"
#include "syncopate/trace/hash.hpp"
#include "syncopate/analyzer/importers.hpp"

namespace syncopate::analyzer {

namespace {

using import::NsysExport;
using import::pidOf;
using import::tidOf;

// NVTX_EVENTS.eventType values (Nsight Systems' ENUM_NSYS_EVENT_TYPE).
constexpr int kNvtxMark = 34;
constexpr int kNvtxPushPop = 59;
constexpr int kNvtxStartEnd = 60;
constexpr int kNvtxDomainCreate = 75;

trace::ApiDomain domainOf(std::string_view name) {
  if (name.starts_with("nccl")) return trace::ApiDomain::Nccl;
  if (name.starts_with("cuda")) return trace::ApiDomain::CudaRuntime;
  if (name.starts_with("cu")) return trace::ApiDomain::CudaDriver;
  return trace::ApiDomain::CudaRuntime;
}

// CUpti_ActivityMemcpyKind.
trace::MemcpyKind memcpyKind(std::int64_t k) {
  switch (k) {
    case 1: return trace::MemcpyKind::HostToDevice;
    case 2: return trace::MemcpyKind::DeviceToHost;
    case 8: return trace::MemcpyKind::DeviceToDevice;
    case 9: return trace::MemcpyKind::HostToHost;
    case 10: return trace::MemcpyKind::PeerToPeer;
    default: return trace::MemcpyKind::Unknown;
  }
}

std::string_view memcpyName(trace::MemcpyKind k) {
  switch (k) {
    case trace::MemcpyKind::HostToDevice: return "Memcpy HtoD";
    case trace::MemcpyKind::DeviceToHost: return "Memcpy DtoH";
    case trace::MemcpyKind::DeviceToDevice: return "Memcpy DtoD";
    case trace::MemcpyKind::HostToHost: return "Memcpy HtoH";
    case trace::MemcpyKind::PeerToPeer: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

// A number in the file name ("rank3.sqlite", "report_rank-12.sqlite") names the rank.
std::optional<std::int32_t> rankFromName(const std::filesystem::path& file) {
  const std::string stem = file.stem().string();
  const auto at = stem.rfind("rank");
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + 4;
  while (i < stem.size() && (stem[i] == '-' || stem[i] == '_' || stem[i] == '.')) ++i;
  std::int32_t r = 0;
  const auto [ptr, ec] = std::from_chars(stem.data() + i, stem.data() + stem.size(), r);
  if (ec != std::errc{} || ptr == stem.data() + i) return std::nullopt;
  return r;
}

class NsysImporter {
 public:
  NsysImporter(const NsysExport& e, std::int32_t first_rank, std::int32_t world_size, const std::filesystem::path& out_dir,
               ImportReport& report)
      : e_(e), first_rank_(first_rank), world_size_(world_size), out_dir_(out_dir), report_(report) {}

  trace::Status run() {
    if (trace::Status s = loadStrings(); !s) return s;
    loadSessionInfo();
    if (trace::Status s = loadThreadNames(); !s) return s;
    if (trace::Status s = findProcesses(); !s) return s;
    if (trace::Status s = runtime(); !s) return s;
    if (trace::Status s = kernels(); !s) return s;
    if (trace::Status s = memoryOps(); !s) return s;
    if (trace::Status s = eventRecords(); !s) return s;
    if (trace::Status s = syncs(); !s) return s;
    if (trace::Status s = nvtx(); !s) return s;
    for (auto& [pid, p] : processes_) {
      if (trace::Status s = writeCollectives(p); !s) return s;
      noteSyncAssumptions(p);
      for (const auto& [table, n] : p.read) p.store.categories.push_back({table, n, storedAs(table)});
      for (const auto& c : p.out->notStoredCategories()) p.store.categories.push_back(c), p.store.not_stored += c.events;
      if (trace::Status s = p.out->close(p.store); !s) return s;
      report_.stores.push_back(std::move(p.store));
    }
    return {};
  }

  std::int32_t processCount() const { return static_cast<std::int32_t>(processes_.size()); }

 private:
  struct Process {
    std::unique_ptr<import::StoreOutput> out;
    ImportedStore store;
    std::map<std::string, std::int64_t> read;  // table -> rows
    std::vector<std::pair<std::int64_t, import::NcclKernelInfo>> nccl;  // (correlation, kernel)
    import::StreamCompletion completion;  // what CUDA event records stand for (when the export has them)
    std::int64_t kinds_from_calls = 0;    // sync records whose type disagreed with their call
    std::int64_t on_events = 0;           // event syncs and stream waits, which need the event's record
  };

  static std::string storedAs(const std::string& table) {
    if (table.starts_with("CUPTI_ACTIVITY_KIND_RUNTIME")) return "api_calls";
    if (table == "NVTX_EVENTS") return "nvtx_ranges";
    return "ops";
  }

  std::string_view str(std::int64_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }

  trace::Status loadStrings() {
    auto q = e_.query("SELECT id, value FROM StringIds");
    if (!q) return q.status();
    int rc;
    while ((rc = sqlite3_step(q->get())) == SQLITE_ROW) {
      const std::int64_t id = sqlite3_column_int64(q->get(), 0);
      if (id < 0 || id > 100'000'000) return trace::failure(e_.file().string() + " is damaged: string id " + std::to_string(id));
      if (static_cast<std::size_t>(id) >= strings_.size()) strings_.resize(static_cast<std::size_t>(id) + 1);
      strings_[static_cast<std::size_t>(id)] = NsysExport::text(q->get(), 1);
    }
    return rc == SQLITE_DONE ? trace::Status{} : e_.stepError(rc);
  }

  void loadSessionInfo() {
    if (e_.has("TARGET_INFO_SESSION_START_TIME"))
      if (auto q = e_.query("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"); q && sqlite3_step(q->get()) == SQLITE_ROW)
        epoch_ns_ = sqlite3_column_int64(q->get(), 0);
    if (e_.has("TARGET_INFO_SYSTEM_ENV"))
      if (auto q = e_.query("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'");
          q && sqlite3_step(q->get()) == SQLITE_ROW)
        host_ = NsysExport::text(q->get(), 0);
  }

  trace::Status loadThreadNames() {
    if (!e_.has("ThreadNames")) return {};
    auto q = e_.query("SELECT globalTid, nameId FROM ThreadNames");
    if (!q) return q.status();
    while (sqlite3_step(q->get()) == SQLITE_ROW)
      thread_names_[sqlite3_column_int64(q->get(), 0)] = std::string(str(sqlite3_column_int64(q->get(), 1)));
    return {};
  }

  // Processes that ran CUDA work or calls, in pid order: one store each.
  trace::Status findProcesses() {
    std::set<std::int64_t> pids;
    const std::pair<const char*, const char*> sources[] = {{"CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"},
                                                           {"CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"}};
    for (const auto& [table, column] : sources) {
      if (!e_.has(table)) continue;
      if (trace::Status s = e_.requireColumns(table, {column}); !s) return s;
      auto q = e_.query(std::string("SELECT DISTINCT ") + column + " FROM " + table);
      if (!q) return q.status();
      while (sqlite3_step(q->get()) == SQLITE_ROW) pids.insert(pidOf(sqlite3_column_int64(q->get(), 0)));
    }
    if (pids.empty())
      return trace::failure(e_.file().string() + " holds no CUDA activity (profile with 'nsys profile --trace=cuda,nvtx')");
    std::int32_t rank = first_rank_;
    for (std::int64_t pid : pids) {
      Process p;
      p.store.source = e_.file();
      p.store.rank = rank;
      const std::string host = !host_.empty() ? host_ : "unknown host of rank " + std::to_string(rank);
      auto out = import::StoreOutput::create(out_dir_, {host, pid, rank, "import-nsys"});
      if (!out) return out.status();
      p.out = std::move(out).value();
      p.out->setMeta("realtime_offset_ns", std::to_string(epoch_ns_));
      p.out->setMeta("clock", "source trace clock (Nsight Systems: ns since the session start, plus utcEpochNs)");
      p.out->setMeta("import_source_file", e_.file().filename().string());
      if (world_size_ > 0) p.out->setMeta("world_size", std::to_string(world_size_));
      processes_.emplace(pid, std::move(p));
      ++rank;
    }
    return {};
  }

  Process* processOf(std::int64_t global) {
    auto it = processes_.find(pidOf(global));
    return it == processes_.end() ? nullptr : &it->second;
  }

  trace::ThreadId threadOf(Process& p, std::int64_t global_tid) {
    auto it = thread_names_.find(global_tid);
    return p.out->thread(tidOf(global_tid), it == thread_names_.end() ? std::string_view() : std::string_view(it->second));
  }

  trace::Status runtime() {
    const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!e_.has(table)) return {};
    if (trace::Status s = e_.requireColumns(table, {"start", "end", "globalTid", "correlationId", "nameId"}); !s) return s;
    return e_.scan("SELECT start, end, globalTid, correlationId, nameId FROM " + table, [&](sqlite3_stmt* q) -> trace::Status {
      Process* p = processOf(sqlite3_column_int64(q, 2));
      if (!p) return {};
      ++p->read[table];
      trace::ApiCallRow row;
      row.thread_id = threadOf(*p, sqlite3_column_int64(q, 2));
      const std::string_view name = import::stripVersion(str(sqlite3_column_int64(q, 4)));
      row.domain = domainOf(name);
      row.start_ns = sqlite3_column_int64(q, 0);
      row.end_ns = sqlite3_column_int64(q, 1);
      row.correlation_id = NsysExport::optInt(q, 3);
      if (event_records_ && row.correlation_id) p->completion.callStarted(*row.correlation_id, row.start_ns);
      return p->out->apiCall(row, name);
    });
  }

  trace::Status kernels() {
    const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!e_.has(table)) return {};
    if (trace::Status s = e_.requireColumns(table, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                                                    "demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY",
                                                    "blockZ"});
        !s)
      return s;
    return e_.scan("SELECT start, end, deviceId, streamId, correlationId, globalPid, demangledName, shortName, gridX, gridY, "
                "gridZ, blockX, blockY, blockZ FROM " + table + " ORDER BY start",
                [&](sqlite3_stmt* q) -> trace::Status {
                  Process* p = processOf(sqlite3_column_int64(q, 5));
                  if (!p) return {};
                  ++p->read[table];
                  std::string_view name = str(sqlite3_column_int64(q, 6));
                  if (name.empty()) name = str(sqlite3_column_int64(q, 7));
                  const import::NcclKernelInfo nccl = import::parseNcclKernelName(name);
                  trace::OpRow row;
                  row.kind = !nccl.is_nccl ? trace::OpKind::Kernel
                                           : (nccl.is_send_recv ? trace::OpKind::P2P : trace::OpKind::Collective);
                  row.device_id = static_cast<std::int32_t>(sqlite3_column_int64(q, 2));
                  row.stream_id = p->out->stream(*row.device_id, sqlite3_column_int64(q, 3));
                  row.start_ns = sqlite3_column_int64(q, 0);
                  row.end_ns = sqlite3_column_int64(q, 1);
                  row.correlation_id = NsysExport::optInt(q, 4);
                  auto u = [&](int col) { return static_cast<std::uint32_t>(sqlite3_column_int64(q, col)); };
                  row.grid = trace::Dim3{u(8), u(9), u(10)};
                  row.block = trace::Dim3{u(11), u(12), u(13)};
                  if (nccl.is_nccl && !nccl.is_send_recv && row.correlation_id) p->nccl.push_back({*row.correlation_id, nccl});
                  noteIssued(*p, row);
                  return p->out->op(row, name);
                });
  }

  trace::Status memoryOps() {
    for (const bool is_memcpy : {true, false}) {
      const std::string table = is_memcpy ? "CUPTI_ACTIVITY_KIND_MEMCPY" : "CUPTI_ACTIVITY_KIND_MEMSET";
      if (!e_.has(table)) continue;
      if (trace::Status s = e_.requireColumns(table, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes"});
          !s)
        return s;
      if (is_memcpy)
        if (trace::Status s = e_.requireColumns(table, {"copyKind"}); !s) return s;
      const std::string sql = "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes" +
                              std::string(is_memcpy ? ", copyKind" : "") + " FROM " + table;
      trace::Status s = e_.scan(sql, [&](sqlite3_stmt* q) -> trace::Status {
        Process* p = processOf(sqlite3_column_int64(q, 5));
        if (!p) return {};
        ++p->read[table];
        trace::OpRow row;
        row.kind = is_memcpy ? trace::OpKind::Memcpy : trace::OpKind::Memset;
        row.device_id = static_cast<std::int32_t>(sqlite3_column_int64(q, 2));
        row.stream_id = p->out->stream(*row.device_id, sqlite3_column_int64(q, 3));
        row.start_ns = sqlite3_column_int64(q, 0);
        row.end_ns = sqlite3_column_int64(q, 1);
        row.correlation_id = NsysExport::optInt(q, 4);
        row.bytes = sqlite3_column_int64(q, 6);
        std::string_view name = "Memset";
        if (is_memcpy) {
          row.memcpy_kind = memcpyKind(sqlite3_column_int64(q, 7));
          name = memcpyName(*row.memcpy_kind);
        }
        noteIssued(*p, row);
        return p->out->op(row, name);
      });
      if (!s) return s;
    }
    return {};
  }

  // What an event record stands for is when the work issued before it completed.
  void noteIssued(Process& p, const trace::OpRow& row) {
    if (event_records_ && row.correlation_id) p.completion.opIssued(*row.stream_id, *row.correlation_id, row.end_ns);
  }

  // CUDA event records: an EventRecord op on its stream, at the time the GPU reached it (the
  // export's device timestamp where it has one, else by stream order).
  trace::Status eventRecords() {
    const std::string table = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
    std::map<Process*, std::int64_t> untimed;
    trace::Status s = import::readNsysEventRecords(e_, [&](const import::NsysEventRecord& r) -> trace::Status {
      Process* p = processOf(r.global_pid);
      if (!p) return {};
      trace::OpRow row;
      row.kind = trace::OpKind::EventRecord;
      row.device_id = r.device;
      row.stream_id = p->out->stream(r.device, r.stream);
      row.correlation_id = r.correlation;
      row.event_id = p->out->event(static_cast<std::uint64_t>(r.event));
      const std::optional<std::int64_t> at =
          r.device_time ? r.device_time : (r.correlation ? p->completion.recordedAt(*row.stream_id, *r.correlation) : std::nullopt);
      if (!at) {
        ++untimed[p];
        return {};
      }
      ++p->read[table];
      row.start_ns = row.end_ns = *at;
      return p->out->op(row, "cudaEventRecord");
    });
    for (auto& [p, n] : untimed)
      p->out->notStored(table, n, "event records whose call and earlier ops on their stream are not in the export (no time)");
    return s;
  }

  // Synchronisation records: host syncs, and stream waits for an event.
  trace::Status syncs() {
    const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    return import::readNsysSyncs(e_, [&](const import::NsysSync& s) -> trace::Status {
      Process* p = processOf(s.global_pid);
      if (!p) return {};
      ++p->read[table];
      p->kinds_from_calls += s.kind_from_call;
      p->on_events += s.event.has_value() && (s.stream_wait || s.kind == trace::SyncKind::Event);
      trace::OpRow row;
      row.device_id = s.device;
      row.start_ns = s.start;
      row.end_ns = s.end;
      row.correlation_id = s.correlation;
      if (s.event) row.event_id = p->out->event(static_cast<std::uint64_t>(*s.event));
      const bool whole_device = s.kind == trace::SyncKind::Device || s.kind == trace::SyncKind::Context;
      if (s.stream && (s.stream_wait || !whole_device)) row.stream_id = p->out->stream(s.device, *s.stream);
      if (s.stream_wait) {
        row.kind = trace::OpKind::StreamWait;
        return p->out->op(row, "Stream Wait Event");
      }
      row.kind = trace::OpKind::HostSync;
      row.sync_kind = s.kind;
      return p->out->op(row, syncName(s.kind));
    });
  }

  static std::string_view syncName(trace::SyncKind k) {
    switch (k) {
      case trace::SyncKind::Stream: return "Stream Sync";
      case trace::SyncKind::Event: return "Event Sync";
      case trace::SyncKind::Device: return "Device Sync";
      case trace::SyncKind::Context: return "Context Sync";
      case trace::SyncKind::Unknown: break;
    }
    return "Synchronization";
  }

  // What the import assumed about a process's syncs, where the export left something out.
  void noteSyncAssumptions(Process& p) {
    if (p.kinds_from_calls > 0) p.out->diagnostic<trace::diagnostics::import_nsys_sync_kind_from_call>(p.kinds_from_calls);
    if (p.on_events > 0 && !event_records_)
      p.out->diagnostic<trace::diagnostics::import_nsys_no_event_records>(p.on_events);
  }

  trace::Status nvtx() {
    const std::string table = "NVTX_EVENTS";
    if (!e_.has(table)) return {};
    if (trace::Status s = e_.requireColumns(table, {"start", "end", "eventType", "text", "globalTid", "textId", "domainId"}); !s)
      return s;
    std::unordered_map<std::int64_t, std::string> domains;
    std::map<std::int64_t, std::int64_t> skipped;  // eventType -> rows
    trace::Status s = e_.scan("SELECT start, end, eventType, text, globalTid, textId, domainId FROM " + table + " ORDER BY start",
                           [&](sqlite3_stmt* q) -> trace::Status {
                      const int type = sqlite3_column_int(q, 2);
                      std::string text = NsysExport::text(q, 3);
                      if (text.empty() && sqlite3_column_type(q, 5) != SQLITE_NULL) text = std::string(str(sqlite3_column_int64(q, 5)));
                      const std::int64_t domain = sqlite3_column_int64(q, 6);
                      if (type == kNvtxDomainCreate) {
                        domains[domain] = text;
                        return {};
                      }
                      Process* p = processOf(sqlite3_column_int64(q, 4));
                      if (!p || (type != kNvtxMark && type != kNvtxPushPop && type != kNvtxStartEnd)) {
                        ++skipped[type];
                        return {};
                      }
                      ++p->read[table];
                      const std::int64_t start = sqlite3_column_int64(q, 0);
                      const std::int64_t end = type == kNvtxMark ? start : NsysExport::optInt(q, 1).value_or(start);
                      auto d = domains.find(domain);
                      return p->out->range(threadOf(*p, sqlite3_column_int64(q, 4)), d == domains.end() ? "" : d->second, text,
                                           start, end);
                    });
    if (!s) return s;
    for (auto& [pid, p] : processes_)
      for (const auto& [type, n] : skipped)
        p.out->notStored("NVTX_EVENTS type " + std::to_string(type), n,
                         "NVTX event types other than ranges and marks (payloads, categories, other processes' events)");
    return {};
  }

  // NCCL kernels carry no communicator in an Nsight export: they are taken to be on the
  // default communicator of all processes, numbered in launch order.
  trace::Status writeCollectives(Process& p) {
    std::sort(p.nccl.begin(), p.nccl.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::uint64_t seq = 0;
    for (const auto& [correlation, kernel] : p.nccl) {
      trace::CollectiveRow row;
      row.correlation_id = correlation;
      row.comm_id = trace::fnv1a("nsys default communicator");
      row.comm_rank = p.store.rank;
      if (world_size_ > 0) row.comm_size = world_size_;
      row.seq = seq++;
      row.coll_type = kernel.type;
      if (kernel.dtype != trace::DataType::Unknown) row.dtype = kernel.dtype;
      if (kernel.red_op != trace::RedOp::Unknown) row.red_op = kernel.red_op;
      if (trace::Status s = p.out->collective(row); !s) return s;
    }
    if (!p.nccl.empty())
      p.out->diagnostic<trace::diagnostics::import_nsys_one_communicator>(1);
    return {};
  }

  const NsysExport& e_;
  const bool event_records_ = e_.has("CUPTI_ACTIVITY_KIND_CUDA_EVENT");
  std::int32_t first_rank_, world_size_;
  const std::filesystem::path& out_dir_;
  ImportReport& report_;
  std::vector<std::string> strings_;
  std::int64_t epoch_ns_ = 0;
  std::string host_;
  std::unordered_map<std::int64_t, std::string> thread_names_;
  std::map<std::int64_t, Process> processes_;
};

}  // namespace

trace::Result<ImportReport> importNsys(std::span<const std::filesystem::path> files, const std::filesystem::path& out_dir,
                                       const ImportOptions& options) {
  if (files.empty()) return trace::failure("no export file given");
  // Ranks from file names when every file names a distinct one, else from the order given.
  std::vector<std::int32_t> ranks;
  std::set<std::int32_t> distinct;
  for (const auto& f : files)
    if (auto r = rankFromName(f)) ranks.push_back(*r), distinct.insert(*r);
  const bool named = ranks.size() == files.size() && distinct.size() == files.size();
  ImportReport report;
  std::int32_t next_rank = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto e = NsysExport::open(files[i]);
    if (!e) return e.status();
    const std::int32_t first = named ? ranks[i] : next_rank;
    NsysImporter importer(*e, first, static_cast<std::int32_t>(files.size()), out_dir, report);
    if (trace::Status s = importer.run(); !s) return s;
    next_rank = first + importer.processCount();
    if (options.progress) options.progress(files[i].filename().string(), i + 1, files.size());
  }
  return report;
}

}  // namespace syncopate::analyzer
