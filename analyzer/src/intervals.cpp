#include "syncopate/analyzer/intervals.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace syncopate::analyzer {

IntervalSet::IntervalSet(std::vector<Interval> disjoint_sorted) : iv_(std::move(disjoint_sorted)) {
  prefix_.resize(iv_.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < iv_.size(); ++i) prefix_[i] = total += iv_[i].length();
}

IntervalSet IntervalSet::unionOf(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
  if (!std::is_sorted(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; }))
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[i].start <= v[out - 1].end) {
      v[out - 1].end = std::max(v[out - 1].end, v[i].end);
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
  return IntervalSet(std::move(v));
}

IntervalSet IntervalSet::intersect(const IntervalSet& o) const {
  std::vector<Interval> r;
  std::size_t i = 0, j = 0;
  while (i < iv_.size() && j < o.iv_.size()) {
    const std::int64_t s = std::max(iv_[i].start, o.iv_[j].start);
    const std::int64_t e = std::min(iv_[i].end, o.iv_[j].end);
    if (s < e) r.push_back({s, e});
    (iv_[i].end < o.iv_[j].end) ? ++i : ++j;
  }
  return IntervalSet(std::move(r));
}

IntervalSet IntervalSet::subtract(const IntervalSet& o) const {
  std::vector<Interval> r;
  std::size_t j = 0;
  for (const Interval& a : iv_) {
    std::int64_t cur = a.start;
    while (j < o.iv_.size() && o.iv_[j].end <= cur) ++j;
    std::size_t k = j;
    while (k < o.iv_.size() && o.iv_[k].start < a.end) {
      if (o.iv_[k].start > cur) r.push_back({cur, o.iv_[k].start});
      cur = std::max(cur, o.iv_[k].end);
      if (o.iv_[k].end >= a.end) break;
      ++k;
    }
    if (cur < a.end) r.push_back({cur, a.end});
  }
  return IntervalSet(std::move(r));
}

IntervalSet IntervalSet::unite(const IntervalSet& o) const {
  std::vector<Interval> all;
  all.reserve(iv_.size() + o.iv_.size());
  std::merge(iv_.begin(), iv_.end(), o.iv_.begin(), o.iv_.end(), std::back_inserter(all),
             [](const Interval& a, const Interval& b) { return a.start < b.start; });
  return unionOf(std::move(all));
}

std::int64_t IntervalSet::measure(std::int64_t a, std::int64_t b) const {
  if (b <= a || iv_.empty()) return 0;
  // First interval ending after a, first interval starting at or after b.
  auto lo = std::partition_point(iv_.begin(), iv_.end(), [&](const Interval& i) { return i.end <= a; });
  auto hi = std::partition_point(lo, iv_.end(), [&](const Interval& i) { return i.start < b; });
  if (lo >= hi) return 0;
  const auto first = static_cast<std::size_t>(lo - iv_.begin());
  const auto last = static_cast<std::size_t>(hi - iv_.begin()) - 1;
  std::int64_t total = prefix_[last] - (first > 0 ? prefix_[first - 1] : 0);
  total -= std::max<std::int64_t>(0, a - iv_[first].start);
  total -= std::max<std::int64_t>(0, iv_[last].end - b);
  return total;
}

bool IntervalSet::contains(std::int64_t t) const {
  auto it = std::partition_point(iv_.begin(), iv_.end(), [&](const Interval& i) { return i.end <= t; });
  return it != iv_.end() && it->start <= t;
}

std::vector<std::int64_t> overlapBreakdown(std::span<const IntervalSet* const> sets, std::int64_t a,
                                           std::int64_t b) {
  assert(sets.size() <= 8);
  std::vector<std::int64_t> out(std::size_t{1} << sets.size(), 0);
  if (b <= a) return out;
  // Sweep the boundaries of all sets; between two boundaries the active combination is fixed.
  struct Edge {
    std::int64_t t;
    unsigned bit;
    bool open;
  };
  std::vector<Edge> edges;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const auto all = sets[k]->intervals();
    auto first = std::partition_point(all.begin(), all.end(), [&](const Interval& i) { return i.end <= a; });
    for (auto it = first; it != all.end() && it->start < b; ++it) {
      const std::int64_t s = std::max(it->start, a), e = std::min(it->end, b);
      if (s >= e) continue;
      edges.push_back({s, 1u << k, true});
      edges.push_back({e, 1u << k, false});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.t < y.t; });
  unsigned active = 0;
  std::int64_t t = a;
  for (const Edge& e : edges) {
    out[active] += e.t - t;
    t = e.t;
    active = e.open ? (active | e.bit) : (active & ~e.bit);
  }
  out[active] += b - t;
  return out;
}

}  // namespace syncopate::analyzer
