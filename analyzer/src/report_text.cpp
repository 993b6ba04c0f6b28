// The terminal summary of an analysis: the headline numbers first, then tables.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "syncopate/analyzer/report.hpp"
#include "units.hpp"

namespace syncopate::analyzer {

namespace {

double pct(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string shortName(std::string_view name, std::size_t width) {
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width - 3)) + "...";
}

// Which collectives the exposed time is, when it is not all all-reduce (a sharded job's
// all-gathers before forward and reduce-scatters after backward).
void exposedByCollective(std::string& out, const TimeBreakdown& t) {
  const auto& by = t.exposed_by_collective_ns;
  if (by[static_cast<std::size_t>(CollectiveGroup::AllReduce)] == t.exposed_communication_ns) return;
  static constexpr const char* kLabels[kCollectiveGroups] = {"all-reduce", "reduce-scatter", "all-gather", "other"};
  for (std::size_t g = 0; g < kCollectiveGroups; ++g) {
    if (by[g] == 0) continue;
    out += fmt::format("      {:<19} {:>10.3f} ms  {:5.1f}%\n", kLabels[g], ms(by[g]), pct(by[g], t.window_ns));
  }
}

void headline(std::string& out, const RunModel& m, const Analysis& a, const ReportOptions& o) {
  std::set<std::string> hosts;
  for (const RankInfo& r : m.ranks) hosts.insert(r.host);
  std::string source;
  switch (a.iterations.source) {
    case IterationSource::Markers: source = a.iterations.marker + " markers"; break;
    case IterationSource::Pattern: source = fmt::format("the repeating op pattern ({} ops)", a.iterations.pattern_length); break;
    case IterationSource::WholeRun: source = "no markers or pattern: whole recording"; break;
  }
  out += fmt::format("Run {}: {} rank(s) on {} host(s), {} ops; {} iteration(s) from {}\n\n", o.run_dir, m.ranks.size(),
                     hosts.size(), a.run_ops, a.iterations.numbers.size(), source);
  if (a.run_ops == 0) out += "No GPU op was recorded in this run: there is nothing to measure.\n\n";
  const TimeBreakdown& t = a.aggregate;
  out += fmt::format("Per iteration (mean over ranks)\n");
  out += fmt::format("  iteration time          {:>10.3f} ms\n", ms(t.window_ns));
  out += fmt::format("  compute                 {:>10.3f} ms  {:5.1f}%\n", ms(t.compute_ns), pct(t.compute_ns, t.window_ns));
  out += fmt::format("  communication           {:>10.3f} ms  {:5.1f}%\n", ms(t.communication_ns), pct(t.communication_ns, t.window_ns));
  out += fmt::format("    hidden behind compute {:>10.3f} ms  (overlap ratio {:.2f})\n", ms(t.overlapped_communication_ns),
                     t.overlapRatio());
  out += fmt::format("    exposed               {:>10.3f} ms  {:5.1f}%\n", ms(t.exposed_communication_ns),
                     pct(t.exposed_communication_ns, t.window_ns));
  exposedByCollective(out, t);
  out += fmt::format("  memory ops              {:>10.3f} ms\n", ms(t.memory_ns));
  out += fmt::format("  idle                    {:>10.3f} ms  {:5.1f}%\n", ms(t.idle_ns), pct(t.idle_ns, t.window_ns));
  out += fmt::format("  waiting in collectives  {:>10.3f} ms\n\n", ms(a.aggregate_collective_wait_ns));
}

void criticalPath(std::string& out, const Analysis& a) {
  if (a.critical_paths.empty()) return;
  std::array<std::int64_t, kPathCategories> total{};
  std::int64_t length = 0;
  for (const CriticalPath& p : a.critical_paths) {
    length += p.length();
    for (std::size_t c = 0; c < kPathCategories; ++c) total[c] += p.attribution[c];
  }
  out += fmt::format("Critical path (mean {:.3f} ms over {} iteration(s))\n", ms(length) / static_cast<double>(a.critical_paths.size()),
                     a.critical_paths.size());
  std::vector<std::size_t> order(kPathCategories);
  for (std::size_t c = 0; c < kPathCategories; ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return total[x] > total[y]; });
  for (std::size_t c : order) {
    if (total[c] == 0) continue;
    out += fmt::format("  {:<24}{:>6.1f}%\n", toString(static_cast<PathCategory>(c)), pct(total[c], length));
  }
  out += "\n";
}

