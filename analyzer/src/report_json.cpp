// The analysis as JSON (schema syncopate.analysis/1, docs/analyzer.md).
#include <algorithm>
#include <map>
#include <set>

#include "syncopate/analyzer/report.hpp"
#include "units.hpp"

namespace syncopate::analyzer {

namespace {

using nlohmann::json;

double us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }

json exposedByCollective(const TimeBreakdown& t) {
  json out = json::object();
  for (std::size_t g = 0; g < kCollectiveGroups; ++g)
    out[toString(static_cast<CollectiveGroup>(g))] = ms(t.exposed_by_collective_ns[g]);
  return out;
}

json timeFields(const TimeBreakdown& t) {
  return {
      {"iteration_time_ms", ms(t.window_ns)},
      {"compute_ms", ms(t.compute_ns)},
      {"communication_ms", ms(t.communication_ns)},
      {"memory_ms", ms(t.memory_ns)},
      {"overlapped_communication_ms", ms(t.overlapped_communication_ns)},
      {"exposed_communication_ms", ms(t.exposed_communication_ns)},
      {"exposed_by_collective_ms", exposedByCollective(t)},
      {"overlap_ratio", t.overlapRatio()},
      {"idle_ms", ms(t.idle_ns)},
      {"busy_ms", ms(t.busy_ns)},
      {"non_compute_ms", ms(t.non_compute_ns)},
  };
}

// HTA's temporal breakdown, as percentages of the iteration time.
json temporalBreakdown(const TimeBreakdown& t) {
  auto pct = [&](std::int64_t v) { return t.window_ns > 0 ? 100.0 * static_cast<double>(v) / static_cast<double>(t.window_ns) : 0.0; };
  return {{"idle_pct", pct(t.idle_ns)}, {"compute_pct", pct(t.compute_ns)}, {"non_compute_pct", pct(t.non_compute_ns)}};
}

json kernelTypes(const KernelTypeBreakdown& k) {
  static constexpr const char* kNames[8] = {"idle",
                                            "computation",
                                            "communication",
                                            "computation overlapping communication",
                                            "memory",
                                            "computation overlapping memory",
                                            "communication overlapping memory",
                                            "computation overlapping communication overlapping memory"};
  json out = json::object();
  for (std::size_t i = 1; i < k.size(); ++i) out[kNames[i]] = ms(k[i]);
  return out;
}

json attribution(const std::array<std::int64_t, kPathCategories>& a, double scale) {
  json out = json::object();
  for (std::size_t c = 0; c < kPathCategories; ++c)
    out[std::string(toString(static_cast<PathCategory>(c))) + "_ms"] = ms(a[c]) * scale;
  return out;
}

json criticalPathSummary(const RunModel& m, const Analysis& a, const ReportOptions& options) {
  json cp = json::object();
  const auto& paths = a.critical_paths;
  cp["iterations"] = paths.size();
  if (paths.empty()) return cp;
  std::array<std::int64_t, kPathCategories> total{};
  std::int64_t length = 0;
  struct OpOnPath {
    std::int64_t ns = 0, segments = 0;
  };
  std::map<std::tuple<std::string, Index, PathCategory>, OpOnPath> on_path;
  for (const CriticalPath& p : paths) {
    length += p.length();
    for (std::size_t c = 0; c < kPathCategories; ++c) total[c] += p.attribution[c];
    for (std::size_t i = 0; i < p.segments.size(); ++i) {
      const PathSegment& s = p.segments[i];
      std::string name = p.nodeFacts(m, i).name;
      auto& o = on_path[{name, s.rank, s.category}];
      o.ns += s.end - s.start;
      ++o.segments;
    }
  }
  const double n = static_cast<double>(paths.size());
  cp["length_ms"] = ms(length) / n;
  cp["attribution"] = attribution(total, 1.0 / n);
  json fractions = json::object();
  for (std::size_t c = 0; c < kPathCategories; ++c)
    fractions[toString(static_cast<PathCategory>(c))] = length > 0 ? static_cast<double>(total[c]) / static_cast<double>(length) : 0.0;
  cp["attribution_fraction"] = fractions;
  std::vector<std::pair<std::tuple<std::string, Index, PathCategory>, OpOnPath>> ops(on_path.begin(), on_path.end());
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.second.ns > y.second.ns; });
  json top = json::array();
  for (std::size_t i = 0; i < ops.size() && i < options.top_path_ops; ++i) {
    const auto& [key, o] = ops[i];
    top.push_back({{"name", std::get<0>(key)},
                   {"rank", m.ranks[std::get<1>(key)].rank},
                   {"category", toString(std::get<2>(key))},
                   {"time_ms", ms(o.ns) / n},
                   {"segments", o.segments}});
  }
  cp["top_ops"] = top;
  return cp;
}

