#include "workload.hpp"

#include <string>

namespace syncopate::trace::bench {

Workload::Workload(Catalog& catalog) : catalog_(catalog) {
  compute_ = catalog.registerStream({0, 0, std::nullopt, std::nullopt, catalog.intern("default")});
  comm_stream_ = catalog.registerStream({0, 0x5a5a, 1u, -1, catalog.intern("nccl")});
  comm_ = catalog.registerCommunicator({0x1234'5678'9abc'def0ULL, 0, 8, 0, 0xc0ffee, 0, std::nullopt});
  for (int i = 0; i < 200; ++i) {
    const StringId name = catalog.intern("void gemm_kernel_variant_" + std::to_string(i) + "<float, 128, 64>(...)");
    shapes_.push_back(catalog.internShape({name, {static_cast<std::uint32_t>(64 + i), 2, 1}, {256, 1, 1}}));
  }
  for (int i = 0; i < 8; ++i) nvtx_names_.push_back(catalog.intern("layer_" + std::to_string(i)));
  launch_name_ = catalog.intern("cudaLaunchKernel");
  memcpy_name_ = catalog.intern("cudaMemcpyAsync");
  record_name_ = catalog.intern("cudaEventRecord");
  wait_name_ = catalog.intern("cudaStreamWaitEvent");
  allreduce_name_ = catalog.intern("ncclAllReduce");
  nccl_shape_ = catalog.internShape({catalog.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), {8, 1, 1}, {512, 1, 1}});
  event_ = catalog.eventId(0xe7e7);
}

void Workload::next(std::vector<Record>& out, std::size_t count) {
  out.clear();
  const auto call = [&](StringId name, std::uint32_t correlation) {
    ApiCallRecord c;
    c.name_id = name;
    c.correlation_id = correlation;
    c.start_ns = now_;
    c.end_ns = now_ + 2'500;
    now_ += 3'000;
    return c;
  };
  while (out.size() < count) {
    const std::uint64_t slot = step_++ % 50;  // 50 slots make the 100-record mix above
    const std::uint32_t corr = ++correlation_;
    if (slot < 40) {
      out.push_back(call(launch_name_, corr));
      out.push_back(OpRecord::launch(OpKind::Kernel, compute_, corr, shapes_[step_ % shapes_.size()], now_, now_ + 20'000));
    } else if (slot < 43) {
      out.push_back(call(memcpy_name_, corr));
      out.push_back(OpRecord::memcpy(MemcpyKind::DeviceToDevice, compute_, corr, 4 << 20, now_, now_ + 8'000));
    } else if (slot == 43) {
      NvtxRecord range;
      range.depth = 1;
      range.name_id = nvtx_names_[step_ % nvtx_names_.size()];
      range.start_ns = now_ - 400'000;
      range.end_ns = now_;
      out.push_back(range);
      range.depth = 2;
      range.start_ns += 1000;
      out.push_back(range);
    } else if (slot < 46) {
      out.push_back(call(record_name_, corr));
      out.push_back(OpRecord::event(OpKind::EventRecord, compute_, corr, event_, now_, now_));
    } else if (slot < 48) {
      out.push_back(call(wait_name_, corr));
      out.push_back(OpRecord::event(OpKind::StreamWait, comm_stream_, corr, event_, now_, now_ + 1'000));
    } else if (slot == 48) {
      out.push_back(call(allreduce_name_, corr));
      out.push_back(OpRecord::launch(OpKind::Collective, comm_stream_, corr, nccl_shape_, now_, now_ + 300'000));
    } else {
      CollectiveRecord c;
      c.coll_type = CollType::AllReduce;
      c.dtype = DataType::Float32;
      c.red_op = RedOp::Sum;
      c.correlation_id = correlation_ - 1;  // the collective of the previous slot
      c.comm = comm_;
      c.seq = seq_++;
      c.count = 25 << 20;
      out.push_back(c);
      OpArgsRecord buffers;
      buffers.count = 2;
      buffers.index[0] = 0;
      buffers.index[1] = 1;
      buffers.correlation_id = c.correlation_id;
      buffers.address[0] = 0x7f00'0000'0000ULL + (std::uint64_t{seq_} << 20);
      buffers.address[1] = buffers.address[0];
      out.push_back(buffers);
    }
  }
  out.resize(count);
}

}  // namespace syncopate::trace::bench
