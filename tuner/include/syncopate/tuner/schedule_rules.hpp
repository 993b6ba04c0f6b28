// What a plan tells the scheduler to do: the part of a plan (plan.hpp) that the reordering
// runtime executes. Read-only once built; the scheduler never allocates from it.
//
// Collectives are handled in *groups*: the all-reduces the scheduler holds between two flush
// points (the first op that needs one of their buffers, a host sync, an event record, ...).
// A group is known by its signature (the sequence of its members' communicator, type, element
// type, reduction and count), which is the same on every rank and in every iteration of a
// training loop. For each signature the plan says how to fuse members into buckets, how many
// parts to split each bucket into, and in which order to issue the parts. Groups whose
// signature the plan does not know are issued in their original order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "syncopate/trace/hash.hpp"

#include "syncopate/tuner/calls.hpp"

namespace syncopate::tuner {

// One issued unit: part `part` of bucket `bucket`.
struct UnitRef {
  std::uint16_t bucket = 0;
  std::uint16_t part = 0;
  friend bool operator==(const UnitRef&, const UnitRef&) = default;
};

struct GroupPlan {
  std::uint64_t signature = 0;
  std::uint32_t members = 0;
  // Issued as the program called them, on their own streams, with no agreement: the search
  // found that moving them costs more than it gains (a side stream's collectives on another
  // communicator, which would queue on the runtime's one communication stream).
  bool keep = false;
  // Bucket b holds members [bucket_first[b], bucket_first[b + 1]) (the last runs to `members`).
  std::vector<std::uint32_t> bucket_first;
  std::vector<std::uint16_t> parts;  // per bucket, >= 1
  std::vector<UnitRef> order;        // every (bucket, part) exactly once, in issue order

  std::uint32_t bucketCount() const { return static_cast<std::uint32_t>(bucket_first.size()); }
  std::uint32_t bucketEnd(std::uint32_t b) const {
    return b + 1 < bucket_first.size() ? bucket_first[b + 1] : members;
  }
};

struct ScheduleRules {
  // Buckets start as soon as the ops that produce their buffers end. Off: a bucket starts
  // where its members were called (after everything issued before them on their streams), so
  // only the fusion is gained. Buckets always run on the runtime's communication stream.
  bool communication_stream = true;
  // Each consumer waits only for the bucket holding its buffer. Off: the first consumer of
  // any member of a group waits for the whole group (as DDP's optimizer step does).
  bool per_bucket_waits = true;
  std::uint64_t plan_checksum = 0;  // every rank must hold the same plan (agreed at each flush)
  std::vector<GroupPlan> groups;    // sorted by signature

  const GroupPlan* find(std::uint64_t signature) const;
};

// The signature of a group of all-reduces, as ScheduleRules keys it.
class GroupSignature {
 public:
  void add(const CollectiveArgs& member);
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = trace::kFnvOffset;
};

// Checks that a group plan is well formed (buckets increasing and inside the group, every unit
// exactly once). Returns an empty string when valid, else what is wrong.
std::string validateGroupPlan(const GroupPlan& plan);

}  // namespace syncopate::tuner
