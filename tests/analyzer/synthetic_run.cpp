#include "synthetic_run.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::synthetic {

namespace {

using namespace syncopate::trace;

constexpr int kBuckets = 40;           // all-reduces per iteration
constexpr int kCopies = 20;            // memcpys per iteration (optimizer / data)
// Each bucket is three ops (event record on the compute stream, stream wait on the NCCL stream,
// the all-reduce), and the copies wait for the last bucket through one more record/wait pair.
constexpr int kKernels = kOpsPerIteration - 3 * kBuckets - kCopies - 2;
constexpr int kKernelNames = 50;
constexpr int kStragglerRank = 13;

std::uint64_t mix(std::uint64_t x) {  // splitmix64: deterministic pseudo-random durations
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Duration of kernel k of the step, the same on every rank before its speed factor.
std::int64_t kernelNs(int k) { return 2000 + static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(k)) % 18000); }
std::int64_t bucketNs(int b) { return 40000 + static_cast<std::int64_t>(mix(1000 + static_cast<std::uint64_t>(b)) % 60000); }
// Backward produces bucket b when kernel kernelOfBucket(b) ends (the second half of the step).
int kernelOfBucket(int b) { return kKernels / 2 + (b + 1) * (kKernels / 2) / kBuckets - 1; }

struct Timeline {
  std::int64_t iteration_ns = 0;
  std::vector<std::int64_t> kernel_start;  // offsets within the iteration, per speed
  std::vector<std::int64_t> bucket_end;    // global: all ranks end together
};

Timeline timelineFor(double speed, double slowest) {
  Timeline t;
  std::int64_t at = 0;
  std::vector<std::int64_t> slow_end(kKernels);
  std::int64_t slow_at = 0;
  for (int k = 0; k < kKernels; ++k) {
    t.kernel_start.push_back(at);
    at += static_cast<std::int64_t>(static_cast<double>(kernelNs(k)) * speed) + 500;
    slow_at += static_cast<std::int64_t>(static_cast<double>(kernelNs(k)) * slowest) + 500;
    slow_end[k] = slow_at;
  }
  std::int64_t previous = 0;
  for (int b = 0; b < kBuckets; ++b) {
    const std::int64_t last_arrival = std::max(slow_end[kernelOfBucket(b)], previous);
    previous = last_arrival + bucketNs(b);
    t.bucket_end.push_back(previous);
  }
  t.iteration_ns = std::max(previous, slow_at) + kCopies * 6000 + 20000;
  return t;
}

