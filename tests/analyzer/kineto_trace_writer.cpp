#include "kineto_trace_writer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace syncopate::analyzer::testing {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kComputeStream = 7;
constexpr int kNcclStream = 20;
constexpr std::int64_t kCopyBytes = 1 << 20;
constexpr std::int64_t kDeviceAddress = 140000000000000;

class TraceBuilder {
 public:
  explicit TraceBuilder(int rank) : rank_(rank), pid_(1000 + rank), tid_(1000 + rank) {}

  // A host range on the main thread: a cpu_op, or a user_annotation such as ProfilerStep#N.
  void hostRange(const char* category, const std::string& name, double ts, double dur) {
    events_.push_back({{"ph", "X"}, {"cat", category}, {"name", name}, {"pid", pid_}, {"tid", tid_}, {"ts", ts},
                       {"dur", dur}, {"args", {{"External id", ++external_id_}}}});
  }

  // A runtime call and the GPU op it issued, joined by their correlation id and an ac2g flow.
  void launch(const char* call, double call_ts, Json gpu_op) {
    const std::int64_t correlation = runtimeCall(call, call_ts, 5);
    events_.push_back({{"ph", "s"}, {"id", correlation}, {"pid", pid_}, {"tid", tid_}, {"ts", call_ts}, {"cat", "ac2g"},
                       {"name", "ac2g"}});
    events_.push_back({{"ph", "f"}, {"id", correlation}, {"pid", 0}, {"tid", gpu_op["tid"]}, {"ts", gpu_op["ts"]},
                       {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
    gpu_op["args"]["External id"] = external_id_;
    gpu_op["args"]["correlation"] = correlation;
    events_.push_back(std::move(gpu_op));
  }

  // cudaStreamSynchronize of the NCCL stream and CUPTI's synchronization record of it (no flow).
  void synchronize(double ts, double dur) {
    Json sync = gpuOp("cuda_sync", "Stream Sync", kNcclStream, ts, dur);
    sync["args"]["cuda_sync_kind"] = "Stream Sync";
    sync["args"]["correlation"] = runtimeCall("cudaStreamSynchronize", ts, dur);
    events_.push_back(std::move(sync));
  }

  // cudaEventRecord on the compute stream, then cudaStreamWaitEvent of the NCCL stream on that
  // event. Kineto has no GPU record of an event record, only CUPTI's synchronization record of
  // the wait, which names the record call's correlation id.
  void ncclStreamWaitsForComputeStream(double ts) {
    const std::int64_t record = runtimeCall("cudaEventRecord", ts, 2);
    Json wait = gpuOp("cuda_sync", "Stream Wait Event", kNcclStream, ts + 3, 1);
    wait["args"].update({{"cuda_sync_kind", "Stream Wait Event"},
                         {"wait_on_stream", kComputeStream},
                         {"wait_on_cuda_event_record_corr_id", record},
                         {"wait_on_cuda_event_id", 1}});
    wait["args"]["correlation"] = runtimeCall("cudaStreamWaitEvent", ts + 3, 2);
    events_.push_back(std::move(wait));
  }

  // A cuda_runtime event on the main thread; returns its correlation id.
  std::int64_t runtimeCall(const char* call, double ts, double dur) {
    const std::int64_t correlation = ++correlation_;
    events_.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", call}, {"pid", pid_}, {"tid", tid_}, {"ts", ts},
                       {"dur", dur}, {"args", {{"External id", external_id_}, {"correlation", correlation}}}});
    return correlation;
  }

  static Json gpuOp(const char* category, const std::string& name, int stream, double ts, double dur) {
    return {{"ph", "X"}, {"cat", category}, {"name", name}, {"pid", 0}, {"tid", stream}, {"ts", ts}, {"dur", dur},
            {"args", {{"device", 0}, {"context", 1}, {"stream", stream}}}};
  }

  static Json kernel(const std::string& name, int stream, double ts, double dur) {
    Json k = gpuOp("kernel", name, stream, ts, dur);
    k["args"]["grid"] = {128, 1, 1};
    k["args"]["block"] = {256, 1, 1};
    return k;
  }

  void step(int number) {
    const double o = 1000.0 * number + 0.25 * rank_;
    hostRange("user_annotation", "ProfilerStep#" + std::to_string(number), o, 1000);
    // forward
    hostRange("cpu_op", "aten::mm", o + 10, 20);
    launch("cudaLaunchKernel", o + 15, kernel("gemm_fwd", kComputeStream, o + 25, 200));
    if (number == 1) memory(o + 29, kCopyBytes);
    Json copy = gpuOp("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", kComputeStream, o + 225, 20);
    copy["args"]["bytes"] = kCopyBytes;
    launch("cudaMemcpyAsync", o + 30, std::move(copy));
    // backward; rank 1 computes its gradients 30 us slower
    const double slow = 30.0 * rank_;
    hostRange("cpu_op", "aten::mm_backward", o + 40, 20);
    launch("cudaLaunchKernel", o + 45, kernel("gemm_bwd", kComputeStream, o + 245, 300 + slow));
    // gradient synchronisation: each rank's all-reduce waits for its gradients (an event) and
    // ends when the last rank's data is in, at the same time on both
    ncclStreamWaitsForComputeStream(o + 52);
    hostRange("user_annotation", "nccl:all_reduce", o + 60, 20);
    Json all_reduce = kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kNcclStream,
                             o + 550 + slow, 200 - slow);
    all_reduce["args"].update({{"Collective name", "allreduce"},
                               {"In msg nelems", 262144},
                               {"Out msg nelems", 262144},
                               {"Group size", 2},
                               {"dtype", "Float"},
                               {"Process Group Name", "0"},
                               {"Process Group Ranks", "[0, 1]"}});
    launch("cudaLaunchKernel", o + 65, std::move(all_reduce));
    hostRange("cpu_op", "aten::embedding_backward", o + 85, 10);
    launch("cudaLaunchKernel", o + 88, kernel("embedding_bwd", kComputeStream, o + 545 + slow, 100));
    // wait for the all-reduce, then clear a small buffer
    synchronize(o + 100, 651);
    Json memset = gpuOp("gpu_memset", "Memset (Device)", kComputeStream, o + 760, 2);
    memset["args"]["bytes"] = 256;
    launch("cudaMemsetAsync", o + 752, std::move(memset));
    if (number == 3) memory(o + 900, -kCopyBytes);
  }

