#include "row_binding.hpp"

#include "sqlite_util.hpp"

namespace syncopate::trace::detail {

void bindRow(sqlite3_stmt* s, int i, const ApiCallRow& r) {
  bindInt(s, i, r.thread_id);
  bindInt(s, i + 1, static_cast<std::int64_t>(r.domain));
  bindInt(s, i + 2, r.name_id);
  bindInt(s, i + 3, r.start_ns);
  bindInt(s, i + 4, r.end_ns);
  bindOptional(s, i + 5, r.correlation_id);
  bindOptional(s, i + 6, r.result);
}

namespace {

void bindDim(sqlite3_stmt* s, int i, const std::optional<Dim3>& d) {
  if (d) {
    bindInt(s, i, d->x);
    bindInt(s, i + 1, d->y);
    bindInt(s, i + 2, d->z);
  } else {
    for (int k = 0; k < 3; ++k) sqlite3_bind_null(s, i + k);
  }
}

}  // namespace

void bindRow(sqlite3_stmt* s, int i, const OpRow& r) {
  bindInt(s, i, static_cast<std::int64_t>(r.kind));
  bindOptional(s, i + 1, r.device_id);
  bindOptional(s, i + 2, r.stream_id);
  bindInt(s, i + 3, r.name_id);
  bindInt(s, i + 4, r.start_ns);
  bindInt(s, i + 5, r.end_ns);
  bindOptional(s, i + 6, r.correlation_id);
  bindOptional(s, i + 7, r.bytes);
  bindOptional(s, i + 8, r.memcpy_kind);
  bindDim(s, i + 9, r.grid);
  bindDim(s, i + 12, r.block);
  bindOptional(s, i + 15, r.event_id);
  bindOptional(s, i + 16, r.sync_kind);
}

void bindRow(sqlite3_stmt* s, int i, const CollectiveRow& r) {
  bindInt(s, i, r.correlation_id);
  bindBits(s, i + 1, r.comm_id);
  bindOptional(s, i + 2, r.comm_rank);
  bindOptional(s, i + 3, r.comm_size);
  bindBits(s, i + 4, r.seq);
  bindInt(s, i + 5, static_cast<std::int64_t>(r.coll_type));
  bindOptional(s, i + 6, r.dtype);
  bindOptional(s, i + 7, r.red_op);
  bindOptional(s, i + 8, r.count);
  bindOptional(s, i + 9, r.bytes);
  bindOptional(s, i + 10, r.root_or_peer);
  bindOptional(s, i + 11, r.group_id);
}

void bindRow(sqlite3_stmt* s, int i, const OpArgRow& r) {
  bindInt(s, i, r.correlation_id);
  bindInt(s, i + 1, r.arg_index);
  bindBits(s, i + 2, r.address);
}

void bindRow(sqlite3_stmt* s, int i, const NvtxRangeRow& r) {
  bindOptional(s, i, r.thread_id);
  bindOptional(s, i + 1, r.domain_id);
  bindInt(s, i + 2, r.name_id);
  bindInt(s, i + 3, r.start_ns);
  bindInt(s, i + 4, r.end_ns);
  bindOptional(s, i + 5, r.depth);
  bindOptional(s, i + 6, r.color);
  bindOptional(s, i + 7, r.category);
}

}  // namespace syncopate::trace::detail