void stragglers(std::string& out, const RunModel& m, const Analysis& a) {
  const CollectiveAnalysis& c = a.collectives;
  if (c.calls.empty()) return;
  out += fmt::format("Collectives: {} matched across ranks ({} complete, {} with ranks missing)\n", c.calls.size(), c.complete,
                     c.partial);
  Index worst = kNone;
  for (Index r = 0; r < c.ranks.size(); ++r)
    if (c.ranks[r].times_last > 0 && (worst == kNone || c.ranks[r].lateness_ns > c.ranks[worst].lateness_ns)) worst = r;
  if (worst != kNone) {
    const auto& s = c.ranks[worst];
    out += fmt::format("  straggler: rank {} arrived last in {} of {} complete collectives, {:.3f} ms late in total "
                       "(others waited {:.3f} ms for it)\n",
                       m.ranks[worst].rank, s.times_last, c.complete, ms(s.lateness_ns), ms(s.wait_caused_ns));
  }
  out += "\n";
}

void rankTable(std::string& out, const RunModel& m, const Analysis& a) {
  out += fmt::format("{:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>10} {:>10}\n", "rank", "iters", "iter ms",
                     "compute", "comm", "hidden", "exposed", "overlap", "idle", "coll.wait");
  for (const RankSummary& s : a.ranks) {
    const TimeBreakdown& t = s.mean;
    out += fmt::format("{:>5} {:>6} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>7.2f} {:>10.3f} {:>10.3f}\n",
                       m.ranks[s.rank].rank, s.iterations, ms(t.window_ns), ms(t.compute_ns), ms(t.communication_ns),
                       ms(t.overlapped_communication_ns), ms(t.exposed_communication_ns), s.total.overlapRatio(),
                       ms(t.idle_ns), ms(s.collective_wait_ns));
  }
  out += "\n";
}

void kernelTable(std::string& out, const RunModel& m, const Analysis& a, std::size_t top) {
  if (a.kernels.empty()) return;
  out += fmt::format("Top ops by total time (all ranks)\n{:>10} {:>8} {:>10}  {:<13} {}\n", "total ms", "count", "mean us",
                     "type", "name");
  for (std::size_t i = 0; i < a.kernels.size() && i < top; ++i) {
    const KernelStat& k = a.kernels[i];
    out += fmt::format("{:>10.3f} {:>8} {:>10.2f}  {:<13} {}\n", ms(k.total_ns), k.count, k.mean_ns / 1e3,
                       toString(k.op_class), shortName(m.str(k.name), 90));
  }
  out += "\n";
}

void clockAndDiagnostics(std::string& out, const RunModel& m) {
  const ClockAlignment& c = m.clock;
  if (c.hosts.size() > 1 || c.collectives_measured > 0) {
    out += fmt::format("Clocks: {} host(s){}; collective end times agree within {:.1f} us (median; max {:.1f} us)", c.hosts.size(),
                       c.refined ? ", refined from collectives" : "", c.residual_median_ns / 1e3, c.residual_max_ns / 1e3);
    if (c.refined) out += fmt::format(", {:.1f} us before refinement", c.residual_before_median_ns / 1e3);
    out += "\n";
  }
  std::int64_t warnings = 0;
  for (const trace::DiagnosticRow& d : m.diagnostics) warnings += d.severity != trace::Severity::Info;
  if (!m.diagnostics.empty()) {
    out += fmt::format("Diagnostics ({} warning(s) or error(s)):\n", warnings);
    for (const trace::DiagnosticRow& d : m.diagnostics)
      out += fmt::format("  [{}] {}: {}{}\n", trace::toString(d.severity), d.source, d.message,
                         d.count > 1 ? fmt::format(" (x{})", d.count) : std::string());
  }
}

}  // namespace

std::string analysisToText(const RunModel& m, const Analysis& a, const ReportOptions& o) {
  std::string out;
  headline(out, m, a, o);
  criticalPath(out, a);
  stragglers(out, m, a);
  rankTable(out, m, a);
  kernelTable(out, m, a, o.top_kernels);
  for (const std::string& note : a.iterations.notes) out += "Note: " + note + "\n";
  clockAndDiagnostics(out, m);
  return out;
}

}  // namespace syncopate::analyzer
