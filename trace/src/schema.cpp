#include "syncopate/trace/schema.hpp"

#include <charconv>

#ifndef SYNCOPATE_VERSION
#error "SYNCOPATE_VERSION must be defined by the build (trace/CMakeLists.txt)"
#endif

namespace syncopate::trace {

namespace {

// The one definition of the schema. docs/store-schema.md quotes this text verbatim between
// its ```sql fences; tests/trace/schema_doc_test.cpp fails when the two differ.
constexpr std::string_view kSchemaSql = R"sql(-- key/value facts about the process and the recording (see "meta keys")
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- every name other tables refer to by *_id
CREATE TABLE strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE devices(
  id INTEGER PRIMARY KEY,        -- the CUDA device ordinal in this process
  name TEXT, uuid TEXT, pci_bus_id TEXT,
  sm_count INTEGER, memory_bytes INTEGER);

CREATE TABLE threads(id INTEGER PRIMARY KEY, tid INTEGER NOT NULL, name TEXT);

CREATE TABLE streams(
  id INTEGER PRIMARY KEY,        -- store-local stream id
  device_id INTEGER NOT NULL,
  handle INTEGER,                -- the cudaStream_t value (0 = legacy default stream)
  flags INTEGER, priority INTEGER,
  name TEXT);                    -- e.g. 'default', 'nccl', or an importer's label

-- host API calls (runtime, driver, NCCL) that the collector intercepted
CREATE TABLE api_calls(
  id INTEGER PRIMARY KEY,
  thread_id INTEGER NOT NULL,    -- threads.id
  domain INTEGER NOT NULL,       -- ApiDomain
  name_id INTEGER NOT NULL,      -- e.g. 'cudaLaunchKernel', 'ncclAllReduce'
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  correlation_id INTEGER,        -- the GPU work it issued: ops/collectives/op_args.correlation_id
  result INTEGER);               -- the call's return code

-- everything that happened on a stream, plus host syncs
CREATE TABLE ops(
  id INTEGER PRIMARY KEY,
  kind INTEGER NOT NULL,         -- OpKind
  device_id INTEGER,             -- NULL only for a HostSync whose device is unknown
  stream_id INTEGER,             -- streams.id; NULL for a device-wide HostSync
  name_id INTEGER NOT NULL,      -- kernel name, 'Memcpy HtoD', 'Memset', 'Stream sync', ...
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  correlation_id INTEGER,        -- joins the host call (api_calls) and collectives/op_args
  bytes INTEGER,                 -- Memcpy/Memset payload
  memcpy_kind INTEGER,           -- MemcpyKind
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  event_id INTEGER,              -- EventRecord/StreamWait/HostSync on an event: store-local event id
  sync_kind INTEGER);            -- HostSync: SyncKind

-- one row per Collective/P2P op, joined to it by correlation_id
CREATE TABLE collectives(
  correlation_id INTEGER NOT NULL,
  comm_id INTEGER NOT NULL,      -- identical on every rank of the communicator
  comm_rank INTEGER, comm_size INTEGER,
  seq INTEGER NOT NULL,          -- per-communicator sequence number, from 0, same on all ranks
  coll_type INTEGER NOT NULL,    -- CollType
  dtype INTEGER, red_op INTEGER, -- DataType, RedOp
  count INTEGER, bytes INTEGER,  -- elements, and count * size of dtype
  root_or_peer INTEGER,          -- root of rooted collectives, peer of send/recv
  group_id INTEGER);             -- calls of one ncclGroupStart/End share it

-- pointer arguments of ops, joined by correlation_id. arg_index: a kernel's parameter index;
-- Memcpy 0 = dst, 1 = src; Memset 0 = dst; Collective/P2P 0 = sendbuff, 1 = recvbuff
CREATE TABLE op_args(
  correlation_id INTEGER NOT NULL, arg_index INTEGER NOT NULL, address INTEGER NOT NULL);

CREATE TABLE allocations(
  id INTEGER PRIMARY KEY,
  device_id INTEGER,             -- NULL for host memory
  address INTEGER NOT NULL, bytes INTEGER NOT NULL,
  kind INTEGER NOT NULL,         -- AllocKind
  alloc_ns INTEGER NOT NULL, free_ns INTEGER);

CREATE TABLE communicators(
  comm_id INTEGER NOT NULL, comm_rank INTEGER NOT NULL, comm_size INTEGER NOT NULL,
  device_id INTEGER, handle INTEGER, init_ns INTEGER,
  parent_comm_id INTEGER,        -- for ncclCommSplit
  PRIMARY KEY(comm_id, comm_rank));

-- NVTX ranges (push/pop and start/end) and marks (end_ns = start_ns)
CREATE TABLE nvtx_ranges(
  id INTEGER PRIMARY KEY,
  thread_id INTEGER,             -- the thread that opened it
  domain_id INTEGER,             -- strings.id of the domain's name; NULL: default domain
  name_id INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  depth INTEGER,                 -- push/pop nesting from 0; NULL for start/end ranges and marks
  color INTEGER, category INTEGER);

-- NCCL's own view of a collective or send/recv, from the collector's NCCL profiler plugin
-- (schema 1.1), joined to its collectives row by correlation_id
CREATE TABLE nccl_ops(
  correlation_id INTEGER PRIMARY KEY,
  func_id INTEGER NOT NULL,      -- NCCL's name of the function: 'AllReduce', 'Send', ...
  nccl_seq INTEGER,              -- NCCL's seqNumber (per communicator and function); NULL: send/recv
  algorithm_id INTEGER,          -- 'RING', 'TREE', ...; NULL: send/recv
  protocol_id INTEGER,           -- 'LL', 'LL128', 'SIMPLE'; NULL: send/recv
  channels INTEGER, warps INTEGER);

-- GPU-side timing of an NCCL operation's kernel per channel (schema 1.1), joined by
-- correlation_id: the GPU's global timer in ns as NCCL reports it (see "NCCL's kernel timer")
CREATE TABLE nccl_kernel_channels(
  correlation_id INTEGER NOT NULL, channel INTEGER NOT NULL,
  start_timer INTEGER, end_timer INTEGER,
  PRIMARY KEY(correlation_id, channel));

-- counters of anything not recorded as it happened: dropped records, clamps, lost rows
CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);

-- one sentence per anomaly, never a silent skip
CREATE TABLE diagnostics(
  id INTEGER PRIMARY KEY,
  severity INTEGER NOT NULL,     -- Severity
  source TEXT NOT NULL, message TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 1, first_ns INTEGER);
)sql";

}  // namespace

std::string toString(SchemaVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

bool parseSchemaVersion(std::string_view text, SchemaVersion& out) noexcept {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size()) return false;
  SchemaVersion v;
  const char* end = text.data() + text.size();
  auto [major_end, major_err] = std::from_chars(text.data(), text.data() + dot, v.major);
  if (major_err != std::errc{} || major_end != text.data() + dot || v.major < 0) return false;
  auto [minor_end, minor_err] = std::from_chars(text.data() + dot + 1, end, v.minor);
  if (minor_err != std::errc{} || minor_end != end || v.minor < 0) return false;
  out = v;
  return true;
}

std::string_view schemaSql() noexcept { return kSchemaSql; }

std::string_view toolVersion() noexcept { return SYNCOPATE_VERSION; }

}  // namespace syncopate::trace
