// The pointer arguments of every op of a run (the store's `op_args`), which the analyzer's
// run model does not keep: the tuner needs them to know which kernel produced and which
// consumed each gradient buffer.
//
// Argument indices follow the store: a kernel's parameter index; Memcpy 0 = dst, 1 = src;
// Memset 0 = dst; Collective/P2P 0 = sendbuff, 1 = recvbuff. A kernel whose parameter layout
// the collector could not learn carries one row with index kUnknownLayout.
//
// Kernels launched on a device without a parameter-info query all carry that row, and are
// then barriers for the model as for the runtime.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/records.hpp"

namespace syncopate::tuner {

inline constexpr std::uint32_t kUnknownLayout = trace::kUnknownLayoutArgIndex;

struct PointerArg {
  std::uint32_t index = 0;
  std::uint64_t address = 0;
};

class OpPointers {
 public:
  OpPointers() = default;
  explicit OpPointers(std::size_t ops) : begin_(ops + 1, 0) {}

  // Pointer arguments of op `op` of the run model (in index order).
  std::span<const PointerArg> of(analyzer::Index op) const {
    if (op >= next_) return {};  // after the last op set: begin_ is not filled in there
    return {args_.data() + begin_[op], begin_[op + 1] - begin_[op]};
  }
  bool unknownLayout(analyzer::Index op) const;
  // The address of argument `index` of `op`, or 0.
  std::uint64_t address(analyzer::Index op, std::uint32_t index) const;

  // Building: set the arguments of ops in increasing op order.
  void set(analyzer::Index op, std::vector<PointerArg> args);
  std::size_t size() const { return args_.size(); }

 private:
  std::vector<std::uint32_t> begin_;
  std::vector<PointerArg> args_;
  analyzer::Index next_ = 0;  // one past the last op set
};

// Reads the pointer arguments of every op of `model` from the stores it was loaded from
// (RankInfo::store_path). Ranks without a store (built or imported models) get none.
trace::Result<OpPointers> loadOpPointers(const analyzer::RunModel& model);

}  // namespace syncopate::tuner
