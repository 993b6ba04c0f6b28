// One store's rows as the loader reads them, before they become model rows: what a worker
// thread reads out of SQLite (most of a load's time), and what distributed analysis moves from
// the process that read a store to the one that builds the model (store_codec.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/rows.hpp"
#include "syncopate/trace/torn_scan.hpp"

namespace syncopate::analyzer {

// The big tables, with only the columns the model keeps. StoreReader's scans decode every
// column into optionals; reading these columns of ops, api_calls and nvtx_ranges directly is a
// third cheaper, and these tables are most of a run. The columns are named by the tables'
// declaration (trace::columns), which minor versions only extend; StoreReader::open() has
// already checked that the file is a store of a major version this build reads.
// NULLs arrive as sentinels (SQL IFNULL: one call per column instead of two).
struct OpLite {
  std::int64_t id, start, end, correlation, bytes, event;  // kUnknown for NULL
  trace::StreamId stream;                                    // 0 for NULL
  trace::StringId name;
  trace::OpKind kind;
  std::uint8_t sync_kind;                                    // 255 for NULL
};
struct CallLite {
  std::int64_t id, start, end, correlation;  // correlation: kUnknown for NULL
  trace::ThreadId thread;
  trace::StringId name;
  trace::ApiDomain domain;
};
struct RangeLite {
  std::int64_t id, start, end;
  trace::ThreadId thread;   // kNoThread for NULL
  trace::StringId domain;   // kNoString for NULL
  trace::StringId name;
  std::int64_t depth;       // -1 for NULL
};

// An op's place in time, and its position in its stream.
struct OpKey {
  std::int64_t start, end;
  std::size_t at;
};

// Everything a store holds that the model needs, read by a worker thread (SQLite is most of
// the loading time, and stores are independent) and then translated into the builder in order.
struct StoreRows {
  std::vector<trace::StreamRow> streams;
  std::vector<trace::ThreadRow> threads;
  std::vector<CallLite> calls;
  std::vector<OpLite> ops;
  std::vector<OpLite> ops_by_stream;  // sortLikeTheModel's second buffer, swapped with ops
  std::vector<OpKey> op_keys;         // sortLikeTheModel's keys of a stream out of time order
  std::vector<trace::CollectiveRow> collectives;
  std::vector<RangeLite> ranges;
  std::vector<trace::DiagnosticRow> diagnostics;
  std::int64_t implausible_rows = 0;  // streams and threads dropped by dropImplausibleIds
  std::vector<trace::TornTable> torn;  // of the tables read here: those read only up to a tear
};

// What the loader needs of a store besides its rows: its meta values, its strings table and
// where it was found torn. Taken from an open reader, so that rows and facts can travel together.
struct StoreFacts {
  std::string path;  // as the reading process named it
  std::optional<std::int32_t> rank;
  std::optional<std::int64_t> pid;
  std::optional<std::string> host, source;
  std::int64_t realtime_offset_ns = 0;
  std::optional<std::int64_t> world_size, trace_start_ns, trace_end_ns, start_ns, end_ns;
  std::vector<std::string> strings;  // by store string id, up to the store's largest
  trace::StoreTear tear;
};

StoreFacts storeFacts(const trace::StoreReader& reader);

// Fills `rows` (emptied first; its buffers are reused from store to store, since faulting in
// fresh memory for every store costs more than reading some of them), in the model's order.
// `calls` and `ops` are the store's row counts (counted once, when the run was opened).
trace::Status readStore(const trace::StoreReader& r, std::size_t calls, std::size_t ops, StoreRows& rows);

// How a store is torn, for the sentences about it.
std::string tearDescription(const trace::StoreTear& tear);

}  // namespace syncopate::analyzer
