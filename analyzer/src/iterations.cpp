#include "syncopate/analyzer/iterations.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <unordered_map>

#include "issue_order.hpp"
#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::analyzer {

namespace {

constexpr std::string_view kDefaultMarker = "ProfilerStep";
// A profiler that stops mid-step closes the step's range at the end of the recording; such a
// step is cut and left out (HTA leaves out the last step for the same reason).
constexpr std::int64_t kCutTolerance = 1'000'000;

struct Marker {
  std::int64_t start, end, number;
};

bool isBusy(OpClass c) { return c != OpClass::Marker; }

// The outermost marker ranges of one rank, in time order.
std::vector<Marker> markersOf(const RunModel& m, Index rank, std::string_view marker) {
  std::vector<Marker> all;
  const RankInfo& r = m.ranks[rank];
  for (Index i = r.first_range; i < r.first_range + r.range_count; ++i) {
    if (m.ranges.thread[i] == kNone) continue;  // GPU-side annotations are not steps
    std::int64_t number = -1;
    if (!isIterationMarker(m.str(m.ranges.name[i]), marker, &number)) continue;
    all.push_back({m.ranges.start[i], m.ranges.end[i], number});
  }
  std::sort(all.begin(), all.end(), [](const Marker& a, const Marker& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<Marker> outer;
  for (const Marker& mk : all)
    if (outer.empty() || mk.start >= outer.back().end) outer.push_back(mk);
  return outer;
}

// Window of each iteration from its member ops: [first start, next iteration's first start).
void setWindows(std::vector<RankIteration>& its, const std::vector<std::int64_t>& first_start,
                const std::vector<std::int64_t>& last_end, const std::vector<bool>& adjacent_to_next) {
  for (std::size_t i = 0; i < its.size(); ++i) {
    RankIteration& it = its[i];
    if (it.op_count == 0) {  // no GPU work: the GPU was idle for the whole step
      it.start = it.host_start;
      it.end = it.host_end;
      continue;
    }
    it.start = first_start[i];
    const bool next_has_ops = i + 1 < its.size() && its[i + 1].op_count > 0;
    it.end = (adjacent_to_next[i] && next_has_ops) ? std::max(first_start[i], first_start[i + 1]) : last_end[i];
  }
}

std::vector<RankIteration> fromMarkers(const RunModel& m, const std::vector<Marker>& markers,
                                       const std::vector<Index>& issue_order, const std::vector<std::int64_t>& issued) {
  std::vector<RankIteration> its(markers.size());
  std::vector<std::int64_t> first_start(markers.size(), INT64_MAX), last_end(markers.size(), INT64_MIN);
  for (std::size_t i = 0; i < markers.size(); ++i) {
    its[i].number = markers[i].number;
    its[i].host_start = markers[i].start;
    its[i].host_end = markers[i].end;
  }
  for (std::size_t k = 0; k < issue_order.size(); ++k) {
    const Index op = issue_order[k];
    if (!isBusy(m.ops.op_class[op])) continue;
    const std::int64_t t = issued[k];
    auto it = std::upper_bound(markers.begin(), markers.end(), t, [](std::int64_t v, const Marker& mk) { return v < mk.start; });
    if (it == markers.begin()) continue;
    const auto i = static_cast<std::size_t>(it - markers.begin()) - 1;
    if (t >= markers[i].end) continue;  // launched between steps
    ++its[i].op_count;
    first_start[i] = std::min(first_start[i], m.ops.start[op]);
    last_end[i] = std::max(last_end[i], m.ops.end[op]);
  }
  std::vector<bool> adjacent(markers.size(), false);
  for (std::size_t i = 0; i + 1 < markers.size(); ++i) adjacent[i] = markers[i + 1].number == markers[i].number + 1;
  setWindows(its, first_start, last_end, adjacent);
  return its;
}

// The smallest p with seq[i] == seq[i + p] for (almost) all i, or 0. Exact periods come from
// the prefix function; with noise (an op that appears in some iterations only), the distances
// between repeats of each op are the candidates and at most 10% of positions may disagree.
std::size_t findPeriod(const std::vector<StringId>& seq) {
  const std::size_t n = seq.size();
  if (n < 4) return 0;
  std::vector<std::size_t> pi(n, 0);
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t k = pi[i - 1];
    while (k > 0 && seq[i] != seq[k]) k = pi[k - 1];
    if (seq[i] == seq[k]) ++k;
    pi[i] = k;
  }
  const std::size_t exact = n - pi[n - 1];
  if (2 * exact <= n) return exact;

  // Ops that run once per iteration repeat at the iteration's period; ops inside repeated
  // layers repeat more often and at the layer's period, which must not be mistaken for it. So
  // the candidates are the repeat distances of the rarest repeating ops (those seen the fewest
  // times, or once more for a partial iteration at the edge), and the winner is the candidate
  // whose shifted sequence disagrees least with itself.
  std::unordered_map<StringId, std::size_t> occurrences;
  for (StringId s : seq) ++occurrences[s];
  std::size_t rarest = SIZE_MAX;
  for (const auto& [name, count] : occurrences)
    if (count >= 2) rarest = std::min(rarest, count);
  if (rarest == SIZE_MAX) return 0;
  std::unordered_map<StringId, std::size_t> last_seen;
  std::map<std::size_t, std::size_t> distance_count;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t count = occurrences[seq[i]];
    if (count < rarest || count > rarest + 1) continue;
    auto [it, added] = last_seen.emplace(seq[i], i);
    if (!added) {
      const std::size_t d = i - it->second;
      if (2 * d <= n) ++distance_count[d];
      it->second = i;
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> candidates(distance_count.begin(), distance_count.end());
  std::sort(candidates.begin(), candidates.end(), [](auto a, auto b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (candidates.size() > 16) candidates.resize(16);
  std::size_t best = 0;
  double best_rate = 0.2;  // at most a fifth of the positions may disagree
  std::sort(candidates.begin(), candidates.end());  // smallest period first wins ties
  for (const auto& [p, count] : candidates) {
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i + p < n; ++i) mismatches += seq[i] != seq[i + p];
    const double rate = static_cast<double>(mismatches) / static_cast<double>(n - p);
    if (rate < best_rate - 0.01 || (best == 0 && rate <= best_rate)) best = p, best_rate = rate;
  }
  return best;
}

std::vector<RankIteration> fromPattern(const RunModel& m, const std::vector<Index>& issue_order,
                                       const std::vector<std::int64_t>& issued, std::size_t* period_out) {
  std::vector<Index> ops;
  std::vector<std::int64_t> host;
  for (std::size_t k = 0; k < issue_order.size(); ++k) {
    if (!isBusy(m.ops.op_class[issue_order[k]])) continue;
    ops.push_back(issue_order[k]);
    host.push_back(issued[k]);
  }
  std::vector<StringId> seq(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) seq[i] = m.ops.name[ops[i]];
  const std::size_t p = findPeriod(seq);
  *period_out = p;
  if (p == 0) return {};
  // Iterations start at an op that runs once per iteration: the one the GPU waited longest
  // before (data loading and the optimizer's host work sit between iterations). Starting each
  // iteration at that op's occurrences, rather than every p ops, keeps the boundaries right
  // when an iteration holds an extra op.
  std::unordered_map<StringId, std::size_t> occurrences;
  for (StringId id : seq) ++occurrences[id];
  const std::size_t per_iteration = std::max<std::size_t>(2, seq.size() / p);
  std::unordered_map<StringId, std::int64_t> wait_before;
  std::int64_t busy_until = INT64_MIN;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::size_t count = occurrences[seq[i]];
    if (busy_until != INT64_MIN && count + 1 >= per_iteration && count <= per_iteration + 1)
      wait_before[seq[i]] += std::max<std::int64_t>(0, m.ops.start[ops[i]] - busy_until);
    busy_until = std::max(busy_until, m.ops.end[ops[i]]);
  }
  StringId anchor = seq[0];
  std::int64_t best = -1;
  for (std::size_t i = 0; i < seq.size(); ++i) {  // first occurrence order breaks ties
    auto it = wait_before.find(seq[i]);
    if (it != wait_before.end() && it->second > best) best = it->second, anchor = seq[i];
  }
  std::vector<std::size_t> bounds;
  for (std::size_t i = 0; i < seq.size(); ++i)
    if (seq[i] == anchor) bounds.push_back(i);
  // The part before the first anchor is a partial iteration; so is a short tail.
  if (!bounds.empty() && seq.size() - bounds.back() >= p) bounds.push_back(seq.size());
  std::vector<RankIteration> its;
  std::vector<std::int64_t> first_start, last_end;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    const std::size_t b = bounds[k], e = bounds[k + 1];
    RankIteration it;
    it.number = static_cast<std::int64_t>(its.size());
    it.op_count = static_cast<Index>(e - b);
    it.host_start = host[b];
    it.host_end = host[e - 1];
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t i = b; i < e; ++i) lo = std::min(lo, m.ops.start[ops[i]]), hi = std::max(hi, m.ops.end[ops[i]]);
    first_start.push_back(lo);
    last_end.push_back(hi);
    its.push_back(it);
  }
  setWindows(its, first_start, last_end, std::vector<bool>(its.size(), true));
  return its;
}

// Pattern iterations are numbered per rank from 0; shift each rank's numbers so that an
// iteration holding the same collective call has the same number everywhere.
void alignPatternNumbers(const RunModel& m, Iterations& out) {
  if (out.per_rank.empty()) return;
  auto iterationAt = [](const std::vector<RankIteration>& its, std::int64_t t) -> const RankIteration* {
    for (const RankIteration& it : its)
      if (t >= it.start && t < it.end) return &it;
    return nullptr;
  };
  const Index reference = 0;
  for (Index r = 1; r < out.per_rank.size(); ++r) {
    std::int64_t shift = 0;
    bool found = false;
    for (Index row = 0; row < m.collectives.size() && !found; ++row) {
      const Index match = m.collectives.match[row];
      if (match == kNone || m.rankOfOp(m.collectives.op[row]) != r) continue;
      const RankIteration* mine = iterationAt(out.per_rank[r], m.ops.start[m.collectives.op[row]]);
      if (!mine) continue;
      for (Index other : m.matches.of(match)) {
        const Index op = m.collectives.op[other];
        if (m.rankOfOp(op) != reference) continue;
        if (const RankIteration* theirs = iterationAt(out.per_rank[reference], m.ops.start[op])) {
          shift = theirs->number - mine->number;
          found = true;
        }
      }
    }
    for (RankIteration& it : out.per_rank[r]) it.number += shift;
  }
}

}  // namespace