  // A [memory] instant event of the caching allocator on device 0: bytes > 0 allocates, < 0 frees.
  void memory(double ts, std::int64_t bytes) {
    events_.push_back({{"ph", "i"},
                       {"cat", "cpu_instant_event"},
                       {"s", "t"},
                       {"name", "[memory]"},
                       {"pid", pid_},
                       {"tid", tid_},
                       {"ts", ts},
                       {"args", {{"Device Type", 1}, {"Device Id", 0}, {"Addr", kDeviceAddress}, {"Bytes", bytes}}}});
  }

  Json document() {
    Json metadata = Json::array();
    metadata.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0}, {"args", {{"name", "python3"}}}});
    metadata.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", tid_},
                        {"args", {{"name", "thread " + std::to_string(tid_) + " (python3)"}}}});
    metadata.push_back({{"ph", "X"}, {"cat", "Trace"}, {"name", "PyTorch Profiler (0)"}, {"pid", "Spans"},
                        {"tid", "PyTorch Profiler"}, {"ts", 900.0 + 0.25 * rank_}, {"dur", 5000.0},
                        {"args", {{"Op count", 0}}}});
    for (auto& e : events_) metadata.push_back(std::move(e));
    return {{"schemaVersion", 1},
            {"distributedInfo", {{"backend", "nccl"}, {"rank", rank_}, {"world_size", 2}}},
            {"baseTimeNanoseconds", 1700000000000000000},
            {"traceEvents", std::move(metadata)}};
  }

 private:
  int rank_, pid_, tid_;
  std::int64_t correlation_ = 0, external_id_ = 0;
  std::vector<Json> events_;
};

}  // namespace

std::string kinetoTrace(int rank) {
  TraceBuilder trace(rank);
  for (int step = 1; step <= 3; ++step) trace.step(step);
  return trace.document().dump(1) + "\n";
}

}  // namespace syncopate::analyzer::testing
