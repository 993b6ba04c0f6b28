// Kineto trace -> run store. docs/analyzer.md ("Importing Kineto traces") is the mapping.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "input_file.hpp"
#include "kineto_trace.hpp"
#include "nccl_names.hpp"
#include "store_output.hpp"
#include "stream_completion.hpp"
#include "syncopate/trace/hash.hpp"
#include "syncopate/analyzer/importers.hpp"

namespace syncopate::analyzer {

namespace {

using import::KinetoCat;
using import::KinetoEvent;
using import::kAbsent;

trace::MemcpyKind memcpyKindFromName(std::string_view name) {
  if (name.find("HtoD") != std::string_view::npos) return trace::MemcpyKind::HostToDevice;
  if (name.find("DtoH") != std::string_view::npos) return trace::MemcpyKind::DeviceToHost;
  if (name.find("DtoD") != std::string_view::npos) return trace::MemcpyKind::DeviceToDevice;
  if (name.find("HtoH") != std::string_view::npos) return trace::MemcpyKind::HostToHost;
  if (name.find("PtoP") != std::string_view::npos) return trace::MemcpyKind::PeerToPeer;
  return trace::MemcpyKind::Unknown;
}

// The communicator an NCCL kernel ran on: its process group when the trace names it, else the
// default process group of all ranks.
struct Communicator {
  std::uint64_t id = 0;
  std::int32_t rank = -1, size = -1;
};

// Writes the events of one trace into its store, batch by batch, on the importer's writer
// thread; finish() then writes what needs the whole trace (collectives in launch order, event
// records, open allocations).
class EventWriter {
 public:
  EventWriter(import::StoreOutput& out, ImportedStore& report, std::map<std::int64_t, std::string> thread_names)
      : out_(out), report_(report), thread_names_(std::move(thread_names)) {}

  void begin(const import::KinetoHeader& header) {
    for (const auto& d : header.devices) out_.registerDevice(d.id, d.name, d.sm_count, d.memory_bytes);
  }

  trace::Status consume(const import::KinetoBatch& batch) {
    for (const auto& [id, text] : batch.new_strings) {
      if (id >= views_.size()) views_.resize(id + 1);
      views_[id] = text;
    }
    for (const KinetoEvent& e : batch.events)
      if (trace::Status s = writeEvent(e); !s) return s;
    return {};
  }

  trace::Status finish(const import::KinetoHeader& header) {
    world_size_ = header.world_size.value_or(-1);
    if (trace::Status s = writeCollectives(); !s) return s;
    if (trace::Status s = writeDerivedEventRecords(); !s) return s;
    if (trace::Status s = writeOpenAllocations(); !s) return s;
    checkFlows();
    return {};
  }

  std::optional<std::pair<std::int64_t, std::int64_t>> window() const { return window_; }

 private:
  std::string_view str(StringId id) const { return id < views_.size() ? views_[id] : std::string_view(); }

  trace::ThreadId thread(std::int64_t tid) {
    auto it = thread_names_.find(tid);
    return out_.thread(tid, it == thread_names_.end() ? std::string_view{} : std::string_view(it->second));
  }

  trace::StreamId stream(const KinetoEvent& e) {
    const std::int64_t s = e.stream != kAbsent ? e.stream : e.tid;
    const std::int32_t device = static_cast<std::int32_t>(e.device != kAbsent ? e.device : (e.pid != kAbsent ? e.pid : 0));
    return out_.stream(device, s);
  }