json collectivesSummary(const RunModel& m, const Analysis& a) {
  const CollectiveAnalysis& c = a.collectives;
  json out = {{"matched", c.calls.size()}, {"complete", c.complete}, {"partial", c.partial}};
  struct ByType {
    std::int64_t count = 0, bytes = 0, time = 0, skew = 0, with_bw = 0;
    double algbw = 0, busbw = 0;
  };
  std::map<trace::CollType, ByType> by_type;
  std::int64_t max_skew = 0;
  for (const CollectiveTiming& t : c.calls) {
    ByType& b = by_type[m.matches.coll_type[t.match]];
    ++b.count;
    b.bytes += std::max<std::int64_t>(0, t.bytes);
    b.time += t.time_ns;
    b.skew += t.arrival_skew_ns;
    if (t.algbw_gbps > 0) b.algbw += t.algbw_gbps, b.busbw += t.busbw_gbps, ++b.with_bw;
    max_skew = std::max(max_skew, t.arrival_skew_ns);
  }
  json types = json::array();
  for (const auto& [type, b] : by_type) {
    const double n = static_cast<double>(b.count);
    json row = {{"type", trace::toString(type)},
                {"count", b.count},
                {"bytes", b.bytes},
                {"mean_time_us", us(b.time) / n},
                {"mean_arrival_skew_us", us(b.skew) / n}};
    row["mean_algbw_gbps"] = b.with_bw > 0 ? json(b.algbw / static_cast<double>(b.with_bw)) : json(nullptr);
    row["mean_busbw_gbps"] = b.with_bw > 0 ? json(b.busbw / static_cast<double>(b.with_bw)) : json(nullptr);
    types.push_back(row);
  }
  out["by_type"] = types;
  out["max_arrival_skew_us"] = us(max_skew);
  json stragglers = json::array();
  std::vector<Index> order;
  for (Index r = 0; r < c.ranks.size(); ++r)
    if (c.ranks[r].times_last > 0) order.push_back(r);
  std::sort(order.begin(), order.end(), [&](Index x, Index y) { return c.ranks[x].lateness_ns > c.ranks[y].lateness_ns; });
  for (Index r : order)
    stragglers.push_back({{"rank", m.ranks[r].rank},
                          {"times_last", c.ranks[r].times_last},
                          {"lateness_ms", ms(c.ranks[r].lateness_ns)},
                          {"wait_caused_ms", ms(c.ranks[r].wait_caused_ns)}});
  out["stragglers"] = stragglers;
  if (!order.empty())
    out["straggler"] = {{"rank", m.ranks[order[0]].rank},
                        {"times_last", c.ranks[order[0]].times_last},
                        {"lateness_ms", ms(c.ranks[order[0]].lateness_ns)},
                        {"share_of_complete_collectives",
                         c.complete > 0 ? static_cast<double>(c.ranks[order[0]].times_last) / static_cast<double>(c.complete) : 0.0}};
  else
    out["straggler"] = nullptr;
  return out;
}

json clockJson(const ClockAlignment& c) {
  json hosts = json::array();
  for (const HostClock& h : c.hosts) {
    json ranks = json::array();
    for (auto r : h.ranks) ranks.push_back(r);
    hosts.push_back({{"host", h.host},
                     {"rank_rows", ranks},
                     {"realtime_offset_ns", h.realtime_offset_ns},
                     {"refinement_ns", h.refinement_ns},
                     {"samples", h.samples}});
  }
  return {{"refined", c.refined},
          {"hosts", hosts},
          {"collectives_used", c.collectives_used},
          {"collectives_measured", c.collectives_measured},
          {"residual_before_median_us", us(c.residual_before_median_ns)},
          {"residual_before_max_us", us(c.residual_before_max_ns)},
          {"residual_median_us", us(c.residual_median_ns)},
          {"residual_max_us", us(c.residual_max_ns)}};
}

}  // namespace

