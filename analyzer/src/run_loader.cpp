#include "syncopate/analyzer/run_loader.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "diagnostic_row.hpp"
#include "store_summary.hpp"
#include "store_codec.hpp"
#include "store_loader.hpp"
#include "store_rows.hpp"
#include "syncopate/analyzer/run_model_builder.hpp"
#include "syncopate/trace/reader.hpp"

namespace syncopate::analyzer {

namespace {

trace::Result<RunModel> finishRun(RunModelBuilder&& builder, const LoadOptions& options) {
  auto model = std::move(builder).finish(options.timings, options.unmatched_events_elsewhere);
  if (!model) return model.status();
  if (options.timings) options.timings->start("align clocks");
  alignClocks(*model, options.clock);
  return model;
}

std::string whoseStore(const trace::StoreFile& f) {
  if (f.rank) return fmt::format("rank {} ({})", *f.rank, f.path.filename().string());
  if (f.pid) return fmt::format("process {} ({})", *f.pid, f.path.filename().string());
  return f.path.filename().string();
}

// A memory size as a user reads it, in the 1024-based units --memory-limit takes: GiB, or MiB
// below one, with two decimals.
std::string memorySize(std::uint64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = 1024.0 * kMiB;
  const double b = static_cast<double>(bytes);
  return b >= kGiB ? fmt::format("{:.2f} GiB", b / kGiB) : fmt::format("{:.2f} MiB", b / kMiB);
}

// Whether a model of `ops` and `api_calls` would pass the load's memory limit.
bool overLimit(std::uint64_t ops, std::uint64_t api_calls, const LoadOptions& options) {
  return options.memory_limit > 0 && modelBytesEstimate(ops, api_calls) > options.memory_limit;
}

}  // namespace

std::string memoryLimitSentence(std::string_view rows, std::uint64_t ops, std::uint64_t api_calls,
                                std::uint64_t limit) {
  return fmt::format("{} {} GPU ops and {} API calls need about {} in one process (docs/analyzer.md, \"Memory\"), "
                     "more than the {} it may use (--memory-limit): give a larger --memory-limit (0 for none) if the "
                     "machine has the memory, or analyse the run on a machine that has",
                     rows, ops, api_calls, memorySize(modelBytesEstimate(ops, api_calls)), memorySize(limit));
}

trace::Result<std::vector<StoreRowCount>> countStoreRows(const std::filesystem::path& dir) {
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return trace::failure(stores.message());
  if (stores->empty())
    return trace::failure(dir.string() + " holds no run store (rank-<R>.sqlite or pid-<P>.sqlite): record a run with "
                                         "'syncopate record -o DIR -- COMMAND' or import one with 'syncopate import'");
  std::vector<StoreRowCount> out;
  for (const trace::StoreFile& f : *stores) {
    auto count = countRows(f);
    if (!count) return count.status();
    out.push_back(std::move(count).value());
  }
  return out;
}

trace::Result<StoreRowCount> countRows(const trace::StoreFile& store) {
  auto reader = trace::StoreReader::open(store.path, trace::TornStores::KeepRowsBefore);
  if (!reader.ok()) return trace::failure(reader.message());
  StoreRowCount count{store};
  for (trace::Table t : {trace::Table::Ops, trace::Table::ApiCalls}) {
    auto n = reader->rowCount(t);
    if (!n.ok()) return trace::failure(n.message());
    (t == trace::Table::Ops ? count.ops : count.api_calls) = static_cast<std::uint64_t>(*n);
  }
  return count;
}

std::uint64_t modelBytesEstimate(std::uint64_t ops, std::uint64_t api_calls) {
  // Every column of OpTable, and the op's entry in launched_ops.
  constexpr std::uint64_t per_op = 2 * sizeof(std::int64_t) + sizeof(StringId) + sizeof(Index) + sizeof(trace::OpKind) +
                                   sizeof(OpClass) + sizeof(std::int64_t) + sizeof(Index) +
                                   sizeof(StoreIdColumn::value_type) + sizeof(Index);
  // Every column of ApiCallTable.
  constexpr std::uint64_t per_call = 2 * sizeof(std::int64_t) + sizeof(Index) + sizeof(StringId) +
                                     sizeof(trace::ApiDomain) + sizeof(StoreIdColumn::value_type);
  // While the larger table is ordered: its order, the inverse, and the column being moved.
  constexpr std::uint64_t per_ordered_row = 2 * sizeof(Index) + sizeof(std::int64_t);
  return ops * per_op + api_calls * per_call + std::max(ops, api_calls) * per_ordered_row;
}

trace::Result<RunModel> loadRun(const std::filesystem::path& dir, const LoadOptions& options) {
  PhaseScope phase(options.timings, "open stores");
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return trace::failure(stores.message());
  if (stores->empty())
    return trace::failure(dir.string() + " holds no run store (rank-<R>.sqlite or pid-<P>.sqlite): record a run with "
                                         "'syncopate record -o DIR -- COMMAND' or import one with 'syncopate import'");
  // A reader is closed once its store is read: an open one keeps SQLite's page cache, which
  // over a run of many stores would hold about as much again as the stores themselves.
  std::vector<std::optional<trace::StoreReader>> readers;
  std::vector<std::size_t> call_rows, op_rows;
  std::size_t ops = 0, calls = 0;
  for (const trace::StoreFile& f : *stores) {
    auto reader = trace::StoreReader::open(f.path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(reader.message());
    for (trace::Table t : {trace::Table::Ops, trace::Table::ApiCalls}) {
      auto n = reader->rowCount(t);
      if (!n.ok()) return trace::failure(n.message());
      const auto rows = static_cast<std::size_t>(*n);
      (t == trace::Table::Ops ? op_rows : call_rows).push_back(rows);
      (t == trace::Table::Ops ? ops : calls) += rows;
    }
    readers.emplace_back(std::move(reader).value());
  }
  if (overLimit(ops, calls, options))
    return trace::failure(memoryLimitSentence("the run's", ops, calls, options.memory_limit));
  const std::size_t total_rows = ops + calls;
  if (options.timings) options.timings->start("read stores into rows");
  RunModelBuilder builder;
  builder.reserveOps(ops);
  builder.reserveApiCalls(calls);
  LoadProgress progress(options.progress, total_rows);
  // Workers read stores ahead (at most a few at a time, to bound memory); this thread turns
  // them into model rows in store order, so the model does not depend on timing.
  const std::size_t n = readers.size();
  const std::size_t workers = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  struct Slot {
    std::unique_ptr<StoreRows> rows;
    StoreFacts facts;
    trace::Status status;
  };
  std::vector<std::optional<Slot>> slots(n);
  std::vector<std::unique_ptr<StoreRows>> spare;  // buffers of stores already consumed
  std::mutex mu;
  std::condition_variable cv;
  std::size_t next = 0, consumed = 0;
  bool stop = false;
  auto work = [&] {
    for (;;) {
      std::size_t i;
      std::unique_ptr<StoreRows> rows;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < consumed + workers + 1; });
        if (stop || next >= n) return;
        i = next++;
        if (!spare.empty()) rows = std::move(spare.back()), spare.pop_back();
      }
      if (!rows) rows = std::make_unique<StoreRows>();
      trace::Status status = readStore(*readers[i], call_rows[i], op_rows[i], *rows);
      StoreFacts facts = storeFacts(*readers[i]);
      readers[i].reset();
      std::lock_guard lock(mu);
      slots[i].emplace(Slot{std::move(rows), std::move(facts), std::move(status)});
      cv.notify_all();
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t w = 0; w < workers; ++w) pool.emplace_back(work);
  auto stopWorkers = [&] {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    pool.clear();  // joins
  };
  for (std::size_t i = 0; i < n; ++i) {
    Slot slot;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return slots[i].has_value(); });
      slot = std::move(*slots[i]);
      slots[i].reset();
    }
    if (!slot.status) {
      stopWorkers();
      return slot.status;
    }
    loadStoreRows(slot.facts, *slot.rows, builder, progress);
    {
      std::lock_guard lock(mu);
      spare.push_back(std::move(slot.rows));
      ++consumed;
    }
    cv.notify_all();
  }
  stopWorkers();
  return finishRun(std::move(builder), options);
}
trace::Result<RunModel> loadRanksOfRun(const std::vector<RankInfo>& ranks, const std::vector<bool>& read,
                                       const LoadOptions& options) {
  PhaseScope phase(options.timings, "read stores into rows");
  RunModelBuilder builder;
  std::size_t total_rows = 0;
  std::vector<std::optional<trace::StoreReader>> readers(ranks.size());
  std::vector<std::size_t> call_rows(ranks.size()), op_rows(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (r >= read.size() || !read[r]) continue;
    auto reader = trace::StoreReader::open(ranks[r].store_path, trace::TornStores::KeepRowsBefore);
    if (!reader.ok()) return trace::failure(reader.message());
    auto calls = reader->rowCount(trace::Table::ApiCalls);
    auto ops = reader->rowCount(trace::Table::Ops);
    if (!calls.ok()) return trace::failure(calls.message());
    if (!ops.ok()) return trace::failure(ops.message());
    call_rows[r] = static_cast<std::size_t>(*calls), op_rows[r] = static_cast<std::size_t>(*ops);
    total_rows += call_rows[r] + op_rows[r];
    readers[r].emplace(std::move(reader).value());
  }
  LoadProgress progress(options.progress, total_rows);
  StoreRows rows;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!readers[r]) {
      builder.addRank(ranks[r]);
      continue;
    }
    if (trace::Status s = readStore(*readers[r], call_rows[r], op_rows[r], rows); !s) return s;
    loadStoreRows(storeFacts(*readers[r]), rows, builder, progress);
    readers[r].reset();
  }
  auto model = std::move(builder).finish(options.timings);
  if (!model) return model;
  // The model orders ranks by their number: a store whose rank is not the one it was given
  // for (the run changed, or its results were edited) would move rows under another's place.
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (model->ranks[r].rank != ranks[r].rank)
      return trace::failure(fmt::format("{} is rank {}, not rank {} as the run's analysis says: run 'syncopate analyze' on "
                                        "the run again",
                                        model->ranks[r].store_path, model->ranks[r].rank, ranks[r].rank));
  }
  return model;
}