  trace::Status writeEvent(const KinetoEvent& e) {
    if (e.ph == 'X') {
      switch (e.cat) {
        case KinetoCat::Kernel: return writeKernel(e);
        case KinetoCat::GpuMemcpy:
        case KinetoCat::GpuMemset: return writeMemoryOp(e);
        case KinetoCat::CudaRuntime:
        case KinetoCat::CudaDriver: return writeApiCall(e);
        case KinetoCat::CudaSync: return writeSync(e);
        case KinetoCat::CpuOp:
        case KinetoCat::UserAnnotation:
        case KinetoCat::PythonFunction:
          return out_.range(thread(e.tid), str(e.cat_name), str(e.name), e.ts, e.ts + e.dur);
        case KinetoCat::GpuUserAnnotation:
          return out_.range(std::nullopt, str(e.cat_name), str(e.name), e.ts, e.ts + e.dur);
        case KinetoCat::Trace:
          window_ = std::make_pair(e.ts, e.ts + e.dur);
          return {};
        default: return {};
      }
    }
    if (e.ph == 'i' && e.cat == KinetoCat::CpuInstant && str(e.name) == "[memory]") return memoryEvent(e);
    if ((e.ph == 's' || e.ph == 'f') && (e.cat == KinetoCat::Ac2g || e.cat == KinetoCat::AsyncCpuToGpu) && e.id != kAbsent)
      flow_ids_.push_back(e.id);
    return {};
  }

  trace::Status writeKernel(const KinetoEvent& e) {
    const import::NcclKernelInfo nccl = import::parseNcclKernelName(str(e.name));
    trace::OpRow row;
    row.kind = !nccl.is_nccl ? trace::OpKind::Kernel
               : (nccl.is_send_recv || import::collTypeFromPytorchName(str(e.coll_name)) == trace::CollType::Send ||
                  import::collTypeFromPytorchName(str(e.coll_name)) == trace::CollType::Recv)
                   ? trace::OpKind::P2P
                   : trace::OpKind::Collective;
    row.device_id = static_cast<std::int32_t>(e.device != kAbsent ? e.device : 0);
    row.stream_id = stream(e);
    row.start_ns = e.ts;
    row.end_ns = e.ts + e.dur;
    if (e.correlation != kAbsent) row.correlation_id = e.correlation;
    row.grid = trace::Dim3{static_cast<std::uint32_t>(e.grid[0]), static_cast<std::uint32_t>(e.grid[1]),
                           static_cast<std::uint32_t>(e.grid[2])};
    row.block = trace::Dim3{static_cast<std::uint32_t>(e.block[0]), static_cast<std::uint32_t>(e.block[1]),
                            static_cast<std::uint32_t>(e.block[2])};
    if (trace::Status s = out_.op(row, str(e.name)); !s) return s;
    if (e.correlation != kAbsent) completion_.opIssued(*row.stream_id, e.correlation, row.end_ns);
    if (nccl.is_nccl && e.correlation != kAbsent) nccl_ops_.push_back({e, nccl});
    return {};
  }

  trace::Status writeMemoryOp(const KinetoEvent& e) {
    trace::OpRow row;
    row.kind = e.cat == KinetoCat::GpuMemcpy ? trace::OpKind::Memcpy : trace::OpKind::Memset;
    row.device_id = static_cast<std::int32_t>(e.device != kAbsent ? e.device : 0);
    row.stream_id = stream(e);
    row.start_ns = e.ts;
    row.end_ns = e.ts + e.dur;
    if (e.correlation != kAbsent) row.correlation_id = e.correlation;
    if (e.bytes != kAbsent) row.bytes = e.bytes;
    if (row.kind == trace::OpKind::Memcpy) row.memcpy_kind = memcpyKindFromName(str(e.name));
    if (trace::Status s = out_.op(row, str(e.name)); !s) return s;
    if (e.correlation != kAbsent) completion_.opIssued(*row.stream_id, e.correlation, row.end_ns);
    return {};
  }

  trace::Status writeApiCall(const KinetoEvent& e) {
    trace::ApiCallRow row;
    row.thread_id = thread(e.tid);
    row.domain = e.cat == KinetoCat::CudaDriver ? trace::ApiDomain::CudaDriver : trace::ApiDomain::CudaRuntime;
    row.start_ns = e.ts;
    row.end_ns = e.ts + e.dur;
    if (e.correlation != kAbsent) {
      row.correlation_id = e.correlation;
      completion_.callStarted(e.correlation, e.ts);
    }
    return out_.apiCall(row, str(e.name));
  }