bool isIterationMarker(std::string_view name, std::string_view marker, std::int64_t* number) {
  const bool default_marker = marker.empty();
  if (default_marker) marker = kDefaultMarker;
  if (!name.starts_with(marker)) return false;
  std::string_view rest = name.substr(marker.size());
  if (default_marker && !rest.starts_with('#')) return false;
  if (!rest.empty() && rest[0] != '#' && rest[0] != ' ') return false;
  *number = -1;
  if (rest.starts_with('#')) {
    rest.remove_prefix(1);
    std::int64_t n = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec == std::errc() && ptr != rest.data()) *number = n;
  }
  return true;
}

std::string_view toString(IterationSource s) {
  switch (s) {
    case IterationSource::Markers: return "markers";
    case IterationSource::Pattern: return "pattern";
    case IterationSource::WholeRun: return "whole_run";
  }
  return "?";
}

bool rankHasIterationMarkers(const RunModel& m, Index rank, const IterationOptions& options) {
  return !markersOf(m, rank, options.marker).empty();
}

RankIterationFacts rankIterations(const RunModel& m, Index r, const IterationOptions& options, bool any_marker) {
  RankIterationFacts out;
  out.has_ops = m.ranks[r].op_count > 0;
  std::vector<std::int64_t> issued;
  const std::vector<Index> order = issueOrder(m, r, &issued);
  if (any_marker) {
    std::vector<Marker> mk = markersOf(m, r, options.marker);
    // Numbers must increase with time, or they cannot name iterations across ranks.
    bool increasing = true;
    for (std::size_t i = 0; i < mk.size(); ++i)
      increasing &= mk[i].number >= 0 && (i == 0 || mk[i].number > mk[i - 1].number);
    if (!increasing) {
      for (std::size_t i = 0; i < mk.size(); ++i) mk[i].number = static_cast<std::int64_t>(i);
      out.notes.push_back("rank " + std::to_string(m.ranks[r].rank) +
                          ": step markers are not numbered in time order; they were numbered by position");
    }
    // A step the profiler cut at the end of the recording is left out.
    const std::int64_t rec_end = m.ranks[r].recording_end_ns;
    if (!mk.empty() && rec_end != 0 && mk.back().end >= rec_end - kCutTolerance && mk.size() > 1) {
      out.notes.push_back("rank " + std::to_string(m.ranks[r].rank) + ": step " + std::to_string(mk.back().number) +
                          " ends with the recording (cut by the profiler) and was left out");
      mk.pop_back();
    }
    out.iterations = fromMarkers(m, mk, order, issued);
  } else {
    std::size_t period = 0;
    out.iterations = fromPattern(m, order, issued, &period);
    out.period = static_cast<std::int64_t>(period);
  }
  // The rank's whole busy time, its one iteration should the run have neither markers nor a pattern.
  const RankInfo& info = m.ranks[r];
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (Index op = info.first_op; op < info.first_op + info.op_count; ++op) {
    if (!isBusy(m.ops.op_class[op])) continue;
    lo = std::min(lo, m.ops.start[op]);
    hi = std::max(hi, m.ops.end[op]);
    ++out.whole_run.op_count;
  }
  if (out.whole_run.op_count > 0) {
    out.whole_run.start = out.whole_run.host_start = lo;
    out.whole_run.end = out.whole_run.host_end = hi;
  }
  return out;
}