trace::Result<PackedStore> readPackedStore(const std::filesystem::path& store) { return PackedStoreReader().read(store); }

PackedStoreReader::PackedStoreReader() : rows_(std::make_unique<StoreRows>()) {}
PackedStoreReader::~PackedStoreReader() = default;

trace::Result<StoreFacts> PackedStoreReader::readRows(const std::filesystem::path& store) {
  auto reader = trace::StoreReader::open(store, trace::TornStores::KeepRowsBefore);
  if (!reader.ok()) return trace::failure(reader.message());
  std::size_t counts[2] = {};
  for (trace::Table t : {trace::Table::Ops, trace::Table::ApiCalls}) {
    auto n = reader->rowCount(t);
    if (!n.ok()) return trace::failure(n.message());
    counts[t == trace::Table::Ops ? 0 : 1] = static_cast<std::size_t>(*n);
  }
  if (trace::Status s = readStore(*reader, counts[1], counts[0], *rows_); !s) return s;
  return storeFacts(*reader);
}

trace::Result<PackedStore> PackedStoreReader::read(const std::filesystem::path& store) {
  auto facts = readRows(store);
  if (!facts) return facts.status();
  return packStore(*facts, *rows_);
}

trace::Result<PackedStoreReader::RowsAndSummary> PackedStoreReader::readWithSummary(const std::filesystem::path& store) {
  auto facts = readRows(store);
  if (!facts) return facts.status();
  RowsAndSummary out;
  out.rows = packStore(*facts, *rows_);
  out.summary = packStore(*facts, summaryRows(*rows_, facts->strings.size()));
  return out;
}

