#include "synthetic_trainer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "syncopate/analyzer/run_model_builder.hpp"
#include "syncopate/tuner/simulator.hpp"

namespace syncopate::tuner::testing {

namespace {

using Kind = SimProgram::StepKind;
constexpr std::int64_t kCommId = 77;
constexpr std::uint64_t kComputeStream = 0x100, kCommStream = 0x200;
constexpr std::uint64_t kLayerEvent = 0xE000, kCommDoneEvent = 0xE100, kEndEvent = 0xE200, kCallerEvent = 0xE300,
                        kGroupEvent = 0xE400, kSteppedEvent = 0xE500, kGatheredEvent = 0xE600;

enum class What : std::uint8_t {
  Kernel, Memset, AllReduce, ReduceScatter, AllGather, Broadcast, Record, Wait, StreamSync, EventSync, DeviceSync
};

bool isCollective(What w) {
  return w == What::AllReduce || w == What::ReduceScatter || w == What::AllGather || w == What::Broadcast;
}

trace::CollType collTypeOf(What w) {
  switch (w) {
    case What::AllReduce: return trace::CollType::AllReduce;
    case What::ReduceScatter: return trace::CollType::ReduceScatter;
    case What::AllGather: return trace::CollType::AllGather;
    default: return trace::CollType::Broadcast;
  }
}

// One call of the trainer: what it was, the op it issued or waited for, its host steps.
struct Desc {
  Desc(What w, const char* n) : what(w), name(n) {}
  What what = What::Kernel;
  const char* name = "";
  std::uint32_t op = 0;             // issued (or, for syncs, waited for)
  std::size_t first_step = 0, last_step = 0;
  bool on_comm_stream = false;
  std::uint64_t event = 0;
  std::vector<std::uint64_t> pointers;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // as NCCL's call takes it: a reduce-scatter's or all-gather's is per rank
  std::int64_t seq = -1;
  std::int64_t iteration = -1;
};

struct RankProgram {
  std::vector<Desc> calls;
  std::vector<std::pair<std::size_t, std::size_t>> steps_of_iteration;  // first and last call index
};

double rint(double v) { return std::round(v); }

}  // namespace

std::uint64_t gradientAddress(int layer, const SyntheticTrainer& t) {
  return 0x10000000ull + static_cast<std::uint64_t>(layer) * t.layer_floats * 4;
}
std::uint64_t parameterAddress(int layer, const SyntheticTrainer& t) {
  return 0x80000000ull + static_cast<std::uint64_t>(layer) * t.layer_floats * 4;
}
std::uint64_t shardAddress(std::uint64_t bucket, int rank, const SyntheticTrainer& t) {
  return bucket + static_cast<std::uint64_t>(rank) * (t.layer_floats / static_cast<std::uint64_t>(t.ranks)) * 4;
}

double SyntheticTrainer::allReduceNs() const {
  const double n = ranks;
  return latency_ns * 2 * (n - 1) + ns_per_byte * 2 * (n - 1) / n * static_cast<double>(layer_floats * 4);
}

// The whole bucket is nccl-tests' size of a reduce-scatter or an all-gather (count * ranks).
double SyntheticTrainer::reduceScatterNs() const {
  const double n = ranks;
  return latency_ns * (n - 1) + ns_per_byte * (n - 1) / n * static_cast<double>(layer_floats * 4);
}

double SyntheticTrainer::broadcastNs() const {
  return latency_ns * (ranks - 1) + ns_per_byte * static_cast<double>(layer_floats * 4 * static_cast<std::uint64_t>(layers));
}

ModelledRun modelRun(const SyntheticTrainer& trainer) {
  SyntheticRun run = makeRun(trainer);
  auto analysis = analyzer::analyze(run.model);
  if (!analysis.ok()) throw std::runtime_error("synthetic trainer: " + analysis.message());
  ModelOptions options;
  options.compute_slowdown = 0;
  options.communication_slowdown = 0;
  auto model = WhatIfModel::build(run.model, *analysis, run.pointers, options);
  if (!model.ok()) throw std::runtime_error("synthetic trainer: " + model.message());
  return {std::move(analysis).value(), std::move(model).value()};
}

SyntheticRun makeRun(const SyntheticTrainer& t) {
  using Mode = SyntheticTrainer::Mode;
  const bool overlap = t.mode == Mode::Overlap, synchronous = t.mode == Mode::Zero1Synchronous;
  const bool gather_in_forward = t.mode == Mode::Zero1GatherInForward;
  const bool reduce_overlapped = t.mode == Mode::Zero1Overlapped || gather_in_forward;
  const bool zero1 = t.mode == Mode::Zero1 || reduce_overlapped || synchronous;
  const bool two_streams = overlap || reduce_overlapped || synchronous;
  if (zero1 && t.layer_floats % static_cast<std::uint64_t>(t.ranks) != 0) {
    throw std::invalid_argument("synthetic trainer: zero1 needs layer_floats to divide by the ranks");
  }
  SimProgram p;
  p.launch_latency_ns = t.launch_latency_ns;
  p.compute_slowdown = t.compute_slowdown;
  p.communication_slowdown = t.communication_slowdown;
  std::vector<RankProgram> programs(static_cast<std::size_t>(t.ranks));
  const std::uint64_t layer_bytes = t.layer_floats * 4;
  for (int r = 0; r < t.ranks; ++r) {
    RankProgram& prog = programs[static_cast<std::size_t>(r)];
    const auto rank = static_cast<std::uint32_t>(r);
    const std::uint32_t s = p.addStream(rank);
    const std::uint32_t c = two_streams ? p.addStream(rank) : s;
    auto& steps = p.hosts[rank];
    std::uint32_t last_s = 0, last_c = 0;
    std::int64_t seq = 0;
    std::int64_t iteration = -1;
    std::uint32_t end_event_op[2] = {0, 0};
    auto issue = [&](Desc d, std::uint32_t stream, OpClass wc, double work, std::uint32_t dep, std::uint32_t match) {
      d.first_step = steps.size();
      steps.push_back({Kind::Cpu, t.call_ns, 0});
      const std::uint32_t deps[1] = {dep};
      d.op = p.addOp(stream, wc, work,
                     dep == UINT32_MAX ? std::span<const std::uint32_t>{} : std::span<const std::uint32_t>(deps), match,
                     static_cast<std::int32_t>(iteration));
      steps.push_back({Kind::Issue, 0, d.op});
      d.last_step = steps.size() - 1;
      d.on_comm_stream = stream != s;
      d.iteration = iteration;
      (stream == s ? last_s : last_c) = d.op;
      prog.calls.push_back(d);
      return d.op;
    };
    // An event recorded on `from` that `to` waits for.
    auto signal = [&](std::uint32_t from, std::uint32_t to, std::uint64_t event) {
      Desc rec{What::Record, "cudaEventRecord"};
      rec.event = event;
      const std::uint32_t recorded = issue(rec, from, OpClass::Marker, 0, UINT32_MAX, kNoMatch);
      Desc wait{What::Wait, "cudaStreamWaitEvent"};
      wait.event = event;
      issue(wait, to, OpClass::Marker, 0, recorded, kNoMatch);
    };
    auto sync = [&](Desc d, std::initializer_list<std::uint32_t> ops) {
      d.first_step = steps.size();
      d.op = *ops.begin();
      for (std::uint32_t op : ops) steps.push_back({Kind::Wait, 0, op});
      d.last_step = steps.size() - 1;
      d.iteration = iteration;
      prog.calls.push_back(d);
    };
    auto allReduce = [&](int l, std::uint32_t stream, std::uint32_t dep) {
      Desc d{What::AllReduce, "ncclAllReduce"};
      d.pointers = {gradientAddress(l, t), gradientAddress(l, t)};
      d.bytes = layer_bytes;
      d.count = t.layer_floats;
      d.seq = seq;
      issue(d, stream, OpClass::Communication, rint(t.allReduceNs()), dep, static_cast<std::uint32_t>(seq));
      ++seq;
    };
    // In place, as Megatron's distributed optimizer issues them: the rank's shard is its slice of
    // the bucket.
    const std::uint64_t shard_floats = t.layer_floats / static_cast<std::uint64_t>(t.ranks);
    auto sharded = [&](What what, std::uint64_t bucket, std::uint32_t stream) {
      const std::uint64_t shard = shardAddress(bucket, r, t);
      Desc d{what, what == What::ReduceScatter ? "ncclReduceScatter" : "ncclAllGather"};
      d.pointers = what == What::ReduceScatter ? std::vector<std::uint64_t>{bucket, shard}
                                               : std::vector<std::uint64_t>{shard, bucket};
      d.bytes = shard_floats * 4;
      d.count = shard_floats;
      d.seq = seq;
      if (!synchronous) {
        issue(d, stream, OpClass::Communication, rint(t.reduceScatterNs()), UINT32_MAX, static_cast<std::uint32_t>(seq));
        ++seq;
        return;
      }
      signal(s, c, kCallerEvent);
      issue(d, c, OpClass::Communication, rint(t.reduceScatterNs()), UINT32_MAX, static_cast<std::uint32_t>(seq));
      ++seq;
      signal(c, s, kGroupEvent);
    };

    // Set-up: broadcast the parameters, wait for it.
    {
      Desc d{What::Broadcast, "ncclBroadcast"};
      d.pointers = {parameterAddress(0, t), parameterAddress(0, t)};
      d.bytes = layer_bytes * static_cast<std::uint64_t>(t.layers);
      d.count = t.layer_floats * static_cast<std::uint64_t>(t.layers);
      d.seq = seq;
      issue(d, s, OpClass::Communication, rint(t.broadcastNs()), UINT32_MAX, static_cast<std::uint32_t>(seq));
      ++seq;
      sync({What::StreamSync, "cudaStreamSynchronize"}, {last_s});
    }
    const double scale = t.rank_backward_scale.empty() ? 1.0 : t.rank_backward_scale[static_cast<std::size_t>(r)];
    for (int it = 0; it < t.iterations; ++it) {
      iteration = it;
      const std::size_t first_call = prog.calls.size();
      // zero1_gather_in_forward: the last step's parameters gathered on C, first layer first,
      // each layer's forward waiting for its own.
      std::vector<std::uint32_t> gathered(static_cast<std::size_t>(t.layers), UINT32_MAX);
      if (gather_in_forward && it > 0) {
        signal(s, c, kSteppedEvent);
        for (int l = 0; l < t.layers; ++l) {
          sharded(What::AllGather, parameterAddress(l, t), c);
          Desc rec{What::Record, "cudaEventRecord"};
          rec.event = kGatheredEvent + static_cast<std::uint64_t>(l);
          gathered[static_cast<std::size_t>(l)] = issue(rec, c, OpClass::Marker, 0, UINT32_MAX, kNoMatch);
        }
      }
      for (int l = 0; l < t.layers; ++l) {
        if (gathered[static_cast<std::size_t>(l)] != UINT32_MAX) {
          Desc wait{What::Wait, "cudaStreamWaitEvent"};
          wait.event = kGatheredEvent + static_cast<std::uint64_t>(l);
          issue(wait, s, OpClass::Marker, 0, gathered[static_cast<std::size_t>(l)], kNoMatch);
        }
        Desc d{What::Kernel, "fwd"};
        d.pointers = {parameterAddress(l, t)};
        issue(d, s, OpClass::Compute, t.forward_ns, UINT32_MAX, kNoMatch);
      }
      if (!zero1) {
        Desc d{What::Memset, "cudaMemsetAsync"};
        d.pointers = {gradientAddress(0, t)};
        d.bytes = layer_bytes * static_cast<std::uint64_t>(t.layers);
        issue(d, s, OpClass::Memory, t.memset_ns, UINT32_MAX, kNoMatch);
      }
      for (int l = t.layers - 1; l >= 0; --l) {
        Desc d{What::Kernel, "bwd"};
        d.pointers = {gradientAddress(l, t), parameterAddress(l, t)};
        issue(d, s, OpClass::Compute, rint(t.backward_ns * scale), UINT32_MAX, kNoMatch);
        if (overlap) {
          signal(s, c, kLayerEvent + static_cast<std::uint64_t>(l));
          allReduce(l, c, UINT32_MAX);
        }
        if (reduce_overlapped) {
          signal(s, c, kLayerEvent + static_cast<std::uint64_t>(l));
          sharded(What::ReduceScatter, gradientAddress(l, t), c);
        }
      }
      if (overlap || reduce_overlapped) signal(c, s, kCommDoneEvent);
      if (t.mode == Mode::Naive) {
        for (int l = 0; l < t.layers; ++l) allReduce(l, s, UINT32_MAX);
      }
      if (zero1) {
        if (!reduce_overlapped) {
          for (int l = t.layers - 1; l >= 0; --l) sharded(What::ReduceScatter, gradientAddress(l, t), s);
        }
        for (int l = t.layers - 1; l >= 0; --l) {
          Desc d{What::Kernel, "sgd_shard"};
          d.pointers = {shardAddress(parameterAddress(l, t), r, t), shardAddress(gradientAddress(l, t), r, t)};
          issue(d, s, OpClass::Compute, t.update_ns, UINT32_MAX, kNoMatch);
        }
        if (!gather_in_forward) {
          for (int l = t.layers - 1; l >= 0; --l) sharded(What::AllGather, parameterAddress(l, t), s);
        }
      } else {
        for (int l = 0; l < t.layers; ++l) {
          Desc d{What::Kernel, "sgd"};
          d.pointers = {parameterAddress(l, t), gradientAddress(l, t)};
          issue(d, s, OpClass::Compute, t.update_ns, UINT32_MAX, kNoMatch);
        }
      }
      {
        Desc rec{What::Record, "cudaEventRecord"};
        rec.event = kEndEvent + static_cast<std::uint64_t>(it % 2);
        end_event_op[static_cast<std::size_t>(it % 2)] = issue(rec, s, OpClass::Marker, 0, UINT32_MAX, kNoMatch);
      }
      if (it > 0) {
        Desc d{What::EventSync, "cudaEventSynchronize"};
        d.event = kEndEvent + static_cast<std::uint64_t>((it - 1) % 2);
        sync(d, {end_event_op[static_cast<std::size_t>((it - 1) % 2)]});
      }
      prog.steps_of_iteration.emplace_back(first_call, prog.calls.size() - 1);
    }
    iteration = -1;
    if (two_streams) {
      sync({What::DeviceSync, "cudaDeviceSynchronize"}, {last_s, last_c});
    } else {
      sync({What::DeviceSync, "cudaDeviceSynchronize"}, {last_s});
    }
  }

  const SimResult sim = simulate(p);
  if (!sim.ok) throw std::runtime_error("synthetic trainer: " + sim.error);

  analyzer::RunModelBuilder b;
  std::vector<std::vector<PointerArg>> args_by_store_id;
  for (int r = 0; r < t.ranks; ++r) {
    const RankProgram& prog = programs[static_cast<std::size_t>(r)];
    const auto& step_end = sim.step_end[static_cast<std::size_t>(r)];
    analyzer::RankInfo info;
    info.rank = r;
    info.world_size = t.ranks;
    info.host = "host" + std::to_string(r);
    info.source = "synthetic";
    const analyzer::Index rank = b.addRank(info);
    const analyzer::Index s = b.addStream(rank, 0, static_cast<std::int64_t>(kComputeStream), "compute");
    const analyzer::Index c =
        two_streams ? b.addStream(rank, 0, static_cast<std::int64_t>(kCommStream), "communication") : s;
    const analyzer::Index thread = b.addThread(rank, 1000 + r, "main");
    auto hostTime = [&](std::size_t step) { return static_cast<std::int64_t>(std::llround(step_end[step])); };
    auto startOf = [&](const Desc& d) { return d.first_step == 0 ? std::int64_t{0} : hostTime(d.first_step - 1); };
    for (const Desc& d : prog.calls) {
      const bool nccl = isCollective(d.what);
      const analyzer::Index call = b.addApiCall({.thread = thread,
                                                 .domain = nccl ? trace::ApiDomain::Nccl : trace::ApiDomain::CudaRuntime,
                                                 .name = b.intern(d.name),
                                                 .start = startOf(d),
                                                 .end = hostTime(d.last_step)});
      if (d.what == What::Broadcast && r == t.lost_broadcast_rank) continue;
      const std::int64_t op_start = static_cast<std::int64_t>(std::llround(sim.start[d.op]));
      const std::int64_t op_end = static_cast<std::int64_t>(std::llround(sim.end[d.op]));
      switch (d.what) {
        case What::StreamSync:
        case What::EventSync:
        case What::DeviceSync: {
          analyzer::HostSyncInput row;
          row.rank = rank;
          row.api_call = call;
          row.sync_kind = d.what == What::StreamSync ? trace::SyncKind::Stream
                          : d.what == What::EventSync ? trace::SyncKind::Event
                                                      : trace::SyncKind::Device;
          row.stream = d.what == What::StreamSync ? s : analyzer::kNone;
          row.event_id = d.what == What::EventSync ? static_cast<std::int64_t>(d.event) : analyzer::kUnknown;
          row.start = startOf(d);
          row.end = hostTime(d.last_step);
          b.addHostSync(row);
          continue;
        }
        default: break;
      }
      analyzer::OpInput row;
      row.stream = d.on_comm_stream ? c : s;
      row.start = op_start;
      row.end = op_end;
      row.api_call = call;
      row.store_id = static_cast<std::int64_t>(args_by_store_id.size());
      std::vector<PointerArg> args;
      switch (d.what) {
        case What::Kernel:
          row.kind = trace::OpKind::Kernel;
          row.name = b.intern(d.name);
          for (std::size_t i = 0; i < d.pointers.size(); ++i) args.push_back({static_cast<std::uint32_t>(i), d.pointers[i]});
          break;
        case What::Memset:
          row.kind = trace::OpKind::Memset;
          row.name = b.intern("Memset");
          row.bytes = static_cast<std::int64_t>(d.bytes);
          args.push_back({0, d.pointers[0]});
          break;
        case What::AllReduce:
        case What::ReduceScatter:
        case What::AllGather:
        case What::Broadcast:
          // No bytes on the op: a recorded collective's size is on its collective row only.
          row.kind = trace::OpKind::Collective;
          row.name = b.intern(d.name);
          args.push_back({0, d.pointers[0]});
          args.push_back({1, d.pointers[1]});
          break;
        case What::Record:
        case What::Wait:
          row.kind = d.what == What::Record ? trace::OpKind::EventRecord : trace::OpKind::StreamWait;
          row.name = b.intern(d.what == What::Record ? "Event record" : "Stream wait");
          row.event_id = static_cast<std::int64_t>(d.event);
          break;
        default: break;
      }
      const analyzer::Index op = b.addOp(row);
      args_by_store_id.push_back(std::move(args));
      if (isCollective(d.what)) {
        analyzer::CollectiveInput cr;
        cr.comm_id = kCommId;
        cr.comm_rank = r;
        cr.comm_size = t.ranks;
        cr.seq = d.seq;
        cr.coll_type = collTypeOf(d.what);
        cr.dtype = trace::DataType::Float32;
        cr.red_op = d.what == What::AllReduce || d.what == What::ReduceScatter ? trace::RedOp::Sum : trace::RedOp::None;
        cr.count = static_cast<std::int64_t>(d.count);
        cr.bytes = static_cast<std::int64_t>(d.bytes);
        cr.root_or_peer = d.what == What::Broadcast ? 0 : -1;
        b.addCollective(op, cr);
      }
    }
    for (std::size_t it = 0; it < prog.steps_of_iteration.size(); ++it) {
      const auto [first, last] = prog.steps_of_iteration[it];
      analyzer::RangeInput range;
      range.rank = rank;
      range.thread = thread;
      range.name = b.intern("ProfilerStep#" + std::to_string(it));
      range.start = startOf(prog.calls[first]);
      range.end = hostTime(prog.calls[last].last_step);
      b.addRange(range);
    }
  }
  auto built = std::move(b).finish();
  if (!built.ok()) throw std::runtime_error("synthetic trainer: " + built.message());
  SyntheticRun run{std::move(built).value(), {}};
  run.pointers = OpPointers(run.model.ops.size());
  for (analyzer::Index op = 0; op < run.model.ops.size(); ++op) {
    const std::int64_t id = run.model.ops.store_id[op];
    if (id >= 0 && static_cast<std::size_t>(id) < args_by_store_id.size() && !args_by_store_id[id].empty()) {
      run.pointers.set(op, args_by_store_id[static_cast<std::size_t>(id)]);
    }
  }
  return run;
}

}  // namespace syncopate::tuner::testing
