// The simulator on schedules small enough to work out by hand.
#include <gtest/gtest.h>

#include "syncopate/tuner/simulator.hpp"

namespace syncopate::tuner {
namespace {

using Step = SimProgram::Step;
using Kind = SimProgram::StepKind;

void issue(SimProgram& p, std::uint32_t rank, std::uint32_t op) { p.hosts[rank].push_back({Kind::Issue, 0, op}); }
void cpu(SimProgram& p, std::uint32_t rank, double ns) { p.hosts[rank].push_back({Kind::Cpu, ns, 0}); }
void waitFor(SimProgram& p, std::uint32_t rank, std::uint32_t op) { p.hosts[rank].push_back({Kind::Wait, 0, op}); }

SimResult run(const SimProgram& p) {
  SimResult r = simulate(p);
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

TEST(Simulator, OneStreamRunsInIssueOrder) {
  SimProgram p;
  const auto s = p.addStream(0);
  for (double w : {10.0, 20.0, 30.0}) issue(p, 0, p.addOp(s, OpClass::Compute, w));
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.end[0], 10);
  EXPECT_DOUBLE_EQ(r.start[1], 10);
  EXPECT_DOUBLE_EQ(r.end[2], 60);
}

TEST(Simulator, AnOpStartsNoEarlierThanItsNotBefore) {
  SimProgram p;
  const auto s1 = p.addStream(0), s2 = p.addStream(0);
  const auto held = p.addOp(s1, OpClass::Communication, 10);
  p.ops[held].not_before_ns = 50;  // a transfer whose absent peers arrived at 50
  issue(p, 0, held);
  issue(p, 0, p.addOp(s1, OpClass::Compute, 5));   // behind it on its stream
  issue(p, 0, p.addOp(s2, OpClass::Compute, 5));   // another stream is not held
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[0], 50);
  EXPECT_DOUBLE_EQ(r.start[1], 60);
  EXPECT_DOUBLE_EQ(r.start[2], 0);
}

TEST(Simulator, ComputeOpsOfOneDeviceTakeTurnsAndCopiesDoNot) {
  SimProgram p;
  const auto s1 = p.addStream(0), s2 = p.addStream(0), s3 = p.addStream(0);
  issue(p, 0, p.addOp(s1, OpClass::Compute, 10));
  issue(p, 0, p.addOp(s2, OpClass::Compute, 10));
  issue(p, 0, p.addOp(s3, OpClass::Memory, 4));
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[1], 10);
  EXPECT_DOUBLE_EQ(r.end[1], 20);
  EXPECT_DOUBLE_EQ(r.start[2], 0);
}

TEST(Simulator, HigherPriorityStreamGetsTheEngineFirst) {
  SimProgram p;
  const auto s1 = p.addStream(0, 0), s2 = p.addStream(0, -1), s3 = p.addStream(0, 0);
  issue(p, 0, p.addOp(s3, OpClass::Compute, 10));
  issue(p, 0, p.addOp(s1, OpClass::Compute, 10));
  issue(p, 0, p.addOp(s2, OpClass::Compute, 10));
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[2], 10);  // priority -1 first
  EXPECT_DOUBLE_EQ(r.start[1], 20);
}

TEST(Simulator, InterferenceSlowsBothWhileTheyOverlap) {
  SimProgram p;
  p.compute_slowdown = 0.1;
  p.communication_slowdown = 0.2;
  const auto s1 = p.addStream(0), s2 = p.addStream(0);
  issue(p, 0, p.addOp(s1, OpClass::Compute, 100));
  issue(p, 0, p.addOp(s2, OpClass::Communication, 100, {}, 0));
  const SimResult r = run(p);
  // Compute at 1/1.1 ends at 110; by then communication did 110/1.2, the rest at full speed.
  EXPECT_DOUBLE_EQ(r.end[0], 110);
  EXPECT_NEAR(r.end[1], 110 + (100 - 110 / 1.2), 1e-9);
}

// A collective on a quarter of the recorded channels slows compute a quarter as much; of two
// running, the wider one counts (the model follows simgpu's and NCCL's SMs: channels.hpp).
TEST(Simulator, ComputeIsSlowedByTheWidestCommunicationRunning) {
  SimProgram p;
  p.compute_slowdown = 0.1;
  const auto s1 = p.addStream(0), s2 = p.addStream(0), s3 = p.addStream(0);
  issue(p, 0, p.addOp(s1, OpClass::Compute, 100));
  const auto narrow = p.addOp(s2, OpClass::Communication, 1000, {}, 0);
  p.ops[narrow].interference = 0.25;
  issue(p, 0, narrow);
  SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.end[0], 100 * (1 + 0.1 * 0.25));

  const auto wide = p.addOp(s3, OpClass::Communication, 1000, {}, 1);
  p.ops[wide].interference = 0.5;
  issue(p, 0, wide);
  r = run(p);
  EXPECT_DOUBLE_EQ(r.end[0], 100 * (1 + 0.1 * 0.5));
}

