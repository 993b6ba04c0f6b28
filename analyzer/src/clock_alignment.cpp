#include "syncopate/analyzer/clock_alignment.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "diagnostic_row.hpp"
#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::analyzer {

namespace {

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const std::int64_t upper = *mid;
  const std::int64_t lower = *std::max_element(v.begin(), mid);
  return lower + (upper - lower) / 2;
}

// One complete collective: the end time and host of each participant.
struct Sample {
  std::vector<std::int64_t> end;
  std::vector<Index> host;
};

std::pair<std::int64_t, std::int64_t> spread(const std::vector<Sample>& samples,
                                             const std::vector<std::int64_t>& delta) {
  std::vector<std::int64_t> spreads;
  spreads.reserve(samples.size());
  for (const Sample& s : samples) {
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t i = 0; i < s.end.size(); ++i) {
      lo = std::min(lo, s.end[i] + delta[s.host[i]]);
      hi = std::max(hi, s.end[i] + delta[s.host[i]]);
    }
    spreads.push_back(hi - lo);
  }
  if (spreads.empty()) return {0, 0};
  return {median(spreads), *std::max_element(spreads.begin(), spreads.end())};
}

// The cross-host samples, with each sample's participants grouped by host, so that the mean of
// the other hosts' end times is the sample's totals less the host's own group, rather than a
// pass over every participant or every other host (which, with a call on every host, made each
// Gauss-Seidel round hosts² × calls). The totals follow the hosts' moves (move()).
// End times are wall-clock ns (about 1.8e18): summed as they are, six of them overflow, so each
// sum is of distances from the sample's first end time (`origin`).
class HostGroupedSamples {
 public:
  explicit HostGroupedSamples(std::size_t hosts) : of_host_(hosts), group_at_(hosts, kNone) {}

  void add(const Sample& s) {
    const std::size_t first_group = groups_.size();
    for (std::size_t i = 0; i < s.end.size(); ++i) {
      Index& g = group_at_[s.host[i]];
      if (g == kNone) g = static_cast<Index>(groups_.size()), groups_.push_back({s.host[i], 0, 0, 0, 0});
      ++groups_[g].count, groups_[g].sum += s.end[i] - s.end[0];
    }
    // Each group's end times, contiguous.
    std::size_t at = ends_.size();
    for (std::size_t g = first_group; g < groups_.size(); ++g) {
      groups_[g].first_end = at, at += static_cast<std::size_t>(groups_[g].count);
      of_host_[groups_[g].host].push_back({samples_.size(), g});
    }
    ends_.resize(at);
    for (std::size_t i = 0; i < s.end.size(); ++i) {
      Group& g = groups_[group_at_[s.host[i]]];
      ends_[g.first_end + g.filled++] = s.end[i];
    }
    for (std::size_t i = 0; i < s.end.size(); ++i) group_at_[s.host[i]] = kNone;
    GroupedSample out{s.end[0], 0, s.host[0], s.host[0], first_group, groups_.size() - first_group, 0, 0, 0};
    for (std::size_t g = first_group; g < groups_.size(); ++g) out.sum += groups_[g].sum, out.count += groups_[g].count;
    for (std::size_t i = 0; i < s.end.size() && out.alt_host == out.first_host; ++i)
      if (s.host[i] != out.first_host) out.alt_host = s.host[i], out.alt_rel = s.end[i] - s.end[0];
    samples_.push_back(out);
  }

  // Each end time of host `h`'s ranks subtracted from the mean end time of the other hosts'
  // ranks in the same collective (hosts moved by `delta`): where `h` agrees with them.
  std::vector<std::int64_t> votes(Index h, const std::vector<std::int64_t>& delta) const {
    std::vector<std::int64_t> out;
    for (const auto& [sample, own] : of_host_[h]) {
      const GroupedSample& s = samples_[sample];
      const Group& mine = groups_[own];
      // The other groups' (sum + count * their host's delta), summed: the same integers as a
      // pass over them.
      const std::int64_t sum = s.sum - mine.sum + s.moved - mine.count * delta[h];
      const std::int64_t n = s.count - mine.count;
      if (n == 0) continue;
      // Relative to the first end time of another host, as a plain pass over the participants
      // takes it, so that the rounding of the mean is the same.
      const std::int64_t base = h != s.first_host ? delta[s.first_host] : s.alt_rel + delta[s.alt_host];
      const std::int64_t others = s.origin + base + (sum - n * base) / n;
      for (std::size_t e = mine.first_end; e < mine.first_end + mine.count; ++e) out.push_back(others - ends_[e]);
    }
    return out;
  }

  // Host `h`'s delta moved from `from` to `to`: the totals of its samples follow.
  void move(Index h, std::int64_t from, std::int64_t to) {
    for (const auto& [sample, own] : of_host_[h]) samples_[sample].moved += groups_[own].count * (to - from);
  }

 private:
  struct Group {
    Index host;
    std::int64_t count, sum;  // sum: of end - origin
    std::size_t first_end, filled;
  };
  struct GroupedSample {
    std::int64_t origin, alt_rel;  // alt: the first participant not on first_host
    Index first_host, alt_host;
    std::size_t first_group, group_count;
    std::int64_t sum, count;  // over its groups
    std::int64_t moved;       // over its groups: count * its host's delta
  };
  std::vector<GroupedSample> samples_;
  std::vector<Group> groups_;
  std::vector<std::int64_t> ends_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> of_host_;  // (sample, its group of that host)
  std::vector<Index> group_at_;  // scratch for add(): the group of each host in the sample
};

}  // namespace

