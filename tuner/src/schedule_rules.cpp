#include "syncopate/tuner/schedule_rules.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "syncopate/trace/hash.hpp"

namespace syncopate::tuner {

const GroupPlan* ScheduleRules::find(std::uint64_t signature) const {
  auto it = std::lower_bound(groups.begin(), groups.end(), signature,
                             [](const GroupPlan& g, std::uint64_t v) { return g.signature < v; });
  return it != groups.end() && it->signature == signature ? &*it : nullptr;
}

void GroupSignature::add(const CollectiveArgs& m) {
  // A collective that reduces nothing has no operation: a store keeps none (read back as
  // unknown) where the live call says "none", and both must name the same group.
  const bool reduces = m.type == trace::CollType::AllReduce || m.type == trace::CollType::ReduceScatter ||
                       m.type == trace::CollType::Reduce;
  const trace::RedOp op = reduces ? m.op : trace::RedOp::None;
  // Field by field (not the struct's bytes): padding must not leak into the signature.
  const std::uint64_t fields[] = {m.comm_index,
                                  static_cast<std::uint64_t>(static_cast<std::uint32_t>(m.comm_size)),
                                  static_cast<std::uint64_t>(m.type),
                                  static_cast<std::uint64_t>(m.dtype),
                                  static_cast<std::uint64_t>(op),
                                  static_cast<std::uint64_t>(static_cast<std::uint32_t>(m.root_or_peer)),
                                  m.count};
  hash_ = trace::fnv1a(hash_, fields, sizeof(fields));
}

std::string validateGroupPlan(const GroupPlan& plan) {
  if (plan.members == 0) return "a group plan has no members";
  if (plan.bucket_first.empty() || plan.bucket_first.front() != 0) return "the first bucket must start at member 0";
  for (std::size_t b = 1; b < plan.bucket_first.size(); ++b) {
    if (plan.bucket_first[b] <= plan.bucket_first[b - 1] || plan.bucket_first[b] >= plan.members) {
      return "bucket starts must increase and stay inside the group";
    }
  }
  if (plan.parts.size() != plan.bucket_first.size()) return "every bucket needs a part count";
  std::size_t units = 0;
  for (std::uint16_t p : plan.parts) {
    if (p == 0) return "a bucket has zero parts";
    units += p;
  }
  if (plan.order.size() != units) return "the issue order must name every part of every bucket once";
  std::vector<std::vector<bool>> seen(plan.parts.size());
  for (std::size_t b = 0; b < plan.parts.size(); ++b) seen[b].assign(plan.parts[b], false);
  for (const UnitRef& u : plan.order) {
    if (u.bucket >= plan.parts.size() || u.part >= plan.parts[u.bucket]) return "the issue order names a part that does not exist";
    if (seen[u.bucket][u.part]) return "the issue order names a part twice";
    seen[u.bucket][u.part] = true;
  }
  return {};
}

}  // namespace syncopate::tuner