trace::Result<Iterations> combineRankIterations(const RunModel& m, const IterationOptions& options, bool any_marker,
                                                std::vector<RankIterationFacts> facts) {
  if (!any_marker && !options.marker.empty())
    return trace::failure("no rank has an NVTX range named '" + options.marker + "' (or '" + options.marker + "#N', '" +
                          options.marker + " ...'); check the name given to --iteration-marker");
  Iterations out;
  out.per_rank.resize(facts.size());
  for (RankIterationFacts& f : facts) {
    out.notes.insert(out.notes.end(), f.notes.begin(), f.notes.end());
    out.pattern_length = std::max(out.pattern_length, f.period);
  }
  for (std::size_t r = 0; r < facts.size(); ++r) out.per_rank[r] = std::move(facts[r].iterations);

  if (any_marker) {
    out.source = IterationSource::Markers;
    out.marker = options.marker.empty() ? std::string(kDefaultMarker) + "#N" : options.marker;
  } else {
    const bool all_found = std::all_of(out.per_rank.begin(), out.per_rank.end(),
                                       [&](const auto& its) { return !its.empty(); });
    const bool any_ops = std::any_of(facts.begin(), facts.end(), [](const RankIterationFacts& f) { return f.has_ops; });
    if (all_found && any_ops) {
      out.source = IterationSource::Pattern;
      alignPatternNumbers(m, out);
    } else {
      // No markers and no repeating pattern: the whole recording is one iteration.
      out.source = IterationSource::WholeRun;
      if (any_ops) out.notes.push_back("no step markers and no repeating op pattern: the whole recording is analysed as one iteration");
      for (std::size_t r = 0; r < facts.size(); ++r) {
        out.per_rank[r].clear();
        if (facts[r].whole_run.op_count > 0) out.per_rank[r].push_back(facts[r].whole_run);
      }
    }
  }
  for (const auto& its : out.per_rank)
    for (const auto& it : its) out.numbers.push_back(it.number);
  std::sort(out.numbers.begin(), out.numbers.end());
  out.numbers.erase(std::unique(out.numbers.begin(), out.numbers.end()), out.numbers.end());
  return out;
}

trace::Result<Iterations> detectIterations(const RunModel& m, const IterationOptions& options) {
  bool any_marker = false;
  for (Index r = 0; r < m.ranks.size() && !any_marker; ++r) any_marker = rankHasIterationMarkers(m, r, options);
  std::vector<RankIterationFacts> facts(m.ranks.size());
  parallelFor(facts.size(), [&](std::size_t r) { facts[r] = rankIterations(m, static_cast<Index>(r), options, any_marker); });
  return combineRankIterations(m, options, any_marker, std::move(facts));
}

}  // namespace syncopate::analyzer
