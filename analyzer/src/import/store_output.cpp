#include "store_output.hpp"

namespace syncopate::analyzer::import {

namespace {
constexpr std::int64_t kRowsPerFlush = 250'000;  // bounds the WAL while keeping commits few
}  // namespace

trace::Result<std::unique_ptr<StoreOutput>> StoreOutput::create(const std::filesystem::path& dir, const Identity& id) {
  std::unique_ptr<StoreOutput> out(new StoreOutput());
  if (!out->catalog_.valid()) return trace::failure("out of memory creating a store catalog");
  trace::StoreIdentity identity;
  identity.host = id.host;
  identity.pid = id.pid > 0 ? id.pid : 0;
  identity.rank = id.rank;
  identity.source = id.source;
  auto writer = trace::StoreWriter::create(dir, identity, out->catalog_);
  if (!writer.ok()) {
    if (writer.code() == trace::StatusCode::AlreadyExists)
      return trace::failure(writer.message() + " (import into an empty directory, or remove the old stores first)");
    return trace::failure(writer.message());
  }
  out->writer_ = std::move(writer).value();
  return out;
}

trace::Status StoreOutput::written(const trace::Status& s, std::int64_t& counter) {
  if (!s.ok()) return trace::failure(writer_->path().string() + ": " + s.message());
  ++counter;
  if (++since_flush_ >= kRowsPerFlush) {
    since_flush_ = 0;
    if (trace::Status f = writer_->flush(); !f.ok()) return trace::failure(writer_->path().string() + ": " + f.message());
  }
  return {};
}

void StoreOutput::registerDevice(std::int32_t ordinal, std::string_view name, std::optional<std::int32_t> sm_count,
                                 std::optional<std::int64_t> memory_bytes) {
  trace::CatalogDevice d;
  d.ordinal = ordinal;
  d.name_id = catalog_.intern(name);
  d.sm_count = sm_count;
  d.memory_bytes = memory_bytes;
  catalog_.registerDevice(d);
}

trace::ThreadId StoreOutput::thread(std::int64_t tid, std::string_view name) {
  if (auto it = threads_.find(tid); it != threads_.end()) return it->second;
  trace::CatalogThread info;
  info.tid = tid;
  info.name_id = name.empty() ? trace::kNoString : catalog_.intern(name);
  const trace::ThreadId id = catalog_.registerThread(info);
  threads_.emplace(tid, id);
  return id;
}

trace::StreamId StoreOutput::stream(std::int32_t device, std::int64_t handle) {
  const auto h = static_cast<std::uint64_t>(handle);
  if (trace::StreamId id = catalog_.findStream(device, h); id != trace::kNoStream) return id;
  trace::CatalogStream info;
  info.device = device;
  info.handle = h;
  info.name_id = catalog_.intern("stream " + std::to_string(handle));
  return catalog_.registerStream(info);
}

trace::EventId StoreOutput::event(std::uint64_t handle) { return catalog_.eventId(handle); }

trace::Status StoreOutput::op(trace::OpRow row, std::string_view name) {
  row.name_id = catalog_.intern(name.empty() ? std::string_view("(unnamed)") : name);
  return written(writer_->writeOp(row), ops_);
}

trace::Status StoreOutput::apiCall(trace::ApiCallRow row, std::string_view name) {
  row.name_id = catalog_.intern(name.empty() ? std::string_view("(unnamed)") : name);
  return written(writer_->writeApiCall(row), api_calls_);
}

trace::Status StoreOutput::collective(const trace::CollectiveRow& row) { return written(writer_->writeCollective(row), collectives_); }

trace::Status StoreOutput::range(std::optional<trace::ThreadId> thread, std::string_view domain, std::string_view name,
                                 std::int64_t start, std::int64_t end, std::optional<std::uint32_t> depth) {
  trace::NvtxRangeRow row;
  row.thread_id = thread;
  if (!domain.empty()) row.domain_id = catalog_.intern(domain);
  row.name_id = catalog_.intern(name.empty() ? std::string_view("(unnamed)") : name);
  row.start_ns = start;
  row.end_ns = end;
  row.depth = depth;
  return written(writer_->writeNvtxRange(row), ranges_);
}

trace::Status StoreOutput::allocation(std::int64_t device, std::uint64_t address, std::uint64_t bytes, std::int64_t alloc_ns,
                                      std::optional<std::int64_t> free_ns) {
  trace::AllocationRow row;
  if (device >= 0) row.device_id = static_cast<std::int32_t>(device);
  row.address = address;
  row.bytes = bytes;
  row.kind = trace::AllocKind::Device;
  row.alloc_ns = alloc_ns;
  row.free_ns = free_ns;
  return written(writer_->writeAllocation(row), allocations_);
}

void StoreOutput::setMeta(std::string_view key, std::string_view value) {
  if (trace::Status s = writer_->setMeta(key, value); !s.ok() && first_failure_.ok()) first_failure_ = s;
}

void StoreOutput::write(const trace::DiagnosticRow& d) {
  if (d.count <= 0) return;
  if (trace::Status s = writer_->countDiagnostic(d.severity, d.source, d.message, d.count); !s.ok() && first_failure_.ok())
    first_failure_ = s;
}

void StoreOutput::notStored(std::string what, std::int64_t count, std::string why) {
  diagnostic<trace::diagnostics::import_events_not_stored>(count, what, why);
  not_stored_.push_back({std::move(what), count, "not stored: " + std::move(why)});
}

trace::Status StoreOutput::close(ImportedStore& report) {
  if (!first_failure_.ok()) return trace::failure(writer_->path().string() + ": " + first_failure_.message());
  report.file = writer_->path();
  if (trace::Status s = writer_->close(); !s.ok()) return trace::failure(writer_->path().string() + ": " + s.message());
  report.ops = ops_;
  report.api_calls = api_calls_;
  report.nvtx_ranges = ranges_;
  report.collectives = collectives_;
  report.allocations = allocations_;
  return {};
}

void StoreOutput::abandon() {
  const std::filesystem::path file = writer_->path();
  (void)writer_->close();
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(file.string() + suffix, ec);
}

}  // namespace syncopate::analyzer::import