  // CUPTI synchronization records: host syncs and stream waits.
  trace::Status writeSync(const KinetoEvent& e) {
    const std::string_view kind = e.sync_kind != 0 ? str(e.sync_kind) : str(e.name);
    trace::OpRow row;
    row.device_id = static_cast<std::int32_t>(e.device != kAbsent ? e.device : 0);
    row.start_ns = e.ts;
    row.end_ns = e.ts + e.dur;
    if (e.correlation != kAbsent) row.correlation_id = e.correlation;
    if (e.wait_event != kAbsent && e.wait_event >= 0) row.event_id = out_.event(static_cast<std::uint64_t>(e.wait_event));
    if (kind == "Stream Wait Event") {
      row.kind = trace::OpKind::StreamWait;
      row.stream_id = stream(e);
    } else {
      row.kind = trace::OpKind::HostSync;
      if (kind == "Stream Sync") {
        row.sync_kind = trace::SyncKind::Stream;
        row.stream_id = stream(e);
      } else if (kind == "Event Sync") {
        row.sync_kind = trace::SyncKind::Event;
        if (e.wait_stream != kAbsent && e.wait_stream >= 0) row.stream_id = out_.stream(*row.device_id, e.wait_stream);
      } else if (kind == "Context Sync") {
        row.sync_kind = trace::SyncKind::Context;
      } else if (kind == "Device Sync") {
        row.sync_kind = trace::SyncKind::Device;
      } else {
        row.sync_kind = trace::SyncKind::Unknown;
      }
    }
    // The record a wait or event sync depended on: named by its call where the trace does so;
    // older traces name only the stream waited on, and a stream wait is then taken to depend on
    // a record issued by the wait call itself (PyTorch records an event and waits for it at once).
    const bool on_stream = e.wait_stream != kAbsent && e.wait_stream >= 0 && row.event_id;
    if (on_stream && e.wait_record_corr != kAbsent && e.wait_record_corr >= 0) {
      records_.insert({e.wait_record_corr, *row.device_id, e.wait_stream, *row.event_id});
    } else if (on_stream && row.kind == trace::OpKind::StreamWait && e.correlation != kAbsent) {
      records_.insert({e.correlation, *row.device_id, e.wait_stream, *row.event_id});
      ++assumed_records_;
    }
    return out_.op(row, kind);
  }

  trace::Status memoryEvent(const KinetoEvent& e) {
    if (e.device_type != 1 || e.addr == kAbsent || e.mem_bytes == kAbsent) {  // c10::DeviceType::CUDA == 1
      ++host_memory_events_;
      return {};
    }
    if (e.mem_bytes > 0) {
      open_allocations_[e.addr] = {e.ts, e.mem_bytes, e.device_id};
      return {};
    }
    auto it = open_allocations_.find(e.addr);
    if (it == open_allocations_.end()) {
      ++frees_without_alloc_;
      return {};
    }
    const Alloc a = it->second;
    open_allocations_.erase(it);
    return out_.allocation(a.device, static_cast<std::uint64_t>(e.addr), static_cast<std::uint64_t>(a.bytes), a.ts, e.ts);
  }

  trace::Status writeOpenAllocations() {
    for (const auto& [addr, a] : open_allocations_)
      if (trace::Status s = out_.allocation(a.device, static_cast<std::uint64_t>(addr), static_cast<std::uint64_t>(a.bytes), a.ts,
                                            std::nullopt);
          !s)
        return s;
    if (host_memory_events_ > 0)
      out_.notStored("i cpu_instant_event", host_memory_events_, "host (CPU) memory events: the store records CUDA memory only");
    if (frees_without_alloc_ > 0)
      out_.diagnostic<trace::diagnostics::import_frees_before_trace>(frees_without_alloc_);
    return {};
  }