TEST(Simulator, CollectiveStartsWhenTheLastRankArrives) {
  SimProgram p;
  const auto a = p.addStream(0), b = p.addStream(1);
  issue(p, 0, p.addOp(a, OpClass::Compute, 50));
  issue(p, 0, p.addOp(a, OpClass::Communication, 20, {}, 7));
  issue(p, 1, p.addOp(b, OpClass::Compute, 30));
  issue(p, 1, p.addOp(b, OpClass::Communication, 20, {}, 7));
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[3], 50);
  EXPECT_DOUBLE_EQ(r.end[1], 70);
  EXPECT_DOUBLE_EQ(r.end[3], 70);
}

TEST(Simulator, HostWaitsAndLaunchLatency) {
  SimProgram p;
  p.launch_latency_ns = 3;
  const auto s = p.addStream(0);
  const auto a = p.addOp(s, OpClass::Compute, 100);
  const auto b = p.addOp(s, OpClass::Compute, 5);
  issue(p, 0, a);
  waitFor(p, 0, a);
  cpu(p, 0, 10);
  issue(p, 0, b);
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[a], 3);
  EXPECT_DOUBLE_EQ(r.start[b], 103 + 10 + 3);
  EXPECT_DOUBLE_EQ(r.host_end[0], 113);
}

TEST(Simulator, EventWaitOrdersStreams) {
  SimProgram p;
  const auto s1 = p.addStream(0), s2 = p.addStream(0);
  const auto a = p.addOp(s1, OpClass::Memory, 50);
  const auto rec = p.addOp(s1, OpClass::Marker, 0);
  const std::uint32_t deps[] = {rec};
  const auto wait = p.addOp(s2, OpClass::Marker, 0, deps);
  const auto b = p.addOp(s2, OpClass::Memory, 10);
  for (auto o : {a, rec, wait, b}) issue(p, 0, o);
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[b], 50);
}

// DDP's pattern with CUDA_DEVICE_MAX_CONNECTIONS=1: the second all-reduce waits on its stream for
// the first, and backward's next kernel, issued after it, waits in the one work queue.
SimProgram allReducesBesideBackward(std::uint32_t connections) {
  SimProgram p;
  p.connections = connections;
  const auto compute = p.addStream(0), nccl = p.addStream(0);
  issue(p, 0, p.addOp(nccl, OpClass::Communication, 40));
  issue(p, 0, p.addOp(nccl, OpClass::Communication, 10));
  issue(p, 0, p.addOp(compute, OpClass::Compute, 5));
  return p;
}

TEST(Simulator, StreamsSharingAWorkQueueLeaveItInIssueOrder) {
  const SimResult shared = run(allReducesBesideBackward(1));
  EXPECT_DOUBLE_EQ(shared.start[1], 40);
  EXPECT_DOUBLE_EQ(shared.start[2], 40);  // behind the second all-reduce, not the engine
  const SimResult own = run(allReducesBesideBackward(2));
  EXPECT_DOUBLE_EQ(own.start[2], 0);
  const SimResult unlimited = run(allReducesBesideBackward(0));
  EXPECT_DOUBLE_EQ(unlimited.start[2], 0);
}

TEST(Simulator, BarrierMeetsEveryHost) {
  SimProgram p;
  const auto a = p.addStream(0), b = p.addStream(1);
  cpu(p, 0, 10);
  cpu(p, 1, 30);
  p.hosts[0].push_back({Kind::Barrier, 5, 0});
  p.hosts[1].push_back({Kind::Barrier, 5, 0});
  issue(p, 0, p.addOp(a, OpClass::Compute, 1));
  issue(p, 1, p.addOp(b, OpClass::Compute, 1));
  const SimResult r = run(p);
  EXPECT_DOUBLE_EQ(r.start[0], 35);
  EXPECT_DOUBLE_EQ(r.start[1], 35);
}

TEST(Simulator, ACollectiveOneRankNeverReachesIsADeadlock) {
  SimProgram p;
  const auto a = p.addStream(0);
  p.addStream(1);
  issue(p, 0, p.addOp(a, OpClass::Communication, 20, {}, 0));
  p.addOp(1, OpClass::Communication, 20, {}, 0);  // rank 1 never issues it
  const SimResult r = simulate(p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("deadlock"), std::string::npos);
}

}  // namespace
}  // namespace syncopate::tuner
