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
  // Walk the sets' boundaries in time order (each set's are already sorted): between two
  // consecutive boundaries the combination of active sets is fixed.
  struct Cursor {
    std::span<const Interval>::iterator it, end;
    bool inside = false;  // at it->end next, rather than it->start
    std::int64_t next(std::int64_t lo, std::int64_t hi) const {
      if (it == end) return INT64_MAX;
      return inside ? std::min(it->end, hi) : std::max(it->start, lo);
    }
  };
  std::vector<Cursor> cursors;
  for (const IntervalSet* set : sets) {
    const auto all = set->intervals();
    auto first = std::partition_point(all.begin(), all.end(), [&](const Interval& i) { return i.end <= a; });
    auto last = std::partition_point(first, all.end(), [&](const Interval& i) { return i.start < b; });
    cursors.push_back({first, last, false});
  }
  unsigned active = 0;
  std::int64_t t = a;
  for (;;) {
    std::size_t k = cursors.size();
    std::int64_t when = INT64_MAX;
    for (std::size_t c = 0; c < cursors.size(); ++c)
      if (const std::int64_t n = cursors[c].next(a, b); n < when) when = n, k = c;
    if (k == cursors.size()) break;
    out[active] += when - t;
    t = when;
    Cursor& c = cursors[k];
    if (c.inside) {
      active &= ~(1u << k);
      c.inside = false;
      ++c.it;
    } else {
      active |= 1u << k;
      c.inside = true;
    }
  }
  out[active] += b - t;
  return out;
}

}  // namespace syncopate::analyzer
