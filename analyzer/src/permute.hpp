// Reordering columnar tables by a permutation (order[new] = old).
#pragma once

#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

inline std::vector<Index> inverse(const std::vector<Index>& order) {
  std::vector<Index> inv(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inv[order[i]] = static_cast<Index>(i);
  return inv;
}

inline bool isIdentity(const std::vector<Index>& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

// The new row of each old one (inverse(order)), or nothing when `order` moves no row: at a run's
// size such a table is 4 bytes a row made for nothing.
inline std::vector<Index> newRowsOf(const std::vector<Index>& order) {
  return isIdentity(order) ? std::vector<Index>{} : inverse(order);
}

// Row `i`'s new row, given newRowsOf's answer.
inline Index renumbered(const std::vector<Index>& new_rows, Index i) { return new_rows.empty() ? i : new_rows[i]; }

template <class T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<Index>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (Index i : order) out.push_back(v[i]);
  return out;
}

template <class T>
void permuteColumn(std::vector<T>& v, const std::vector<Index>& order) {
  v = permuted(v, order);
}

inline void permuteColumn(StoreIdColumn& c, const std::vector<Index>& order) { permuteColumn(c.encoded(), order); }

inline void permuteTable(OpTable& t, const std::vector<Index>& o) {
  if (isIdentity(o)) return;
  permuteColumn(t.start, o), permuteColumn(t.end, o), permuteColumn(t.name, o), permuteColumn(t.stream, o);
  permuteColumn(t.kind, o), permuteColumn(t.op_class, o), permuteColumn(t.bytes, o);
  permuteColumn(t.launch, o), permuteColumn(t.store_id, o);
}

inline void permuteTable(ApiCallTable& t, const std::vector<Index>& o) {
  if (isIdentity(o)) return;
  permuteColumn(t.start, o), permuteColumn(t.end, o), permuteColumn(t.thread, o), permuteColumn(t.name, o);
  permuteColumn(t.domain, o), permuteColumn(t.store_id, o);
}

inline void permuteTable(HostSyncTable& t, const std::vector<Index>& o) {
  if (isIdentity(o)) return;
  permuteColumn(t.start, o), permuteColumn(t.end, o), permuteColumn(t.rank, o), permuteColumn(t.api_call, o);
  permuteColumn(t.sync_kind, o), permuteColumn(t.stream, o), permuteColumn(t.event_id, o);
  permuteColumn(t.store_id, o);
}

inline void permuteTable(RangeTable& t, const std::vector<Index>& o) {
  if (isIdentity(o)) return;
  permuteColumn(t.start, o), permuteColumn(t.end, o), permuteColumn(t.rank, o), permuteColumn(t.thread, o);
  permuteColumn(t.domain, o), permuteColumn(t.name, o), permuteColumn(t.depth, o), permuteColumn(t.parent, o);
  permuteColumn(t.store_id, o);
}

}  // namespace syncopate::analyzer