  Communicator communicatorOf(const KinetoEvent& e) const {
    Communicator c;
    const std::int32_t rank = report_.rank;
    if (e.pg_name != 0) {
      const std::vector<std::int32_t> ranks = import::parseRankList(str(e.pg_ranks));
      c.id = trace::fnv1a(str(e.pg_ranks), trace::fnv1a(str(e.pg_name)));
      const auto at = std::find(ranks.begin(), ranks.end(), rank);
      c.rank = at != ranks.end() ? static_cast<std::int32_t>(at - ranks.begin()) : -1;
      c.size = e.group_size != kAbsent ? static_cast<std::int32_t>(e.group_size) : static_cast<std::int32_t>(ranks.size());
      if (c.size <= 0) c.size = -1;
      return c;
    }
    c.id = trace::fnv1a("default process group");
    c.rank = rank;
    c.size = world_size_;
    return c;
  }

  // Collective rows: the kernel name and PyTorch's arguments say what; the communicator's
  // sequence numbers follow launch order (correlation ids grow with it).
  trace::Status writeCollectives() {
    std::sort(nccl_ops_.begin(), nccl_ops_.end(),
              [](const auto& a, const auto& b) { return a.first.correlation < b.first.correlation; });
    std::unordered_map<std::uint64_t, std::uint64_t> next_seq;
    std::int64_t without_details = 0, written = 0;
    for (const auto& [event, kernel] : nccl_ops_) {
      const KinetoEvent* e = &event;
      const bool has_args = e->coll_name != 0;
      if (!has_args && kernel.is_send_recv) {
        ++without_details;  // a send/recv kernel without its peer cannot be matched: kept as a p2p op only
        continue;
      }
      const Communicator comm = communicatorOf(*e);
      trace::CollectiveRow row;
      row.correlation_id = e->correlation;
      row.comm_id = comm.id;
      if (comm.rank >= 0) row.comm_rank = comm.rank;
      if (comm.size > 0) row.comm_size = comm.size;
      row.seq = next_seq[comm.id]++;
      row.coll_type = has_args ? import::collTypeFromPytorchName(str(e->coll_name)) : kernel.type;
      if (row.coll_type == trace::CollType::Unknown) row.coll_type = kernel.type;
      const trace::DataType dtype = e->dtype != 0 ? import::dataTypeFromPytorchName(str(e->dtype)) : kernel.dtype;
      if (dtype != trace::DataType::Unknown) row.dtype = dtype;
      if (kernel.red_op != trace::RedOp::Unknown) row.red_op = kernel.red_op;
      // NCCL's count: per rank for all-gather (input), reduce-scatter (output), all-to-all (per peer).
      std::int64_t count = kAbsent;
      switch (row.coll_type) {
        case trace::CollType::ReduceScatter: count = e->out_nelems; break;
        case trace::CollType::AllToAll:
          count = (e->in_nelems != kAbsent && comm.size > 0) ? e->in_nelems / comm.size : kAbsent;
          break;
        default: count = e->in_nelems; break;
      }
      if (count != kAbsent && count >= 0) {
        row.count = static_cast<std::uint64_t>(count);
        if (dtype != trace::DataType::Unknown) row.bytes = row.count.value() * trace::dataTypeSize(dtype);
      }
      if (trace::Status s = out_.collective(row); !s) return s;
      ++written;
    }
    if (without_details > 0)
      out_.diagnostic<trace::diagnostics::import_sendrecv_without_peer>(without_details);
    if (written > 0 && std::none_of(nccl_ops_.begin(), nccl_ops_.end(), [](const auto& p) { return p.first.pg_name != 0; }))
      out_.diagnostic<trace::diagnostics::import_no_process_groups>(1);
    return {};
  }