trace::Result<RunModel> loadPackedRun(const std::vector<trace::StoreFile>& stores, const NextPackedStore& next,
                                      const LoadOptions& options) {
  PhaseScope phase(options.timings, "read stores into rows");
  RunModelBuilder builder;
  // Rows arrive a store at a time from elsewhere, uncounted beforehand: no progress to show.
  const ProgressFn no_progress;
  LoadProgress progress(no_progress, 1);
  StoreFacts facts;
  StoreRows rows;
  std::vector<trace::DiagnosticRow> missing;
  // Every store is asked for, whatever became of the ones before: a process that sends one
  // must find it received.
  // Rows that would take the model past the memory limit are not added; the stores after them
  // are still received (their senders must find them taken) and dropped.
  std::uint64_t ops = 0, calls = 0;
  std::size_t received = 0;  // stores taken when the limit was passed
  bool over_limit = false;
  for (std::size_t i = 0; i < stores.size(); ++i) {
    trace::Result<PackedStore> bytes = next(i);
    if (over_limit) continue;
    trace::Status status = bytes.ok() ? unpackStore(*bytes, facts, rows) : bytes.status();
    if (!status) {
      missing.push_back(diagnosticRow<trace::diagnostics::load_store_missing>(stores[i].path.filename().string(), 1,
                                                                               whoseStore(stores[i]), status.message()));
      continue;
    }
    ops += rows.ops.size(), calls += rows.calls.size();
    if (overLimit(ops, calls, options)) {
      over_limit = true;
      received = i + 1;
      continue;
    }
    // The rows' total is known only as they arrive: the first store, as many times as there are
    // stores, and an eighth more, is room for most runs (a rank's stores are alike), so the
    // tables are not copied over and over as they grow. Room never written takes no memory.
    // Never more than the memory limit allows, nor than the tables can index.
    if (ops == rows.ops.size() && calls == rows.calls.size()) {
      const std::uint64_t stores_of_room = stores.size() * 9 / 8 + 1;
      std::uint64_t most = std::numeric_limits<Index>::max();
      if (options.memory_limit > 0) most = std::min(most, options.memory_limit / modelBytesEstimate(1, 1));
      builder.reserveOps(std::min<std::uint64_t>(most, rows.ops.size() * stores_of_room));
      builder.reserveApiCalls(std::min<std::uint64_t>(most, rows.calls.size() * stores_of_room));
    }
    loadStoreRows(facts, rows, builder, progress);
  }
  if (over_limit)
    return trace::failure(memoryLimitSentence(fmt::format("{} of {} {} stores, whose", received,
                                                          options.share_of_run ? "this process's" : "the run's", stores.size()),
                                              ops, calls, options.memory_limit));
  if (missing.size() == stores.size())
    return trace::failure("no store of the run could be read: " + (missing.empty() ? std::string("there are none") : missing.front().message));
  for (trace::DiagnosticRow& d : missing) builder.addDiagnostic(std::move(d));
  return finishRun(std::move(builder), options);
}

}  // namespace syncopate::analyzer
