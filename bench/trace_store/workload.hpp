// A synthetic but realistic record stream for the benchmarks: what the collector sees from
// a data-parallel training step. Per 100 records, roughly: 40 kernel launches (host call +
// GPU op = 80 records), 3 memcpys (6), 2 NVTX ranges, 2 event records + 2 stream waits
// (host call + op each = 8), and one collective (call, op, arguments, buffers = 4).
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"

namespace syncopate::trace::bench {

class Workload {
 public:
  // Registers streams, names, shapes and a communicator in `catalog`.
  explicit Workload(Catalog& catalog);

  // Fills `out` with the next `count` records (correlation ids and times keep increasing).
  void next(std::vector<Record>& out, std::size_t count);

 private:
  Catalog& catalog_;
  StreamId compute_{}, comm_stream_{};
  CommId comm_{};
  std::vector<ShapeId> shapes_;
  std::vector<StringId> nvtx_names_;
  StringId launch_name_{}, memcpy_name_{}, record_name_{}, wait_name_{}, allreduce_name_{};
  ShapeId nccl_shape_{};
  EventId event_{};
  std::uint32_t correlation_ = 0;
  std::uint32_t seq_ = 0;
  std::int64_t now_ = 1'000'000'000;
  std::uint64_t step_ = 0;
};

}  // namespace syncopate::trace::bench