json analysisToJson(const RunModel& m, const Analysis& a, const ReportOptions& options) {
  json doc;
  doc["schema"] = kAnalysisJsonSchema;
  std::set<std::string> hosts;
  for (const RankInfo& r : m.ranks) hosts.insert(r.host);
  doc["run"] = {{"directory", options.run_dir}, {"ranks", m.ranks.size()}, {"hosts", hosts}, {"ops", a.run_ops},
                {"api_calls", a.run_api_calls}};
  doc["iterations_source"] = toString(a.iterations.source);
  doc["iteration_marker"] = a.iterations.source == IterationSource::Markers ? json(a.iterations.marker) : json(nullptr);
  if (a.iterations.source == IterationSource::Pattern) doc["pattern_length"] = a.iterations.pattern_length;
  doc["iteration_notes"] = a.iterations.notes;

  json ranks = json::array();
  for (const RankSummary& s : a.ranks) {
    const RankInfo& info = m.ranks[s.rank];
    json r = {{"rank", info.rank}, {"host", info.host}, {"store", info.store_path}, {"iterations", s.iterations}};
    r.update(timeFields(s.mean));
    r["overlap_ratio"] = s.total.overlapRatio();  // over all its iterations, not a mean of ratios
    r["collective_wait_ms"] = ms(s.collective_wait_ns);
    r["temporal_breakdown"] = temporalBreakdown(s.mean);
    r["kernel_types"] = kernelTypes(s.kernel_types);
    json streams = json::array();
    for (const StreamIdle& st : s.streams) {
      const StreamInfo& si = m.streams[st.stream];
      streams.push_back({{"stream", si.handle},
                         {"device", si.device},
                         {"name", m.str(si.name)},
                         {"ops", st.ops},
                         {"busy_ms", ms(st.busy_ns)},
                         {"idle_ms", ms(st.idleNs())},
                         {"host_wait_ms", ms(st.host_wait_ns)},
                         {"kernel_wait_ms", ms(st.kernel_wait_ns)},
                         {"other_ms", ms(st.other_ns)}});
    }
    r["streams"] = streams;
    r["collectives"] = {{"count", s.collectives.collectives},
                        {"times_last", s.collectives.times_last},
                        {"lateness_ms", ms(s.collectives.lateness_ns)},
                        {"wait_caused_ms", ms(s.collectives.wait_caused_ns)},
                        {"wait_ms", ms(s.collectives.wait_ns)}};
    ranks.push_back(r);
  }
  doc["ranks"] = ranks;

  std::int64_t total_overlapped = 0, total_comm = 0, with_iterations = 0;
  for (const RankSummary& s : a.ranks) {
    total_overlapped += s.total.overlapped_communication_ns;
    total_comm += s.total.communication_ns;
    with_iterations += s.iterations > 0;
  }
  json agg = timeFields(a.aggregate);
  agg["overlap_ratio"] = total_comm > 0 ? static_cast<double>(total_overlapped) / static_cast<double>(total_comm) : 0.0;
  agg["collective_wait_ms"] = ms(a.aggregate_collective_wait_ns);
  agg["ranks"] = with_iterations;
  agg["temporal_breakdown"] = temporalBreakdown(a.aggregate);
  agg["kernel_types"] = kernelTypes(a.kernel_types);
  doc["aggregate"] = agg;

  const std::int64_t origin = m.beginNs();
  json iterations = json::array();
  for (std::int64_t number : a.iterations.numbers) {
    const auto [start, end] = a.iterationSpan(number);
    json it = {{"iteration", number}, {"start_ms", ms(start - origin)}, {"duration_ms", ms(end - start)}};
    json rows = json::array();
    for (const RankIterationMetrics* row : a.iteration(number)) {
      json r = {{"rank", m.ranks[row->rank].rank}, {"start_ms", ms(row->window.start - origin)}};
      r.update(timeFields(row->time));
      r["collective_wait_ms"] = ms(row->collective_wait_ns);
      rows.push_back(r);
    }
    it["ranks"] = rows;
    for (const CriticalPath& p : a.critical_paths)
      if (p.iteration == number)
        it["critical_path"] = {{"length_ms", ms(p.length())}, {"segments", p.segments.size()}, {"attribution", attribution(p.attribution, 1.0)}};
    iterations.push_back(it);
  }
  doc["iterations"] = iterations;
  doc["critical_path"] = criticalPathSummary(m, a, options);

  json kernels = json::array();
  for (std::size_t i = 0; i < a.kernels.size() && i < options.top_kernels; ++i) {
    const KernelStat& k = a.kernels[i];
    kernels.push_back({{"name", m.str(k.name)},
                       {"type", toString(k.op_class)},
                       {"count", k.count},
                       {"total_ms", ms(k.total_ns)},
                       {"mean_us", k.mean_ns / 1e3},
                       {"min_us", us(k.min_ns)},
                       {"max_us", us(k.max_ns)},
                       {"stddev_us", k.stddev_ns / 1e3},
                       {"ranks", k.ranks}});
  }
  doc["kernels"] = {{"distinct", a.kernels.size()}, {"top", kernels}};
  doc["collectives"] = collectivesSummary(m, a);
  doc["clock_alignment"] = clockJson(m.clock);
  json diags = json::array();
  for (const trace::DiagnosticRow& d : m.diagnostics)
    diags.push_back({{"severity", trace::toString(d.severity)}, {"source", d.source}, {"message", d.message}, {"count", d.count}});
  doc["diagnostics"] = diags;
  return doc;
}

}  // namespace syncopate::analyzer
