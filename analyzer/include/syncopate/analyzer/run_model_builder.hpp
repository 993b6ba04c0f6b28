// Builds a RunModel from rows given in any order: the store loader uses it, and so do tests
// that describe a run by hand. Rows refer to each other by the ids the add* functions return;
// finish() sorts every table into the model's order, rewrites the references, matches
// collectives across ranks and builds the flow table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/phase_timings.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

struct OpInput {
  Index stream = kNone;                  // id from addStream
  trace::OpKind kind = trace::OpKind::Kernel;
  StringId name = 0;
  std::int64_t start = 0, end = 0;
  Index api_call = kNone;                // id from addApiCall: the call that launched it
  std::int64_t bytes = kUnknown;
  std::int64_t event_id = kUnknown;      // EventRecord / StreamWait: the cudaEvent_t
  std::int64_t store_id = kUnknown;
};

struct CollectiveInput {
  std::int64_t comm_id = 0;
  std::int32_t comm_rank = -1, comm_size = -1;
  std::int64_t seq = 0;
  trace::CollType coll_type = trace::CollType::Unknown;
  trace::DataType dtype = trace::DataType::Unknown;
  trace::RedOp red_op = trace::RedOp::Unknown;
  std::int64_t count = kUnknown, bytes = kUnknown;
  std::int32_t root_or_peer = -1;
  std::int64_t group_id = kUnknown;
};

struct ApiCallInput {
  Index thread = kNone;                  // id from addThread
  trace::ApiDomain domain = trace::ApiDomain::CudaRuntime;
  StringId name = 0;
  std::int64_t start = 0, end = 0;
  std::int64_t store_id = kUnknown;
};

struct HostSyncInput {
  Index rank = kNone;                    // id from addRank
  Index api_call = kNone;
  trace::SyncKind sync_kind = trace::SyncKind::Unknown;
  Index stream = kNone;                  // id from addStream, or kNone
  std::int64_t event_id = kUnknown;
  std::int64_t start = 0, end = 0;
  std::int64_t store_id = kUnknown;
};

struct RangeInput {
  Index rank = kNone;
  Index thread = kNone;                  // id from addThread, or kNone
  StringId domain = 0;
  StringId name = 0;
  std::int64_t start = 0, end = 0;
  std::int16_t depth = -1;               // -1: computed from nesting on its thread
  std::int64_t store_id = kUnknown;
};

class RunModelBuilder {
 public:
  StringId intern(std::string_view s) { return model_.strings.intern(s); }

  // Only the descriptive fields of `info` are used; ranges are filled by finish().
  Index addRank(RankInfo info);
  Index addStream(Index rank, std::int32_t device, std::int64_t handle, std::string_view name,
                  std::int32_t priority = 0, std::int64_t store_id = kUnknown, bool non_blocking = false);
  Index addThread(Index rank, std::int64_t tid, std::string_view name, std::int64_t store_id = kUnknown);
  Index addApiCall(const ApiCallInput& row);
  Index addOp(const OpInput& row);
  // Details of a Collective/P2P op added with addOp.
  void addCollective(Index op, const CollectiveInput& row);
  Index addHostSync(const HostSyncInput& row);
  void addRange(const RangeInput& row);
  void addDiagnostic(trace::DiagnosticRow diagnostic);
  void reserveOps(std::size_t n);
  void reserveApiCalls(std::size_t n);

  // Fails (with a message naming the row) when a reference points nowhere.
  // `timings`, when set, receives its phases.
  // `elsewhere`: unmatched event waits and syncs of rows not given to this builder (a
  // distributed analysis's summaries leave each rank's markers where the rank was read), added
  // to its own count, diagnostics included.
  trace::Result<RunModel> finish(PhaseTimings* timings = nullptr, const UnmatchedEvents& elsewhere = {}) &&;

 private:
  trace::Status validate() const;
  OpClass classOf(trace::OpKind kind, StringId name);
  static constexpr std::uint8_t kUnclassified = 0xff;
  std::vector<std::uint8_t> kernel_class_;  // per kernel name: its OpClass, or kUnclassified
  RunModel model_;  // rows accumulate here in insertion order
  std::vector<std::pair<Index, std::int64_t>> op_events_;  // (op row, event id) of event markers
  struct PendingCollective {
    Index op;
    CollectiveInput row;
  };
  std::vector<PendingCollective> collectives_;
  // The first op or API call whose store id the model cannot keep (StoreIdColumn), refused by
  // finish(): "op 12 has store id 8589934592".
  std::string unfit_store_id_;
  void checkStoreId(std::string_view table, std::size_t row, std::int64_t id);
  void attachOpDetails(const std::vector<Index>& op_new);
};

}  // namespace syncopate::analyzer
