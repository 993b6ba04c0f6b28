#include "dp_trainer/stream_simulation.hpp"
#include "dp_trainer/machine_profile.hpp"
#include "dp_trainer/options.hpp"
#include "dp_trainer/step_prediction.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

namespace dp_trainer {
namespace {

// The example profile of docs/simgpu.md ("The profile"), plus a kernel whose cost is memory-bound.
const char* kProfile = R"({
  "name": "test", "devices_per_process": 1, "ranks_per_host": 2,
  "device": {"name": "d", "flops": 1.0e12, "memory_bandwidth": 1.0e11, "launch_latency_ns": 3000, "min_kernel_ns": 2000},
  "copy": {"h2d_bandwidth": 1.0e10, "d2h_bandwidth": 2.0e10, "d2d_bandwidth": 1.0e11, "latency_ns": 1000},
  "links": {"intra_process": {"latency_ns": 100, "bandwidth": 1.0e11},
            "intra_host": {"latency_ns": 1000, "bandwidth": 1.0e10},
            "inter_host": {"latency_ns": 5000, "bandwidth": 1.0e9}},
  "collectives": {"algorithm": "ring", "bytes_scale": 10.0},
  "interference": {"compute_slowdown": 0.10, "communication_slowdown": 0.15},
  "default_kernel_ns": 5000,
  "kernels": [
    {"name": "gemm", "flops": {"coef": 2.0, "params": [0, 1]}, "bytes": {"coef": 1.0, "params": [1]}, "efficiency": 0.5},
    {"name": "copyish", "bytes": {"coef": 4.0, "params": [0]}, "fixed_ns": 100}
  ]})";

TEST(MachineProfile, KernelDurationFormula) {
  const MachineProfile p = parseMachineProfile(kProfile, "test");
  const std::vector<std::int64_t> big{1000, 1000000};
  // flops 2e9 / (1e12 * 0.5) = 4 ms; bytes 1e6 / 1e11 = 10 us: compute-bound.
  EXPECT_DOUBLE_EQ(p.kernelNs("gemm", big), 4e6);
  // 4 * 1e6 bytes / 1e11 = 40 us, plus the fixed 100 ns.
  EXPECT_DOUBLE_EQ(p.kernelNs("copyish", std::vector<std::int64_t>{1000000}), 40100.0);
  EXPECT_DOUBLE_EQ(p.kernelNs("gemm", std::vector<std::int64_t>{1, 1}), 2000.0);  // at least min_kernel_ns
  EXPECT_DOUBLE_EQ(p.kernelNs("unknown", big), 5000.0);                          // default_kernel_ns
}

TEST(MachineProfile, RingAllReduceAndLinkChoice) {
  const MachineProfile p = parseMachineProfile(kProfile, "test");
  // Two ranks fit one host: 2 * 1 * 1000 ns + 2 * 1/2 * (1e6 * 10) / 1e10 s.
  EXPECT_DOUBLE_EQ(p.allReduceNs(1e6, 2), 2000.0 + 1e6);
  EXPECT_STREQ(p.linkNameFor(2), "intra_host");
  // Four ranks span hosts: 6 * 5000 ns + 1.5 * 1e7 / 1e9 s.
  EXPECT_DOUBLE_EQ(p.allReduceNs(1e6, 4), 30000.0 + 1.5e7);
  EXPECT_STREQ(p.linkNameFor(4), "inter_host");
  EXPECT_DOUBLE_EQ(p.allReduceNs(1e6, 1), 100.0);
  EXPECT_DOUBLE_EQ(p.h2dNs(1e4), 2000.0);
  EXPECT_DOUBLE_EQ(p.memsetNs(1e3), 2000.0);  // at least min_kernel_ns
  EXPECT_DOUBLE_EQ(p.memsetNs(1e6), 10000.0);
}

void expectProfileError(const std::string& text, const std::string& mentions) {
  try {
    parseMachineProfile(text, "p.json");
    FAIL() << "accepted: " << text;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p.json"), std::string::npos) << e.what();
  }
}

TEST(MachineProfile, ErrorsSayWhatIsWrong) {
  expectProfileError("{", "not valid JSON");
  std::string no_flops = kProfile;
  no_flops.replace(no_flops.find("\"flops\": 1.0e12"), 15, "\"flop\": 1.0e12");
  expectProfileError(no_flops, "device.flops");
  std::string tree = kProfile;
  tree.replace(tree.find("\"ring\""), 6, "\"tree\"");
  expectProfileError(tree, "ring");
  std::string bad_params = kProfile;
  bad_params.replace(bad_params.find("[0, 1]"), 6, "[\"a\"]");
  expectProfileError(bad_params, "kernels[0].flops.params");
  EXPECT_THROW(loadMachineProfile("/nonexistent/profile.json"), std::runtime_error);
}

