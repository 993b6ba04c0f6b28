// Hand-built runs for analyzer tests: a few lines describe ranks, streams, launches, kernels
// and collectives with exact times, so every metric has an answer known in advance.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "syncopate/analyzer/run_model_builder.hpp"

namespace syncopate::analyzer::testing {

constexpr std::int64_t us(std::int64_t v) { return v * 1000; }

class RunSketch {
 public:
  Index rank(int r, std::string host = "host0", std::int64_t realtime_offset_ns = 0) {
    RankInfo info;
    info.rank = r;
    info.host = std::move(host);
    info.realtime_offset_ns = realtime_offset_ns;
    info.source = "synthetic";
    return b_.addRank(info);
  }
  Index stream(Index rank, std::int64_t handle, std::string_view name = "") {
    return b_.addStream(rank, 0, handle, name.empty() ? "stream " + std::to_string(handle) : std::string(name));
  }
  Index thread(Index rank, std::int64_t tid) { return b_.addThread(rank, tid, "main"); }
  Index call(Index thread, std::string_view name, std::int64_t start, std::int64_t end) {
    return b_.addApiCall({.thread = thread, .domain = trace::ApiDomain::CudaRuntime, .name = b_.intern(name),
                          .start = start, .end = end});
  }
  Index op(Index stream, trace::OpKind kind, std::string_view name, std::int64_t start, std::int64_t end,
           Index launch = kNone, std::int64_t bytes = kUnknown, std::int64_t event = kUnknown) {
    return b_.addOp({.stream = stream, .kind = kind, .name = b_.intern(name), .start = start, .end = end,
                     .api_call = launch, .bytes = bytes, .event_id = event});
  }
  Index kernel(Index stream, std::string_view name, std::int64_t start, std::int64_t end, Index launch = kNone) {
    return op(stream, trace::OpKind::Kernel, name, start, end, launch);
  }
  Index memcpy(Index stream, std::int64_t start, std::int64_t end, std::int64_t bytes, Index launch = kNone) {
    return op(stream, trace::OpKind::Memcpy, "Memcpy HtoD", start, end, launch, bytes);
  }
  // An all-reduce of `count` floats on communicator `comm`.
  Index allReduce(Index stream, std::int64_t comm, int comm_rank, int comm_size, std::int64_t seq,
                  std::int64_t start, std::int64_t end, std::int64_t count = 1024, Index launch = kNone) {
    return collective(stream, trace::CollType::AllReduce, comm, comm_rank, comm_size, seq, start, end, count,
                      trace::DataType::Float32, launch);
  }
  Index collective(Index stream, trace::CollType type, std::int64_t comm, int comm_rank, int comm_size,
                   std::int64_t seq, std::int64_t start, std::int64_t end, std::int64_t count,
                   trace::DataType dtype, Index launch = kNone, int peer = -1) {
    const bool p2p = type == trace::CollType::Send || type == trace::CollType::Recv;
    const Index o = op(stream, p2p ? trace::OpKind::P2P : trace::OpKind::Collective, "nccl", start, end, launch,
                       count * trace::dataTypeSize(dtype));
    b_.addCollective(o, {.comm_id = comm, .comm_rank = comm_rank, .comm_size = comm_size, .seq = seq,
                         .coll_type = type, .dtype = dtype, .red_op = trace::RedOp::Sum, .count = count,
                         .bytes = count * trace::dataTypeSize(dtype), .root_or_peer = peer});
    return o;
  }
  Index hostSync(Index rank, Index call, trace::SyncKind kind, Index stream, std::int64_t start, std::int64_t end,
                 std::int64_t event = kUnknown) {
    return b_.addHostSync({.rank = rank, .api_call = call, .sync_kind = kind, .stream = stream, .event_id = event,
                           .start = start, .end = end});
  }
  void range(Index rank, Index thread, std::string_view name, std::int64_t start, std::int64_t end) {
    b_.addRange({.rank = rank, .thread = thread, .name = b_.intern(name), .start = start, .end = end});
  }
  RunModelBuilder& builder() { return b_; }

  RunModel build() {
    auto m = std::move(b_).finish();
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    return std::move(m).value();
  }

 private:
  RunModelBuilder b_;
};

}  // namespace syncopate::analyzer::testing
