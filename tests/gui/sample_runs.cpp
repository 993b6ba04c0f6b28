#include "sample_runs.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncopate/analyzer/run_model_builder.hpp"

namespace syncopate::gui::testing {

using analyzer::Index;
using analyzer::RunModelBuilder;

namespace {

analyzer::RunModel finish(RunModelBuilder&& b) {
  auto m = std::move(b).finish();
  if (!m) {
    std::fprintf(stderr, "hand-built run is invalid: %s\n", m.message().c_str());
    std::abort();
  }
  return std::move(m).value();
}

}  // namespace

analyzer::RunModel twoRankRun(std::int64_t shift) {
  RunModelBuilder b;
  auto t = [shift](std::int64_t micro) { return us(micro) + shift; };
  for (int r = 0; r < 2; ++r) {
    analyzer::RankInfo info;
    info.rank = r;
    info.world_size = 2;
    info.pid = 1000 + r;
    info.host = r == 0 ? "node-a" : "node-b";
    info.source = "synthetic";
    const Index rank = b.addRank(info);
    const Index thread = b.addThread(rank, 100 + r, "main");
    const Index compute = b.addStream(rank, 0, 7, "compute");
    const Index nccl = b.addStream(rank, 0, 8, "nccl");
    b.addRange({.rank = rank, .thread = thread, .name = b.intern("ProfilerStep#1"), .start = t(0), .end = t(100)});
    b.addRange({.rank = rank, .thread = thread, .name = b.intern("forward"), .start = t(0), .end = t(40)});
    b.addRange({.rank = rank, .thread = thread, .name = b.intern("ProfilerStep#2"), .start = t(100), .end = t(200)});
    for (int k = 0; k < 2; ++k) {
      const std::int64_t o = 100 * k;
      const Index launch = b.addApiCall({.thread = thread, .domain = trace::ApiDomain::CudaRuntime,
                                         .name = b.intern("cudaLaunchKernel"), .start = t(o + 1), .end = t(o + 3)});
      b.addOp({.stream = compute, .kind = trace::OpKind::Kernel, .name = b.intern("gemm"), .start = t(o + 5),
               .end = t(o + 45), .api_call = launch});
      const Index call = b.addApiCall({.thread = thread, .domain = trace::ApiDomain::Nccl,
                                       .name = b.intern("ncclAllReduce"), .start = t(o + 46), .end = t(o + 48)});
      const Index op = b.addOp({.stream = nccl, .kind = trace::OpKind::Collective, .name = b.intern("AllReduce"),
                                .start = t(o + (r == 0 ? 50 : 60)), .end = t(o + 90), .api_call = call,
                                .bytes = 4096});
      b.addCollective(op, {.comm_id = 42, .comm_rank = r, .comm_size = 2, .seq = k,
                           .coll_type = trace::CollType::AllReduce, .dtype = trace::DataType::Float32,
                           .red_op = trace::RedOp::Sum, .count = 1024, .bytes = 4096});
    }
    if (r == 0) {
      b.addOp({.stream = compute, .kind = trace::OpKind::Kernel, .name = b.intern("overlap_a"), .start = t(150), .end = t(170)});
      b.addOp({.stream = compute, .kind = trace::OpKind::Kernel, .name = b.intern("overlap_b"), .start = t(160), .end = t(180)});
    } else {
      b.addOp({.stream = compute, .kind = trace::OpKind::Memcpy, .name = b.intern("Memcpy HtoD"), .start = t(150),
               .end = t(160), .bytes = 4096});
      const Index sync = b.addApiCall({.thread = thread, .domain = trace::ApiDomain::CudaRuntime,
                                       .name = b.intern("cudaStreamSynchronize"), .start = t(160), .end = t(175)});
      b.addHostSync({.rank = rank, .api_call = sync, .sync_kind = trace::SyncKind::Stream, .stream = nccl,
                     .start = t(161), .end = t(175)});
    }
  }
  return finish(std::move(b));
}

analyzer::RunModel fourIterationRun() {
  RunModelBuilder b;
  const std::int64_t starts[2][4] = {{0, 100, 250, 400}, {0, 100, 200, 400}};
  for (int r = 0; r < 2; ++r) {
    analyzer::RankInfo info;
    info.rank = r;
    info.world_size = 2;
    info.host = "node-a";
    const Index rank = b.addRank(info);
    const Index thread = b.addThread(rank, 100 + r, "main");
    const Index stream = b.addStream(rank, 0, 7, "compute");
    for (int k = 0; k < 4; ++k) {
      const std::int64_t start = us(starts[r][k]), end = k < 3 ? us(starts[r][k + 1]) : us(starts[r][k] + 10);
      b.addRange({.rank = rank, .thread = thread, .name = b.intern("ProfilerStep#" + std::to_string(k + 1)), .start = start,
                  .end = end});
      b.addOp({.stream = stream, .kind = trace::OpKind::Kernel, .name = b.intern("step"), .start = start,
               .end = start + us(10)});
    }
  }
  return finish(std::move(b));
}

analyzer::RunModel denseRun(std::size_t n, std::int64_t width, std::int64_t period, std::int64_t start) {
  RunModelBuilder b;
  analyzer::RankInfo info;
  info.rank = 0;
  info.host = "node-a";
  const Index rank = b.addRank(info);
  const Index stream = b.addStream(rank, 0, 7, "compute");
  const Index thread = b.addThread(rank, 100, "main");
  const auto name = b.intern("tiny");
  b.reserveOps(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t s = start + static_cast<std::int64_t>(i) * period;
    b.addOp({.stream = stream, .kind = trace::OpKind::Kernel, .name = name, .start = s, .end = s + width});
  }
  // One step marker around everything: one iteration (not one per op, as the pattern would say).
  const std::int64_t end = start + static_cast<std::int64_t>(n - 1) * period + width;
  b.addRange({.rank = rank, .thread = thread, .name = b.intern("ProfilerStep#1"), .start = start, .end = end});
  return finish(std::move(b));
}

std::shared_ptr<const LoadedRun> prepared(analyzer::RunModel model, std::uint32_t run, std::string label) {
  auto r = prepareRun(std::move(model), run, std::move(label));
  if (!r) {
    std::fprintf(stderr, "prepareRun failed: %s\n", r.message().c_str());
    std::abort();
  }
  return std::move(r).value();
}

RunSource memorySource(std::string label, std::int64_t shift) {
  RunSource s;
  s.label = std::move(label);
  s.load = [shift](const ProgressFn&) -> trace::Result<analyzer::RunModel> { return twoRankRun(shift); };
  return s;
}

}  // namespace syncopate::gui::testing
