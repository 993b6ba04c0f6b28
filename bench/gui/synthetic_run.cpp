#include "synthetic_run.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::gui::bench {

namespace {

using namespace syncopate::trace;

constexpr int kForward = 150, kBackward = 300, kBuckets = 25, kOptimizer = 20, kCopies = 5;
constexpr int kOpsPerIteration = kCopies + kForward + kBackward + kBuckets + kOptimizer;  // per rank
constexpr std::int64_t kLaunchNs = 4'000;     // host time per launch call
constexpr std::int64_t kAllReduceNs = 180'000;

// Kernel durations vary by position (and by rank: the last rank is 3% slower).
std::int64_t kernelNs(int index, int rank, int ranks) {
  const std::int64_t base = 12'000 + (index * 7919 % 37) * 1'000;
  return rank == ranks - 1 ? base * 103 / 100 : base;
}

struct Rank {
  Catalog catalog;
  std::unique_ptr<StoreWriter> writer;
  ThreadId thread = kNoThread;
  StreamId compute = kNoStream, nccl = kNoStream;
  CommId comm = kNoComm;
  StringId launch = kNoString, memcpy = kNoString, allreduce = kNoString;
  std::vector<ShapeId> forward, backward, optimizer;
  ShapeId nccl_kernel = kNoShape;
  StringId forward_range = kNoString, backward_range = kNoString, optimizer_range = kNoString;
  std::vector<Record> records;
  std::uint32_t correlation = 0;
  std::int64_t host = 0, gpu = 0, nccl_free = 0;  // where each timeline has got to
};

}  // namespace