Status writeRank(const std::string& dir, int rank, int ranks, int ranks_per_host, std::int64_t iterations,
                 bool waits_on_earlier_event) {
  const auto failed = [rank] { return failure("the synthetic store of rank " + std::to_string(rank) + " could not be written"); };
  const int host = rank / ranks_per_host;
  const std::int64_t host_offset = 1'700'000'000'000'000'000LL + host * 123'456'789LL;
  const std::int64_t clock_error = static_cast<std::int64_t>(mix(77 + static_cast<std::uint64_t>(host)) % 60000) - 30000;
  const double slowest = 1.05;
  const Timeline t = timelineFor(rank == kStragglerRank ? 1.05 : 1.0, slowest);

  Catalog catalog;
  auto created = StoreWriter::create(dir, {"host" + std::to_string(host), 1000 + rank, rank, "synthetic"}, catalog);
  if (!created.ok()) return created.status();
  StoreWriter& w = **created;
  // The store's clock: true time minus the host's offset, off by the host's clock error.
  const std::int64_t to_store = -host_offset + clock_error;
  (void)w.setMeta("realtime_offset_ns", std::to_string(host_offset));
  (void)w.setMeta("world_size", std::to_string(ranks));
  const StreamId compute = catalog.registerStream({0, 7, std::nullopt, std::nullopt, catalog.intern("compute")});
  const StreamId nccl = catalog.registerStream({0, 13, std::nullopt, std::nullopt, catalog.intern("nccl")});
  const ThreadId thread = catalog.registerThread({10000 + rank, catalog.intern("main")});
  std::vector<StringId> kernel_names;
  for (int n = 0; n < kKernelNames; ++n) kernel_names.push_back(catalog.intern("void model::kernel_" + std::to_string(n) + "<float>(Params)"));
  const StringId launch = catalog.intern("cudaLaunchKernel"), all_reduce = catalog.intern("ncclAllReduce");
  const StringId memcpy_call = catalog.intern("cudaMemcpyAsync"), nccl_kernel = catalog.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  const StringId memcpy_name = catalog.intern("Memcpy DtoD");
  const StringId record_call = catalog.intern("cudaEventRecord"), wait_call = catalog.intern("cudaStreamWaitEvent");

  std::int64_t correlation = 0, host_time = 0;
  // The host issues the step's calls back to back, 1.5 us apart, far ahead of the GPU; at the
  // end of the step it synchronises with the compute stream (as loss.item() does).
  auto issue = [&](StringId name, ApiDomain domain) {
    ApiCallRow call;
    call.thread_id = thread;
    call.domain = domain;
    call.name_id = name;
    call.start_ns = host_time + to_store;
    call.end_ns = host_time + 1200 + to_store;
    call.correlation_id = ++correlation;
    host_time += 1500;
    return w.writeApiCall(call);
  };
  auto op = [&](OpKind kind, StreamId stream, StringId name, std::int64_t start, std::int64_t end,
                std::optional<EventId> event = std::nullopt) {
    OpRow row;
    row.kind = kind;
    row.device_id = 0;
    row.stream_id = stream;
    row.name_id = name;
    row.start_ns = start + to_store;
    row.end_ns = end + to_store;
    row.correlation_id = correlation;
    row.event_id = event;
    if (kind == OpKind::Memcpy) row.bytes = 1 << 20, row.memcpy_kind = MemcpyKind::DeviceToDevice;
    return w.writeOp(row);
  };
  const StringId sync_call = catalog.intern("cudaStreamSynchronize");
  const StringId event_sync_call = catalog.intern("cudaEventSynchronize");
  const EventId grads_ready = catalog.eventId(0xe1);
  const double speed = rank == kStragglerRank ? 1.05 : 1.0;
  std::int64_t base = 1'000'000;
  for (std::int64_t it = 0; it < iterations; ++it) {
    host_time = base - 60000;
    NvtxRangeRow step;
    step.thread_id = thread;
    step.name_id = catalog.intern("ProfilerStep#" + std::to_string(it));
    step.start_ns = host_time + to_store;
    if (waits_on_earlier_event && it == 0) {
      const EventId earlier = catalog.eventId(0xe0);
      if (!issue(wait_call, ApiDomain::CudaRuntime).ok() ||
          !op(OpKind::StreamWait, compute, wait_call, host_time - 1500, host_time - 1500, earlier).ok())
        return failed();
      const std::int64_t sync_at = host_time;
      if (!issue(event_sync_call, ApiDomain::CudaRuntime).ok()) return failed();
      OpRow waited;
      waited.kind = OpKind::HostSync;
      waited.device_id = 0;
      waited.name_id = event_sync_call;
      waited.start_ns = sync_at + to_store;
      waited.end_ns = sync_at + 1200 + to_store;
      waited.correlation_id = correlation;
      waited.sync_kind = SyncKind::Event;
      waited.event_id = earlier;
      if (!w.writeOp(waited).ok()) return failed();
    }
    int bucket = 0;
    for (int k = 0; k < kKernels; ++k) {
      const std::int64_t s = base + t.kernel_start[static_cast<std::size_t>(k)];
      const std::int64_t e = s + static_cast<std::int64_t>(static_cast<double>(kernelNs(k)) * speed);
      if (!issue(launch, ApiDomain::CudaRuntime).ok() || !op(OpKind::Kernel, compute, kernel_names[static_cast<std::size_t>(k % kKernelNames)], s, e).ok())
        return failed();
      while (bucket < kBuckets && kernelOfBucket(bucket) == k) {
        const std::int64_t previous_end = bucket > 0 ? base + t.bucket_end[static_cast<std::size_t>(bucket - 1)] : 0;
        const std::int64_t start = std::max(e, previous_end);
        const std::int64_t end = base + t.bucket_end[static_cast<std::size_t>(bucket)];
        // As PyTorch's DDP does: the NCCL stream waits for the gradient on the compute stream.
        const EventId ready = catalog.eventId(0x100 + static_cast<std::uint64_t>(bucket));
        if (!issue(record_call, ApiDomain::CudaRuntime).ok() || !op(OpKind::EventRecord, compute, record_call, e, e, ready).ok())
          return failed();
        const std::int64_t wait_issued = host_time;
        if (!issue(wait_call, ApiDomain::CudaRuntime).ok() ||
            !op(OpKind::StreamWait, nccl, wait_call, wait_issued, wait_issued, ready).ok())
          return failed();
        if (!issue(all_reduce, ApiDomain::Nccl).ok() || !op(OpKind::Collective, nccl, nccl_kernel, start, end).ok()) return failed();
        CollectiveRow c;
        c.correlation_id = correlation;
        c.comm_id = 0x5eed;
        c.comm_rank = rank;
        c.comm_size = ranks;
        c.seq = static_cast<std::uint64_t>(it * kBuckets + bucket);
        c.coll_type = CollType::AllReduce;
        c.dtype = DataType::Float32;
        c.red_op = RedOp::Sum;
        c.count = 4u << 20;
        c.bytes = 16u << 20;
        if (!w.writeCollective(c).ok()) return failed();
        ++bucket;
      }
    }
    // The optimizer's copies wait on the compute stream for the last gradient bucket.
    const std::int64_t grads_end = base + t.bucket_end.back();
    if (!issue(record_call, ApiDomain::CudaRuntime).ok() ||
        !op(OpKind::EventRecord, nccl, record_call, grads_end, grads_end, grads_ready).ok())
      return failed();
    const std::int64_t wait_at = host_time;
    if (!issue(wait_call, ApiDomain::CudaRuntime).ok() ||
        !op(OpKind::StreamWait, compute, wait_call, wait_at, wait_at, grads_ready).ok())
      return failed();
    std::int64_t last_end = 0;
    for (int c = 0; c < kCopies; ++c) {
      const std::int64_t s = grads_end + 2000 + c * 6000;
      last_end = s + 5000;
      if (!issue(memcpy_call, ApiDomain::CudaRuntime).ok() || !op(OpKind::Memcpy, compute, memcpy_name, s, last_end).ok()) return failed();
    }
    // The step ends with the host waiting for the GPU.
    ApiCallRow sync;
    sync.thread_id = thread;
    sync.name_id = sync_call;
    sync.start_ns = host_time + to_store;
    sync.end_ns = last_end + 3000 + to_store;
    sync.correlation_id = ++correlation;
    if (!w.writeApiCall(sync).ok()) return failed();
    OpRow blocked;
    blocked.kind = OpKind::HostSync;
    blocked.device_id = 0;
    blocked.stream_id = compute;
    blocked.name_id = sync_call;
    blocked.start_ns = sync.start_ns;
    blocked.end_ns = sync.end_ns;
    blocked.correlation_id = correlation;
    blocked.sync_kind = SyncKind::Stream;
    if (!w.writeOp(blocked).ok()) return failed();
    step.end_ns = sync.end_ns + 5000;
    step.depth = 0;
    if (!w.writeNvtxRange(step).ok()) return failed();
    base = last_end + 3000 + 5000 + 60000;  // the next step starts when the host does
    if (it % 16 == 15 && !w.flush().ok()) return failed();
  }
  return w.close();
}

}  // namespace

std::int64_t syntheticIterations(const SyntheticRunShape& shape) {
  return std::max<std::int64_t>(1, shape.ops / shape.ranks / kOpsPerIteration);
}

trace::Status writeSyntheticRun(const std::filesystem::path& dir, const SyntheticRunShape& shape,
                                const std::function<void(int written)>& progress) {
  if (shape.ops <= 0 || shape.ranks <= 0 || shape.ranks_per_host <= 0)
    return trace::failure("a synthetic run needs a positive number of ops, ranks and ranks per host");
  for (int r = 0; r < shape.ranks; ++r) {
    if (Status s = writeRank(dir.string(), r, shape.ranks, shape.ranks_per_host, syntheticIterations(shape),
                             shape.waits_on_earlier_event);
        !s)
      return s;
    if (progress) progress(r + 1);
  }
  return {};
}

}  // namespace syncopate::synthetic