  // Kineto has no GPU-side record of cudaEventRecord; the sync records say which record call
  // (by correlation id) and stream a wait or event sync depended on. The event completes when
  // the work issued to that stream before the record has (import::StreamCompletion).
  trace::Status writeDerivedEventRecords() {
    std::int64_t untimed = 0;
    for (const Record& r : records_) {
      const trace::StreamId sid = out_.stream(r.device, r.stream);
      const std::optional<std::int64_t> at = completion_.recordedAt(sid, r.correlation);
      if (!at) {
        ++untimed;
        continue;
      }
      trace::OpRow row;
      row.kind = trace::OpKind::EventRecord;
      row.device_id = r.device;
      row.stream_id = sid;
      row.start_ns = row.end_ns = *at;
      row.correlation_id = r.correlation;
      row.event_id = r.event;
      if (trace::Status s = out_.op(row, "cudaEventRecord"); !s) return s;
      ++report_.derived_event_records;
    }
    if (report_.derived_event_records > 0)
      out_.diagnostic<trace::diagnostics::import_event_records_derived>(report_.derived_event_records);
    if (untimed > 0)
      out_.diagnostic<trace::diagnostics::import_event_records_untimed>(untimed);
    if (assumed_records_ > 0)
      out_.diagnostic<trace::diagnostics::import_wait_records_assumed>(assumed_records_);
    return {};
  }

  // Launch flows duplicate the correlation ids that the store keeps; count any that do not.
  void checkFlows() {
    std::int64_t dangling = 0;
    for (std::int64_t id : flow_ids_) dangling += !completion_.hasCall(id);
    if (dangling > 0)
      out_.diagnostic<trace::diagnostics::import_flows_unjoined>(dangling);
  }

  struct Alloc {
    std::int64_t ts, bytes, device;
  };
  struct Record {
    std::int64_t correlation;
    std::int32_t device;
    std::int64_t stream;
    trace::EventId event;
    friend bool operator<(const Record& a, const Record& b) {
      return std::tie(a.correlation, a.device, a.stream) < std::tie(b.correlation, b.device, b.stream);
    }
  };

  import::StoreOutput& out_;
  ImportedStore& report_;
  std::map<std::int64_t, std::string> thread_names_;
  std::vector<std::string_view> views_;  // string id -> text, as batches introduce them
  std::int32_t world_size_ = -1;
  std::vector<std::pair<KinetoEvent, import::NcclKernelInfo>> nccl_ops_;
  import::StreamCompletion completion_;
  std::set<Record> records_;
  std::int64_t assumed_records_ = 0;  // of stream waits that did not name their record call
  std::vector<std::int64_t> flow_ids_;
  std::unordered_map<std::int64_t, Alloc> open_allocations_;
  std::int64_t host_memory_events_ = 0, frees_without_alloc_ = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> window_;
};

// Where each (ph, cat) of the source went, for the report and the store's diagnostics.
std::string storedAs(char ph, std::string_view cat_name) {
  const KinetoCat cat = import::categoryOf(cat_name);
  const bool flow = ph == 's' || ph == 'f';
  switch (cat) {
    case KinetoCat::Kernel:
    case KinetoCat::GpuMemcpy:
    case KinetoCat::GpuMemset:
    case KinetoCat::CudaSync:
      if (ph == 'X') return "ops";
      break;
    case KinetoCat::CudaRuntime:
    case KinetoCat::CudaDriver:
      if (ph == 'X') return "api_calls";
      break;
    case KinetoCat::CpuOp:
    case KinetoCat::UserAnnotation:
    case KinetoCat::GpuUserAnnotation:
    case KinetoCat::PythonFunction:
      if (ph == 'X') return "nvtx_ranges";
      break;
    case KinetoCat::Trace:
      if (ph == 'X') return "meta (trace window)";
      break;
    case KinetoCat::Ac2g:
    case KinetoCat::AsyncCpuToGpu:
      if (flow) return "correlation ids";
      break;
    case KinetoCat::CpuInstant:
      if (ph == 'i') return "allocations";
      break;
    case KinetoCat::FwdBwd:
      if (flow) return "not stored: forward-backward operator links have no table";
      break;
    default:
      break;
  }
  if (ph == 'M') return "meta (thread and process names)";
  if (ph == 'i' && cat_name.empty()) return "not stored: profiler markers (iteration start, record window end)";
  return "not stored: no table for this kind of event";
}

// Parses on this thread and writes the store on another, batch by batch: writing rows costs
// about as much as parsing them, so on two cores the import takes about half as long.
class PipelinedSink : public import::KinetoSink {
 public:
  PipelinedSink(std::int32_t position, const std::filesystem::path& out_dir, ImportedStore& store,
                std::map<std::int64_t, std::string> thread_names, std::int64_t pid)
      : position_(position), out_dir_(out_dir), store_(store), thread_names_(std::move(thread_names)), pid_(pid) {}
  ~PipelinedSink() override { stop(); }

