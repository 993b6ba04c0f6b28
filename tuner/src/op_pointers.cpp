#include "syncopate/tuner/op_pointers.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "syncopate/trace/reader.hpp"

namespace syncopate::tuner {

bool OpPointers::unknownLayout(analyzer::Index op) const {
  const auto args = of(op);
  return std::any_of(args.begin(), args.end(), [](const PointerArg& a) { return a.index == kUnknownLayout; });
}

std::uint64_t OpPointers::address(analyzer::Index op, std::uint32_t index) const {
  for (const PointerArg& a : of(op))
    if (a.index == index) return a.address;
  return 0;
}

void OpPointers::set(analyzer::Index op, std::vector<PointerArg> args) {
  // Ops skipped since the last one get no arguments.
  for (; next_ <= op; ++next_) begin_[next_ + 1] = static_cast<std::uint32_t>(args_.size());
  std::sort(args.begin(), args.end(), [](const PointerArg& a, const PointerArg& b) { return a.index < b.index; });
  args_.insert(args_.end(), args.begin(), args.end());
  // Only this op's end: filling in every later op's, call after call, made building quadratic.
  begin_[op + 1] = static_cast<std::uint32_t>(args_.size());
}

trace::Result<OpPointers> loadOpPointers(const analyzer::RunModel& model) {
  OpPointers out(model.ops.size());
  for (const analyzer::RankInfo& rank : model.ranks) {
    if (rank.store_path.empty() || rank.op_count == 0) continue;
    // Read as the model was (analyzer::loadRun): a torn store up to its tear.
    auto reader = trace::StoreReader::open(rank.store_path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(std::string(reader.status().message()));
    // store op id -> correlation id, then correlation id -> pointer arguments.
    std::unordered_map<std::int64_t, std::int64_t> correlation;
    if (auto st = reader->forEachOp([&](const trace::OpRow& row) {
          if (row.correlation_id) correlation.emplace(row.id, *row.correlation_id);
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
    std::unordered_map<std::int64_t, std::vector<PointerArg>> args;
    if (auto st = reader->forEachOpArg([&](const trace::OpArgRow& row) {
          args[row.correlation_id].push_back({row.arg_index, row.address});
        });
        !st.ok()) {
      return trace::failure(std::string(st.message()));
    }
    for (analyzer::Index op = rank.first_op; op < rank.first_op + rank.op_count; ++op) {
      const std::int64_t store_id = model.ops.store_id[op];
      auto c = correlation.find(store_id);
      if (c == correlation.end()) continue;
      auto a = args.find(c->second);
      if (a == args.end()) continue;
      out.set(op, a->second);
    }
  }
  return out;
}

}  // namespace syncopate::tuner
