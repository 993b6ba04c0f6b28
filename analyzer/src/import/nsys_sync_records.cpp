#include "nsys_sync_records.hpp"

#include <map>
#include <string>

#include "syncopate/analyzer/sync_calls.hpp"

namespace syncopate::analyzer::import {

namespace {

// CUPTI's "not applicable" in a stream or event id field.
constexpr std::int64_t kCuptiInvalid = 0xFFFFFFFF;

std::optional<std::int64_t> applicable(std::int64_t id) {
  return id < 0 || id == kCuptiInvalid ? std::nullopt : std::optional<std::int64_t>(id);
}

// What a record's syncType says (CUpti_ActivitySynchronizationType).
struct TypeSays {
  bool stream_wait = false;
  trace::SyncKind kind = trace::SyncKind::Unknown;
  bool known = false;
};

TypeSays fromSymbol(std::string_view symbol) {
  if (symbol.ends_with("STREAM_WAIT_EVENT")) return {true, trace::SyncKind::Event, true};
  if (symbol.ends_with("EVENT_SYNCHRONIZE")) return {false, trace::SyncKind::Event, true};
  if (symbol.ends_with("STREAM_SYNCHRONIZE")) return {false, trace::SyncKind::Stream, true};
  if (symbol.ends_with("CONTEXT_SYNCHRONIZE")) return {false, trace::SyncKind::Context, true};
  return {};
}

// syncType -> meaning: from the export's own enum table where it names the symbols, else
// CUPTI's numbering (1 event synchronize, 2 stream wait event, 3 stream synchronize, 4 context
// synchronize), which every export seen so far also uses.
std::map<std::int64_t, TypeSays> syncTypes(const NsysExport& e) {
  std::map<std::int64_t, TypeSays> types{{1, fromSymbol("EVENT_SYNCHRONIZE")},
                                         {2, fromSymbol("STREAM_WAIT_EVENT")},
                                         {3, fromSymbol("STREAM_SYNCHRONIZE")},
                                         {4, fromSymbol("CONTEXT_SYNCHRONIZE")}};
  const std::string table = "ENUM_CUPTI_SYNC_TYPE";
  if (!e.columns(table).count("name")) return types;
  std::map<std::int64_t, TypeSays> named;
  const trace::Status read = e.scan("SELECT id, name FROM " + table, [&](sqlite3_stmt* q) -> trace::Status {
    named[sqlite3_column_int64(q, 0)] = fromSymbol(NsysExport::text(q, 1));
    return {};
  });
  return read && !named.empty() ? named : types;
}

// A device and a context synchronize wait for the same thing: every stream of the device.
bool sameWait(trace::SyncKind a, trace::SyncKind b) {
  auto whole = [](trace::SyncKind k) { return k == trace::SyncKind::Device || k == trace::SyncKind::Context; };
  return a == b || (whole(a) && whole(b));
}

}  // namespace

trace::Status readNsysSyncs(const NsysExport& e, const std::function<trace::Status(const NsysSync&)>& each) {
  const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
  if (!e.has(table)) return {};
  if (trace::Status s = e.requireColumns(table, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                                                 "syncType", "eventId"});
      !s)
    return s;
  const std::map<std::int64_t, TypeSays> types = syncTypes(e);
  // The API call of each record, by correlation id within its process.
  const bool calls = e.has("CUPTI_ACTIVITY_KIND_RUNTIME");
  const std::string sql =
      "SELECT s.start, s.end, s.deviceId, s.streamId, s.correlationId, s.globalPid, s.syncType, s.eventId, " +
      std::string(calls ? "n.value FROM " + table +
                              " s LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = s.correlationId AND "
                              "(r.globalTid >> 24) = (s.globalPid >> 24) LEFT JOIN StringIds n ON n.id = r.nameId"
                        : "NULL FROM " + table + " s");
  return e.scan(sql, [&](sqlite3_stmt* q) -> trace::Status {
    NsysSync s;
    s.start = sqlite3_column_int64(q, 0);
    s.end = sqlite3_column_int64(q, 1);
    s.device = static_cast<std::int32_t>(sqlite3_column_int64(q, 2));
    s.stream = applicable(sqlite3_column_int64(q, 3));
    s.correlation = NsysExport::optInt(q, 4);
    s.global_pid = sqlite3_column_int64(q, 5);
    s.event = applicable(sqlite3_column_int64(q, 7));
    auto type = types.find(sqlite3_column_int64(q, 6));
    const TypeSays said = type == types.end() ? TypeSays{} : type->second;
    s.stream_wait = said.stream_wait;
    s.kind = said.kind;
    if (const auto call = syncCallNamed(stripVersion(NsysExport::text(q, 8)))) {
      s.stream_wait = call->what == SyncCallClass::StreamWait;
      s.kind = call->kind;
      s.kind_from_call = said.known && (s.stream_wait != said.stream_wait || !sameWait(s.kind, said.kind));
    }
    return each(s);
  });
}

trace::Status readNsysEventRecords(const NsysExport& e, const std::function<trace::Status(const NsysEventRecord&)>& each) {
  const std::string table = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
  if (!e.has(table)) return {};
  if (trace::Status s = e.requireColumns(table, {"deviceId", "streamId", "correlationId", "globalPid", "eventId"}); !s)
    return s;
  // Newer exports add the device-side time the event completed (0 when not collected).
  const bool timed = e.columns(table).count("timestamp") > 0;
  return e.scan("SELECT deviceId, streamId, correlationId, globalPid, eventId, " +
                    std::string(timed ? "timestamp" : "NULL") + " FROM " + table,
                [&](sqlite3_stmt* q) -> trace::Status {
                  NsysEventRecord r;
                  r.device = static_cast<std::int32_t>(sqlite3_column_int64(q, 0));
                  r.stream = sqlite3_column_int64(q, 1);
                  r.correlation = NsysExport::optInt(q, 2);
                  r.global_pid = sqlite3_column_int64(q, 3);
                  r.event = sqlite3_column_int64(q, 4);
                  if (auto t = NsysExport::optInt(q, 5); t && *t > 0) r.device_time = t;
                  return each(r);
                });
}

}  // namespace syncopate::analyzer::import
