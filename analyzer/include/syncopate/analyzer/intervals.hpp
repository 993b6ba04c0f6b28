// Interval algebra on half-open nanosecond intervals [start, end): unions, intersections and
// the measure of a set inside a window. Every time metric (compute, communication, overlap,
// idle) is the measure of one of these sets.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace syncopate::analyzer {

struct Interval {
  std::int64_t start = 0, end = 0;
  std::int64_t length() const { return end - start; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Disjoint, sorted, non-touching intervals, with prefix sums so that the measure inside any
// window costs two binary searches.
class IntervalSet {
 public:
  IntervalSet() = default;
  // The union of any intervals (empty ones are dropped; touching ones merge).
  static IntervalSet unionOf(std::vector<Interval> intervals);

  IntervalSet intersect(const IntervalSet& other) const;
  IntervalSet subtract(const IntervalSet& other) const;
  IntervalSet unite(const IntervalSet& other) const;

  std::int64_t measure() const { return prefix_.empty() ? 0 : prefix_.back(); }
  // Measure of (this ∩ [a, b)).
  std::int64_t measure(std::int64_t a, std::int64_t b) const;
  std::span<const Interval> intervals() const { return iv_; }
  bool empty() const { return iv_.empty(); }
  // True if t lies in one of the intervals.
  bool contains(std::int64_t t) const;

 private:
  explicit IntervalSet(std::vector<Interval> disjoint_sorted);
  std::vector<Interval> iv_;
  std::vector<std::int64_t> prefix_;  // prefix_[i] = total length of iv_[0..i]
};

// How long each combination of `sets` was active inside [a, b): element m of the result is the
// time during which exactly the sets whose bits are set in m were active (element 0: none).
// At most 8 sets.
std::vector<std::int64_t> overlapBreakdown(std::span<const IntervalSet* const> sets, std::int64_t a,
                                           std::int64_t b);

}  // namespace syncopate::analyzer