  trace::Status begin(const import::KinetoHeader& header) override {
    store_.rank = header.rank.value_or(position_);
    const std::string host = !header.host_name.empty() ? header.host_name : "unknown host of rank " + std::to_string(store_.rank);
    auto out = import::StoreOutput::create(out_dir_, {host, pid_, store_.rank, "import-kineto"});
    if (!out) return out.status();
    out_ = std::move(out).value();
    if (!header.rank)
      out_->diagnostic<trace::diagnostics::import_rank_from_position>(1, store_.rank);
    writer_ = std::make_unique<EventWriter>(*out_, store_, std::move(thread_names_));
    writer_->begin(header);
    thread_ = std::jthread([this] { drain(); });
    return {};
  }

  trace::Status consume(import::KinetoBatch batch) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.size() < kMaxQueued || !status_; });
    if (!status_) return status_;
    queue_.push_back(std::move(batch));
    cv_.notify_all();
    return {};
  }

  // Waits until every batch is written; the writer's status.
  trace::Status finishWriting() {
    stop();
    return status_;
  }

  import::StoreOutput* output() { return out_.get(); }
  EventWriter* writer() { return writer_.get(); }

 private:
  static constexpr std::size_t kMaxQueued = 8;

  void drain() {
    for (;;) {
      import::KinetoBatch batch;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        batch = std::move(queue_.front());
        queue_.pop_front();
        cv_.notify_all();
      }
      if (trace::Status s = writer_->consume(batch); !s) {
        std::lock_guard lock(mu_);
        status_ = s;
        queue_.clear();
        cv_.notify_all();
        return;
      }
    }
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::int32_t position_;
  const std::filesystem::path& out_dir_;
  ImportedStore& store_;
  std::map<std::int64_t, std::string> thread_names_;
  std::int64_t pid_;
  std::unique_ptr<import::StoreOutput> out_;
  std::unique_ptr<EventWriter> writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<import::KinetoBatch> queue_;
  bool done_ = false;
  trace::Status status_;
  std::jthread thread_;
};

// The process id of the trace's host events (the first cpu_op's or CUDA call's pid), read
// from the text: it is only the store's identity, and the store is created before the events.
std::int64_t hostPid(std::string_view text) {
  for (std::string_view cat : {"\"cat\": \"cpu_op\"", "\"cat\": \"cuda_runtime\""}) {
    const std::size_t at = text.find(cat);
    if (at == std::string_view::npos) continue;
    const std::size_t open = text.rfind('{', at);
    const std::size_t close = text.find('}', at);
    const std::size_t pid = text.find("\"pid\":", open == std::string_view::npos ? at : open);
    if (pid == std::string_view::npos || pid > close) continue;
    std::size_t i = pid + 6;
    while (i < text.size() && text[i] == ' ') ++i;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec == std::errc{} && ptr != text.data() + i) return v;
  }
  return -1;
}

