// How a bucket of several reduce-scatters or all-gathers goes through the fusion buffer: one
// layout that the runtime copies by and the what-if model costs by, so that a prediction
// describes the copies the runtime makes.
//
// A reduce-scatter's input (an all-gather's output) holds `ranks` slices, one per rank, each of
// the call's count. Two calls' inputs side by side are not one call's: rank r's slices of both
// lie apart. So the buffer holds the gathered side rank by rank, each rank's row the members'
// slices for that rank side by side (ranks × total elements), followed by the rank's own side
// (total elements: the reduce-scatter's output, the all-gather's input). One call of `total`
// elements per rank on the buffer then does what the members' calls did, element for element:
// each element is reduced (or gathered) from the same ranks as in its member's own call.
//
//   reduce-scatter: each member's input -> its column of every row (one 2D copy of `ranks`
//                   rows), the call from the rows into the own side, the own side's columns ->
//                   each member's output (one copy each);
//   all-gather:     each member's input -> its column of the own side (one copy each), the call
//                   from the own side into the rows, each member's column of every row -> its
//                   output (one 2D copy of `ranks` rows).
#pragma once

#include <cstdint>

#include "syncopate/tuner/executor.hpp"

namespace syncopate::tuner {

struct ShardedFusion {
  std::uint64_t ranks = 1;     // of the communicator
  std::uint64_t total = 0;     // elements per rank, over every member
  std::uint64_t elem = 0;      // bytes per element
  std::uint64_t rowBytes() const { return total * elem; }
  std::uint64_t ownOffset() const { return ranks * rowBytes(); }  // where the own side starts
  std::uint64_t bytes() const { return (ranks + 1) * rowBytes(); }
};

inline ShardedFusion shardedFusion(const UnitIssue& unit) {
  const CollectiveArgs& first = unit.members.front().args;
  ShardedFusion f;
  f.ranks = first.comm_size > 0 ? static_cast<std::uint64_t>(first.comm_size) : 1;
  f.elem = trace::dataTypeSize(first.dtype);
  for (const HeldCollective& m : unit.members) f.total += m.args.count;
  return f;
}

// Calls fn(member, column): each member with the element where its slices start in a row.
template <typename Fn>
void forEachColumn(const UnitIssue& unit, Fn&& fn) {
  std::uint64_t column = 0;
  for (const HeldCollective& m : unit.members) {
    fn(m.args, column);
    column += m.args.count;
  }
}

// Whether a unit goes through the rank-by-rank layout: several members that no part splits.
inline bool shardedFused(const UnitIssue& unit) {
  return unit.members.size() > 1 && !splittable(unit.members.front().args.type);
}

}  // namespace syncopate::tuner