bool writeSyntheticRun(const std::filesystem::path& dir, const SyntheticRunOptions& options, SyntheticRunStats& stats,
                       std::string& error) {
  const int ranks = std::max(1, options.ranks);
  const std::int64_t iterations = std::max<std::int64_t>(1, options.ops / (std::int64_t{kOpsPerIteration} * ranks));
  std::vector<std::unique_ptr<Rank>> rs;
  for (int r = 0; r < ranks; ++r) {
    auto rank = std::make_unique<Rank>();
    StoreIdentity id;
    id.host = "node-" + std::to_string(r / std::max(1, options.ranks_per_host));
    id.pid = 20'000 + r;
    id.rank = r;
    id.source = "synthetic";
    auto w = StoreWriter::create(dir, id, rank->catalog);
    if (!w.ok()) {
      error = w.message();
      return false;
    }
    rank->writer = std::move(w).value();
    Catalog& c = rank->catalog;
    rank->thread = c.registerThread({30'000 + r, c.intern("python")});
    rank->compute = c.registerStream({0, 0x10, std::nullopt, std::nullopt, c.intern("compute")});
    rank->nccl = c.registerStream({0, 0x20, std::nullopt, -1, c.intern("nccl")});
    rank->comm = c.registerCommunicator({0xd157'a11e'0000'0001ULL, r, ranks, 0, 0x9000 + static_cast<std::uint64_t>(r), 0, std::nullopt});
    rank->launch = c.intern("cudaLaunchKernel");
    rank->memcpy = c.intern("cudaMemcpyAsync");
    rank->allreduce = c.intern("ncclAllReduce");
    for (int i = 0; i < kForward; ++i)
      rank->forward.push_back(c.internShape({c.intern("fwd_layer" + std::to_string(i / 6) + "_kernel" + std::to_string(i % 6)), {128, 1, 1}, {256, 1, 1}}));
    for (int i = 0; i < kBackward; ++i)
      rank->backward.push_back(c.internShape({c.intern("bwd_layer" + std::to_string(i / 12) + "_kernel" + std::to_string(i % 12)), {128, 1, 1}, {256, 1, 1}}));
    for (int i = 0; i < kOptimizer; ++i)
      rank->optimizer.push_back(c.internShape({c.intern("adam_update_" + std::to_string(i)), {64, 1, 1}, {256, 1, 1}}));
    rank->nccl_kernel = c.internShape({c.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), {8, 1, 1}, {512, 1, 1}});
    rank->forward_range = c.intern("forward");
    rank->backward_range = c.intern("backward");
    rank->optimizer_range = c.intern("optimizer");
    rank->host = rank->gpu = rank->nccl_free = 1'000'000'000;
    rs.push_back(std::move(rank));
  }

  auto call = [](Rank& r, ApiDomain domain, StringId name, std::uint32_t corr) {
    ApiCallRecord a;
    a.domain = domain;
    a.name_id = name;
    a.correlation_id = corr;
    a.start_ns = r.host;
    a.end_ns = r.host + kLaunchNs - 500;
    r.host += kLaunchNs;
    r.records.push_back(a);
  };
  auto kernel = [&](Rank& r, ShapeId shape, std::int64_t duration) {
    const std::uint32_t corr = ++r.correlation;
    call(r, ApiDomain::CudaRuntime, r.launch, corr);
    const std::int64_t start = std::max(r.gpu, r.host + 3'000);
    r.gpu = start + duration;
    r.records.push_back(OpRecord::launch(OpKind::Kernel, r.compute, corr, shape, start, r.gpu));
    ++stats.ops;
    ++stats.api_calls;
  };
  auto range = [&](Rank& r, StringId name, std::uint16_t depth, std::int64_t start, std::int64_t end) {
    NvtxRecord n;
    n.depth = depth;
    n.name_id = name;
    n.start_ns = start;
    n.end_ns = end;
    r.records.push_back(n);
    ++stats.ranges;
  };

  std::uint32_t seq = 0;
  for (std::int64_t it = 0; it < iterations; ++it) {
    // Every rank starts the step together (the previous step ended with a collective).
    std::int64_t step_start = 0;
    for (auto& r : rs) step_start = std::max({step_start, r->host, r->gpu, r->nccl_free});
    std::vector<std::int64_t> fwd_start(rs.size()), bwd_start(rs.size());
    std::vector<std::vector<std::int64_t>> produced(rs.size());  // end of each bucket's last backward kernel
    for (std::size_t k = 0; k < rs.size(); ++k) {
      Rank& r = *rs[k];
      r.host = step_start;
      for (int i = 0; i < kCopies; ++i) {
        const std::uint32_t corr = ++r.correlation;
        call(r, ApiDomain::CudaRuntime, r.memcpy, corr);
        const std::int64_t start = std::max(r.gpu, r.host);
        r.gpu = start + 6'000;
        r.records.push_back(OpRecord::memcpy(MemcpyKind::HostToDevice, r.compute, corr, 8 << 20, start, r.gpu));
        ++stats.ops;
        ++stats.api_calls;
      }
      fwd_start[k] = r.host;
      for (int i = 0; i < kForward; ++i) kernel(r, r.forward[static_cast<std::size_t>(i)], kernelNs(i, static_cast<int>(k), ranks));
      bwd_start[k] = r.host;
      for (int i = 0; i < kBackward; ++i) {
        kernel(r, r.backward[static_cast<std::size_t>(i)], kernelNs(i + kForward, static_cast<int>(k), ranks));
        if ((i + 1) % (kBackward / kBuckets) == 0) produced[k].push_back(r.gpu);
      }
    }
    // All-reduce of each bucket: launched after its producer, starting on each rank when its
    // gradient is ready and the NCCL stream is free; all ranks finish together, once the last
    // one has arrived.
    for (int b = 0; b < kBuckets; ++b) {
      std::int64_t last_arrival = 0;
      std::vector<std::int64_t> arrival(rs.size());
      for (std::size_t k = 0; k < rs.size(); ++k) {
        arrival[k] = std::max(produced[k][static_cast<std::size_t>(b)], rs[k]->nccl_free);
        last_arrival = std::max(last_arrival, arrival[k]);
      }
      for (std::size_t k = 0; k < rs.size(); ++k) {
        Rank& r = *rs[k];
        const std::uint32_t corr = ++r.correlation;
        // The host enqueues all buckets at the end of backward (as a bucketing reducer would).
        call(r, ApiDomain::Nccl, r.allreduce, corr);
        const std::int64_t end = last_arrival + kAllReduceNs;
        r.records.push_back(OpRecord::launch(OpKind::Collective, r.nccl, corr, r.nccl_kernel, arrival[k], end));
        CollectiveRecord c;
        c.coll_type = CollType::AllReduce;
        c.dtype = DataType::Float32;
        c.red_op = RedOp::Sum;
        c.correlation_id = corr;
        c.comm = r.comm;
        c.seq = seq;
        c.count = 4 << 20;
        r.records.push_back(c);
        r.nccl_free = end;
        ++stats.ops;
        ++stats.api_calls;
      }
      ++seq;
    }
    for (std::size_t k = 0; k < rs.size(); ++k) {
      Rank& r = *rs[k];
      const std::int64_t opt_start = r.host;
      r.gpu = std::max(r.gpu, r.nccl_free);  // the optimizer waits for the gradients
      for (int i = 0; i < kOptimizer; ++i) kernel(r, r.optimizer[static_cast<std::size_t>(i)], 8'000);
      const std::int64_t step_end = std::max(r.host, r.gpu);
      range(r, r.catalog.intern("ProfilerStep#" + std::to_string(it + 1)), 0, step_start, step_end);
      range(r, r.forward_range, 1, fwd_start[k], bwd_start[k]);
      range(r, r.backward_range, 1, bwd_start[k], opt_start);
      range(r, r.optimizer_range, 1, opt_start, r.host);
    }
    ++stats.iterations;
    for (auto& r : rs) {
      if (auto s = r->writer->append(r->thread, r->records); !s.ok()) {
        error = s.message();
        return false;
      }
      r->records.clear();
      if (it % 10 == 9) {
        if (auto s = r->writer->flush(); !s.ok()) {
          error = s.message();
          return false;
        }
      }
    }
  }
  for (auto& r : rs) {
    if (auto s = r->writer->close(); !s.ok()) {
      error = s.message();
      return false;
    }
  }
  RunMeta meta;
  meta.command = {"gui_bench", "synthetic"};
  meta.source = "synthetic";
  meta.backend = "synthetic";
  for (int h = 0; h * options.ranks_per_host < ranks; ++h) meta.hosts.push_back("node-" + std::to_string(h));
  if (auto s = writeRunMeta(dir, meta); !s.ok()) {
    error = s.message();
    return false;
  }
  return true;
}

}  // namespace syncopate::gui::bench