trace::Status importOne(const std::filesystem::path& file, std::size_t position, const std::filesystem::path& out_dir,
                        ImportReport& report, const ImportOptions& options) {
  auto text = import::readTextFile(file, simdjson::SIMDJSON_PADDING);
  if (!text) return text.status();
  ImportedStore store;
  store.source = file;
  StringTable strings;
  PipelinedSink sink(static_cast<std::int32_t>(position), out_dir, store, import::kinetoThreadNames(*text),
                     hostPid(text->text()));
  auto parsed = import::parseKinetoTrace(*text, file.string(), strings, sink);
  const trace::Status written = sink.finishWriting();
  import::StoreOutput* o = sink.output();
  auto fail = [&](const trace::Status& e) -> trace::Status {
    if (o) o->abandon();  // no half-written store is left behind
    return e;
  };
  if (!parsed) return fail(parsed.status());
  if (!written) return fail(written);
  if (!o) return trace::failure(file.string() + " is not a Chrome trace: it has no traceEvents array");
  text = import::TextBuffer{};
  import::KinetoSummary& t = *parsed;
  store.source_events = t.json_events;
  if (options.progress) options.progress(file.filename().string(), 1, 2);
  if (trace::Status s = sink.writer()->finish(t.header); !s) return fail(s);
  if (t.cut) {
    const std::string lost_clock = t.header.base_time_ns ? ""
                                   : "; the trace gives no baseTimeNanoseconds (Kineto writes it after the events), so "
                                     "times stay on the trace's own clock";
    store.warnings.push_back(o->diagnostic<trace::diagnostics::import_trace_truncated>(1, import::describeCut(*t.cut),
                                                                                      t.json_events, lost_clock));
  }
  if (t.header.rank && *t.header.rank != store.rank)
    return fail(trace::failure(file.string() + ": distributedInfo (rank " + std::to_string(*t.header.rank) +
                               ") comes after the events; Kineto writes it before them, so this file was rewritten by another "
                               "tool: move distributedInfo before traceEvents"));

  o->setMeta("realtime_offset_ns", std::to_string(t.header.base_time_ns.value_or(0)));
  o->setMeta("clock", "source trace clock (Kineto: microseconds, plus baseTimeNanoseconds when given)");
  o->setMeta("import_source_file", file.filename().string());
  if (t.header.world_size) o->setMeta("world_size", std::to_string(*t.header.world_size));
  if (auto w = sink.writer()->window()) {
    o->setMeta(kTraceStartMetaKey, std::to_string(w->first));
    o->setMeta(kTraceEndMetaKey, std::to_string(w->second));
  }
  // Every source event is accounted for: in a table, as a link, as metadata, or counted as
  // not stored (the writer noted some categories, or parts of one, as it went).
  for (const auto& [key, count] : t.counts) {
    const std::string what = std::string(1, key.first) + (key.second.empty() ? "" : " " + key.second);
    std::int64_t stored = count;
    for (const auto& c : o->notStoredCategories())
      if (c.what == what) stored -= c.events;
    const std::string where = storedAs(key.first, key.second);
    if (where.starts_with("not stored")) {
      o->notStored(what, stored, where.substr(12));
      continue;
    }
    if (stored > 0) store.categories.push_back({what, stored, where});
  }
  for (const auto& c : o->notStoredCategories()) {
    store.categories.push_back(c);
    store.not_stored += c.events;
  }
  if (trace::Status s = o->close(store); !s) return fail(s);
  if (options.progress) options.progress(file.filename().string(), 2, 2);
  report.stores.push_back(std::move(store));
  return {};
}

}  // namespace

trace::Result<ImportReport> importKineto(std::span<const std::filesystem::path> files, const std::filesystem::path& out_dir,
                                         const ImportOptions& options) {
  if (files.empty()) return trace::failure("no trace file given");
  ImportReport report;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (trace::Status s = importOne(files[i], i, out_dir, report, options); !s) return s;
  return report;
}

}  // namespace syncopate::analyzer