using simulation::Op;
using simulation::Work;

TEST(StreamSimulation, InterferenceSlowsBothSides) {
  // Both start at 0. Compute runs at 1/1.1 while communication runs: it ends at 11. By then
  // communication did 11/1.15 of its 10; the rest runs at full speed.
  const double end = simulation::runStreams({{{Work::Compute, 10.0}}, {{Work::Communication, 10.0}}}, 0.10, 0.15);
  EXPECT_NEAR(end, 11.0 + (10.0 - 11.0 / 1.15), 1e-9);
}

TEST(StreamSimulation, WaitsAndSerialOrder) {
  // Stream 1 waits for stream 0's second op; no interference between copies and compute.
  const std::vector<std::vector<Op>> streams = {
      {{Work::Compute, 3.0}, {Work::Compute, 4.0}, {Work::Copy, 5.0}},
      {{Work::Copy, 2.0, 0, 1}},
  };
  EXPECT_DOUBLE_EQ(simulation::runStreams(streams, 0.5, 0.5), 12.0);
  EXPECT_THROW(simulation::runStreams({{{Work::Compute, 1.0, 0, 0}}}, 0, 0), std::logic_error);
}

Options smallConfig(int layers) {
  Options o;
  o.config = LlmConfig{"t", layers, 1024, 1024, 1};
  o.shape = ModelShape{layers, 16, 4};
  return o;
}

TEST(StepPrediction, NaiveIsTheSumOfEveryOp) {
  MachineProfile p = parseMachineProfile(kProfile, "test");
  p.kernels.push_back({"layer_forward", true, {2.0, {6, 7, 8}}, false, {}, 1.0, 0.0});
  p.kernels.push_back({"layer_backward_params", true, {2.0, {6, 7, 8}}, false, {}, 1.0, 0.0});
  p.kernels.push_back({"layer_backward_input", true, {2.0, {6, 7, 8}}, false, {}, 1.0, 0.0});
  const Options o = smallConfig(3);
  const StepPrediction s = predictStep(p, o, 4);
  const double forward = 2.0 * 1024 * 1024 * 12 * 1024 / 1e12 * 1e9;
  EXPECT_DOUBLE_EQ(s.forward_ns, forward);
  EXPECT_DOUBLE_EQ(s.backward_params_ns, forward);
  EXPECT_DOUBLE_EQ(s.sgd_ns, 5000.0);  // no entry: default_kernel_ns
  const double grad_bytes = static_cast<double>(o.shape.gradientBytesPerLayer());
  EXPECT_DOUBLE_EQ(s.allreduce_layer_ns, p.allReduceNs(grad_bytes, 4));
  const double batch_bytes = 4.0 * 16 * 4;
  const double copies = 2 * p.h2dNs(batch_bytes) + p.d2hNs(4);
  const double memset = std::max(2000.0, static_cast<double>(o.shape.paramCount() * 4) / 1e11 * 1e9);
  const double compute = 3 * forward + 5000.0 /*mse_loss*/ + copies + memset + 3 * forward + 2 * forward + 3 * 5000.0;
  EXPECT_NEAR(s.compute_ns, compute, 1e-6);
  EXPECT_NEAR(s.naive_ns, compute + 3 * s.allreduce_layer_ns, 1e-6);
}

TEST(StepPrediction, OverlapHidesCommunicationUpToTheProfileInterference) {
  MachineProfile p = parseMachineProfile(kProfile, "test");
  p.compute_slowdown = 0.0;
  p.communication_slowdown = 0.0;
  Options o = smallConfig(4);  // every kernel takes default_kernel_ns (5 us)
  o.bucket_mb = 1.0;              // one layer (24 MiB of modelled gradient) per bucket
  const StepPrediction s = predictStep(p, o, 4);
  ASSERT_EQ(s.buckets, 4);
  // Communication-bound: the step is everything up to the first weight gradient, then all
  // four all-reduces back to back, then the update.
  const double head = 2 * p.h2dNs(4.0 * 16 * 4) + 4 * 5000.0 + 5000.0 + p.d2hNs(4) +
                      std::max(2000.0, static_cast<double>(o.shape.paramCount() * 4) / 1e11 * 1e9) + 5000.0;
  ASSERT_GT(s.allreduce_layer_ns, 10000.0);
  EXPECT_NEAR(s.overlap_ns, head + 4 * s.allreduce_layer_ns + 4 * 5000.0, 1e-6);
  EXPECT_LT(s.overlap_ns, s.naive_ns);
}

}  // namespace
}  // namespace dp_trainer