void shiftRank(RunModel& m, Index rank, std::int64_t d) {
  if (d == 0) return;
  RankInfo& r = m.ranks[rank];
  r.to_aligned_ns += d;
  if (r.recording_start_ns != 0 || r.recording_end_ns != 0) r.recording_start_ns += d, r.recording_end_ns += d;
  for (Index i = r.first_op; i < r.first_op + r.op_count; ++i) m.ops.start[i] += d, m.ops.end[i] += d;
  for (Index t = r.first_thread; t < r.first_thread + r.thread_count; ++t) {
    const ThreadInfo& th = m.threads[t];
    for (Index i = th.first_call; i < th.first_call + th.call_count; ++i) m.api_calls.start[i] += d, m.api_calls.end[i] += d;
  }
  for (Index i = r.first_host_sync; i < r.first_host_sync + r.host_sync_count; ++i)
    m.host_syncs.start[i] += d, m.host_syncs.end[i] += d;
  for (Index i = r.first_range; i < r.first_range + r.range_count; ++i) m.ranges.start[i] += d, m.ranges.end[i] += d;
}

ClockAlignment alignClocks(RunModel& m, const ClockAlignmentOptions& options) {
  ClockAlignment out;
  // Hosts, in the order of their lowest rank (so hosts[0] holds rank 0).
  std::map<std::string, Index> host_of_name;
  std::vector<Index> host_of_rank(m.ranks.size());
  for (Index r = 0; r < m.ranks.size(); ++r) {
    const std::string name = m.ranks[r].host.empty() ? "rank " + std::to_string(m.ranks[r].rank) : m.ranks[r].host;
    auto [it, added] = host_of_name.emplace(name, static_cast<Index>(out.hosts.size()));
    if (added) out.hosts.push_back({name, {}, 0, 0, 0});
    host_of_rank[r] = it->second;
    out.hosts[it->second].ranks.push_back(r);
  }
  for (HostClock& h : out.hosts) {
    std::vector<std::int64_t> offsets;
    for (Index r : h.ranks) offsets.push_back(m.ranks[r].realtime_offset_ns);
    h.realtime_offset_ns = median(offsets);
  }

  // End times of complete collectives, on the realtime axis.
  std::vector<Sample> measured;
  HostGroupedSamples cross_host(out.hosts.size());
  std::size_t cross_host_count = 0;
  for (Index k = 0; k < m.matches.size(); ++k) {
    if (!m.matches.complete(k) || m.matches.count[k] < 2) continue;
    Sample s;
    for (Index row : m.matches.of(k)) {
      const Index op = m.collectives.op[row];
      const Index rank = m.rankOfOp(op);
      s.host.push_back(host_of_rank[rank]);
      s.end.push_back(m.ops.end[op] - m.ranks[rank].to_aligned_ns + out.hosts[host_of_rank[rank]].realtime_offset_ns);
    }
    const bool spans_hosts = std::any_of(s.host.begin(), s.host.end(), [&](Index h) { return h != s.host[0]; });
    if (spans_hosts) cross_host.add(s), ++cross_host_count;
    measured.push_back(std::move(s));
  }
  out.collectives_measured = measured.size();
  out.collectives_used = cross_host_count;

  std::vector<std::int64_t> delta(out.hosts.size(), 0);
  std::tie(out.residual_before_median_ns, out.residual_before_max_ns) = spread(measured, delta);
  if (options.refine && out.hosts.size() > 1) {
    // Gauss-Seidel on medians: each host moves to where its ranks' end times agree best with
    // the other hosts' current estimates. The reference host stays put.
    for (int iteration = 0; iteration < 100; ++iteration) {
      std::int64_t moved = 0;
      for (Index h = 1; h < out.hosts.size(); ++h) {
        std::vector<std::int64_t> votes = cross_host.votes(h, delta);
        out.hosts[h].samples = votes.size();
        if (votes.size() < options.min_samples) continue;
        const std::int64_t next = median(std::move(votes));
        moved = std::max(moved, std::abs(next - delta[h]));
        cross_host.move(h, delta[h], next);
        delta[h] = next;
      }
      if (moved <= 1) break;
    }
    for (Index h = 1; h < out.hosts.size(); ++h) {
      if (out.hosts[h].samples >= options.min_samples) {
        out.hosts[h].refinement_ns = delta[h];
        out.refined = true;
      } else {
        delta[h] = 0;
        const std::size_t n = out.hosts[h].samples;
        const std::string& host = out.hosts[h].host;
        m.addDiagnostic(n == 0 ? diagnosticRow<trace::diagnostics::clock_host_unjoined>("clock-alignment", 1, host)
                               : diagnosticRow<trace::diagnostics::clock_host_few_collectives>("clock-alignment", 1, host, n));
      }
    }
  }
  std::tie(out.residual_median_ns, out.residual_max_ns) = spread(measured, delta);

  // Each rank's rows are its own: ranks are shifted side by side.
  parallelFor(m.ranks.size(), [&](std::size_t r) {
    const HostClock& h = out.hosts[host_of_rank[r]];
    shiftRank(m, static_cast<Index>(r), h.realtime_offset_ns + h.refinement_ns);
  });
  m.clock = out;
  return out;
}

}  // namespace syncopate::analyzer
