#include "syncopate/tuner/fits.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "comm_samples.hpp"
#include "least_squares.hpp"
#include "median.hpp"

namespace syncopate::tuner {

namespace {

using analyzer::Index;
using analyzer::OpClass;

// Ops of one kind that differ more than this between runs alone are not one kind.
constexpr double kStableSpread = 0.05;
// An overlapped op more than this many times as long as its kind alone is another shape of the
// same name, not a slower run of this one (reported slowdowns of kernels sharing a GPU are well
// under 2x).
constexpr double kOtherShapeRatio = 3.0;
// An op counts as overlapped when at least this share of it ran beside the other kind.
constexpr double kOverlappedShare = 0.10;
constexpr std::int64_t kMinSamples = 3;

// One observation of an op: its duration and how much of it overlapped the other kind.
struct Sample {
  double duration = 0, overlapped = 0;
};

// Fits r in  alone = (duration - overlapped) + r * overlapped  over every kind of op, where
// `alone` is the median duration of the kind's non-overlapped samples; slowdown = 1/r - 1.
// A kernel's name is its kind, and real traces launch one name on several shapes: an overlapped
// launch of a longer shape that never ran alone would outweigh every other sample of the fit
// (which weighs each by its overlap squared), so an op is left out when its time outside the
// overlap alone is longer than its kind takes alone (by more than kStableSpread), or when it took
// kOtherShapeRatio times that. So a fully overlapped op shows a slowdown of at most 2x.
InterferenceEstimate estimate(const std::map<std::int64_t, std::vector<Sample>>& kinds, double prior) {
  double num = 0, den = 0;
  std::int64_t samples = 0;
  for (const auto& [kind, list] : kinds) {
    std::vector<double> alone;
    for (const Sample& s : list)
      if (s.overlapped <= 0) alone.push_back(s.duration);
    if (alone.empty()) continue;
    const double base = median(alone);
    if (base <= 0) continue;
    const bool stable = std::all_of(alone.begin(), alone.end(), [&](double d) { return std::abs(d - base) <= kStableSpread * base; });
    if (!stable) continue;
    for (const Sample& s : list) {
      if (s.overlapped < kOverlappedShare * s.duration) continue;
      const bool other_shape = s.duration - s.overlapped > (1 + kStableSpread) * base || s.duration > kOtherShapeRatio * base;
      if (other_shape) continue;
      num += s.overlapped * (base - (s.duration - s.overlapped));
      den += s.overlapped * s.overlapped;
      ++samples;
    }
  }
  InterferenceEstimate e;
  e.slowdown = prior;
  if (samples < kMinSamples || den <= 0 || num <= 0) return e;
  const double r = std::min(1.0, num / den);
  e.slowdown = std::clamp(1.0 / r - 1.0, 0.0, 10.0);
  e.measured = true;
  e.samples = samples;
  return e;
}

// The part of each collective op that ran once every rank had arrived.
struct ActiveWindow {
  Index op = 0;
  Index row = 0;  // in m.collectives
  Index match = 0;
  std::int64_t start = 0, end = 0;
};

std::vector<ActiveWindow> activeWindows(const analyzer::RunModel& m, const analyzer::Analysis& a) {
  std::vector<ActiveWindow> out;
  for (const analyzer::CollectiveTiming& call : a.collectives.calls) {
    if (!call.complete) continue;
    for (Index row : m.matches.of(call.match)) {
      const Index op = m.collectives.op[row];
      const std::int64_t start = std::max(m.ops.start[op], call.last_arrival);
      if (m.ops.end[op] <= start) continue;
      out.push_back({op, row, call.match, start, m.ops.end[op]});
    }
  }
  return out;
}

std::vector<analyzer::RankActivity> activities(const analyzer::RunModel& m) {
  std::vector<analyzer::RankActivity> out;
  out.reserve(m.ranks.size());
  for (Index r = 0; r < m.ranks.size(); ++r) out.push_back(analyzer::rankActivity(m, r));
  return out;
}

double alone(double duration, double overlapped, double slowdown) {
  return (duration - overlapped) + overlapped / (1.0 + slowdown);
}

}  // namespace

Interference measureInterference(const analyzer::RunModel& m, const analyzer::Analysis& a, double prior_compute,
                                 double prior_communication) {
  const auto act = activities(m);
  std::map<std::int64_t, std::vector<Sample>> compute;
  for (Index op = 0; op < m.ops.size(); ++op) {
    if (m.ops.op_class[op] != OpClass::Compute) continue;
    const Index r = m.rankOfOp(op);
    const double d = static_cast<double>(m.ops.end[op] - m.ops.start[op]);
    if (d <= 0) continue;
    compute[m.ops.name[op]].push_back({d, static_cast<double>(act[r].communication.measure(m.ops.start[op], m.ops.end[op]))});
  }
  // Collectives: one kind per communicator, type and size, the size as the call gave it (a
  // recorded collective's op carries no byte count: only its collective row does). A call of
  // unknown size is of no known kind: lumped together, calls of every size would be measured
  // against the median of whichever ran alone.
  std::map<std::tuple<std::int64_t, int, std::int64_t, int>, std::int64_t> kind_ids;
  std::map<std::int64_t, std::vector<Sample>> communication;
  for (const ActiveWindow& w : activeWindows(m, a)) {
    if (m.collectives.count[w.row] < 0) continue;
    const auto key = std::make_tuple(m.matches.comm_id[w.match], static_cast<int>(m.matches.coll_type[w.match]),
                                     m.collectives.count[w.row], static_cast<int>(m.collectives.dtype[w.row]));
    const auto id = kind_ids.emplace(key, static_cast<std::int64_t>(kind_ids.size())).first->second;
    const Index r = m.rankOfOp(w.op);
    communication[id].push_back({static_cast<double>(w.end - w.start), static_cast<double>(act[r].compute.measure(w.start, w.end))});
  }
  Interference out;
  out.compute = estimate(compute, prior_compute);
  out.communication = estimate(communication, prior_communication);
  return out;
}

int ringSteps(trace::CollType type, std::int32_t ranks) {
  if (ranks <= 1) return 1;
  switch (type) {
    case trace::CollType::AllReduce: return 2 * (ranks - 1);
    case trace::CollType::Send:
    case trace::CollType::Recv: return 1;
    default: return ranks - 1;
  }
}

const CommFit* CommModel::find(std::int64_t comm_id) const {
  for (const CommFit& f : fits)
    if (f.comm_id == comm_id) return &f;
  return nullptr;
}

double CommModel::durationNs(std::int64_t comm_id, trace::CollType type, std::int32_t ranks, std::uint64_t count,
                             trace::DataType dtype) const {
  const CommFit* f = find(comm_id);
  if (f == nullptr) return -1;
  const std::int64_t s = analyzer::ncclTestsBytes(type, static_cast<std::int64_t>(count), dtype, ranks);
  if (s < 0) return -1;
  return f->latency_ns * ringSteps(type, ranks) +
         f->ns_per_byte * analyzer::busBandwidthFactor(type, ranks) * static_cast<double>(s);
}

CommModel fitCommunication(const analyzer::RunModel& m, const analyzer::Analysis& a, const Interference& interference) {
  const auto act = activities(m);
  // Per match: the mean over its ranks of the standalone active time.
  std::map<Index, std::pair<double, int>> per_match;
  for (const ActiveWindow& w : activeWindows(m, a)) {
    const Index r = m.rankOfOp(w.op);
    const double d = static_cast<double>(w.end - w.start);
    const double o = static_cast<double>(act[r].compute.measure(w.start, w.end));
    auto& acc = per_match[w.match];
    acc.first += alone(d, o, interference.communication.slowdown);
    acc.second += 1;
  }
  CommSamples per_comm;
  for (const auto& [match, acc] : per_match) {
    const Index row = m.matches.of(match).front();
    const std::int32_t n = m.matches.expected[match];
    if (n <= 0) continue;
    addCommSample(per_comm, m.matches.comm_id[match], m.matches.coll_type[match], m.collectives.count[row],
                  m.collectives.dtype[row], n, acc.first / acc.second);
  }
  CommModel out;
  out.fits = fitEachCommunicator(per_comm);
  return out;
}

void addCommSample(CommSamples& samples, std::int64_t comm_id, trace::CollType type, std::int64_t count,
                   trace::DataType dtype, std::int32_t ranks, double ns) {
  const std::int64_t bytes = analyzer::ncclTestsBytes(type, count, dtype, ranks);
  if (bytes < 0) return;
  samples[comm_id].push_back({static_cast<double>(ringSteps(type, ranks)),
                              analyzer::busBandwidthFactor(type, ranks) * static_cast<double>(bytes), ns});
}

std::vector<CommFit> fitEachCommunicator(const CommSamples& samples) {
  std::vector<CommFit> out;
  for (const auto& [comm, rows] : samples) {
    const LinearFit fit = fitNonNegative(rows);
    if (!fit.ok) continue;
    CommFit f;
    f.comm_id = comm;
    f.latency_ns = fit.a;
    f.ns_per_byte = fit.b;
    f.latency_identified = fit.both_identified;
    f.samples = static_cast<std::int64_t>(rows.size());
    f.rms_relative_error = fit.rms_relative_error;
    out.push_back(f);
  }
  return out;
}

std::vector<double> standaloneDurations(const analyzer::RunModel& m, const analyzer::Analysis& a,
                                        const Interference& interference) {
  const auto act = activities(m);
  std::vector<double> out(m.ops.size());
  for (Index op = 0; op < m.ops.size(); ++op) {
    const double d = static_cast<double>(m.ops.end[op] - m.ops.start[op]);
    if (m.ops.op_class[op] == OpClass::Compute) {
      const Index r = m.rankOfOp(op);
      out[op] = alone(d, static_cast<double>(act[r].communication.measure(m.ops.start[op], m.ops.end[op])),
                      interference.compute.slowdown);
    } else {
      out[op] = d;
    }
  }
  for (const ActiveWindow& w : activeWindows(m, a)) {
    const Index r = m.rankOfOp(w.op);
    out[w.op] = alone(static_cast<double>(w.end - w.start), static_cast<double>(act[r].compute.measure(w.start, w.end)),
                      interference.communication.slowdown);
  }
  return out;
}

HostTimings measureHostTimings(const analyzer::RunModel& m) {
  HostTimings t;
  double least = -1;
  std::vector<LinearSample> copies;
  for (Index op = 0; op < m.ops.size(); ++op) {
    if (m.ops.kind[op] == trace::OpKind::Kernel && m.ops.launch[op] != analyzer::kNone) {
      const double delta = static_cast<double>(m.ops.start[op] - m.api_calls.start[m.ops.launch[op]]);
      if (delta >= 0 && (least < 0 || delta < least)) least = delta;
    }
    if (m.ops.kind[op] == trace::OpKind::Memcpy && m.ops.bytes[op] > 0 &&
        m.str(m.ops.name[op]).find("DtoD") != std::string_view::npos) {
      copies.push_back({1.0, static_cast<double>(m.ops.bytes[op]), static_cast<double>(m.ops.end[op] - m.ops.start[op])});
    }
  }
  t.launch_latency_ns = std::max(0.0, least);
  t.copy_bytes_per_ns = kDefaultCopyBytesPerNs;
  if (!copies.empty()) {
    const LinearFit fit = fitNonNegative(copies);
    if (fit.ok && fit.b > 0) {
      t.copy_bytes_per_ns = 1.0 / fit.b;
      t.copy_latency_ns = fit.a;
    }
  }
  return t;
}

}  // namespace syncopate::tuner
