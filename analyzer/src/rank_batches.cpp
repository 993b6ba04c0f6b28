#include "syncopate/analyzer/rank_batches.hpp"

#include <future>
#include <utility>

#include <fmt/format.h>

namespace syncopate::analyzer {

namespace {

void shift(RankIteration& it, std::int64_t d) { it.start += d, it.end += d, it.host_start += d, it.host_end += d; }

std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The model of one batch's stores, each on its own clock (the run's alignment comes later), read
// one store ahead of the one being built. `taken(k, bytes)` keeps what it needs of store k's read
// and returns its rows, or the reason it has none.
using Read = trace::Result<PackedStoreReader::RowsAndSummary>;
trace::Result<RunModel> batchModel(const std::vector<trace::StoreFile>& files, PackedStoreReader& reader, bool summaries,
                                   const std::function<trace::Result<PackedStore>(std::size_t, Read)>& taken) {
  const auto readAhead = [&](std::size_t k) {
    return std::async(std::launch::async, [&reader, summaries, path = files[k].path]() -> Read {
      if (summaries) return reader.readWithSummary(path);
      auto rows = reader.read(path);
      if (!rows) return rows.status();
      return PackedStoreReader::RowsAndSummary{std::move(rows).value(), {}};
    });
  };
  auto ahead = readAhead(0);
  LoadOptions batch_load;
  batch_load.clock.refine = false;
  batch_load.share_of_run = true;
  return loadPackedRun(files, [&](std::size_t k) {
    Read read = ahead.get();
    if (k + 1 < files.size()) ahead = readAhead(k + 1);
    return taken(k, std::move(read));
  }, batch_load);
}

}  // namespace

RankIterationFacts RankFirstPass::factsFor(bool any_marker, std::int64_t run_aligned_ns) const {
  RankIterationFacts f = any_marker ? by_markers : by_pattern;
  const std::int64_t d = run_aligned_ns - to_aligned_ns;
  for (RankIteration& it : f.iterations) shift(it, d);
  if (f.whole_run.op_count > 0) shift(f.whole_run, d);
  return f;
}

trace::Result<RankBatches> RankBatches::read(const std::vector<StoreRowCount>& stores, std::uint64_t memory_limit,
                                             const IterationOptions& iterations) {
  RankBatches out;
  // Consecutive stores while their model fits the limit; a store that could not be counted is
  // read with the others, and its read says why it fails.
  std::uint64_t ops = 0, calls = 0;
  for (const StoreRowCount& c : stores) {
    if (memory_limit > 0 && modelBytesEstimate(c.ops, c.api_calls) > memory_limit)
      return trace::failure(memoryLimitSentence(fmt::format("{} alone, whose", c.store.path.filename().string()), c.ops,
                                                c.api_calls, memory_limit));
    if (out.batches_.empty() || (memory_limit > 0 && modelBytesEstimate(ops + c.ops, calls + c.api_calls) > memory_limit))
      out.batches_.emplace_back(), ops = 0, calls = 0;
    out.batches_.back().push_back(c.store);
    ops += c.ops, calls += c.api_calls;
  }
  PackedStoreReader reader;  // one read at a time: the next store's, while the last is built
  for (const auto& batch : out.batches_) {
    std::size_t read_ok = 0;
    auto model = batchModel(batch, reader, true, [&](std::size_t, Read read) -> trace::Result<PackedStore> {
      if (!read) return out.summaries_.emplace_back(read.status()).status();
      out.summaries_.emplace_back(std::move(read->summary));
      ++read_ok;
      return std::move(read->rows);
    });
    out.batch_ranks_.emplace_back();
    if (read_ok == 0) continue;  // every store of the batch says why it could not be read
    if (!model) return model.status();
    for (Index r = 0; r < model->ranks.size(); ++r) {
      RankFirstPass f;
      const RankInfo& info = model->ranks[r];
      f.store = fileName(info.store_path);
      f.has_markers = rankHasIterationMarkers(*model, r, iterations);
      f.by_markers = rankIterations(*model, r, iterations, true);
      f.by_pattern = rankIterations(*model, r, iterations, false);
      f.to_aligned_ns = info.to_aligned_ns;
      f.ops = info.op_count;
      for (Index t = info.first_thread; t < info.first_thread + info.thread_count; ++t) f.api_calls += model->threads[t].call_count;
      out.batch_ranks_.back().push_back(out.ranks_.size());
      out.ranks_.push_back(std::move(f));
    }
    out.unmatched_.waits += model->unmatched_events.waits;
    out.unmatched_.syncs += model->unmatched_events.syncs;
    if (out.batches_.size() == 1) out.kept_ = std::move(model).value();
  }
  return out;
}

trace::Status RankBatches::measure(const std::function<std::int64_t(const RankFirstPass&)>& run_aligned_ns,
                                   const Measure& measure) {
  PackedStoreReader reader;
  for (std::size_t b = 0; b < batches_.size(); ++b) {
    if (batch_ranks_[b].empty()) continue;
    trace::Result<RunModel> model = trace::failure("not read");
    if (kept_) {
      model = std::move(*kept_);
      kept_.reset();
    } else {
      model = batchModel(batches_[b], reader, false, [](std::size_t, Read read) -> trace::Result<PackedStore> {
        if (!read) return read.status();
        return std::move(read->rows);
      });
    }
    if (!model) return model.status();
    if (model->ranks.size() != batch_ranks_[b].size())
      return trace::failure(fmt::format("the stores of {} and after changed while the run was analysed: {} ranks read "
                                        "again where the first reading found {}",
                                        batches_[b].front().path.string(), model->ranks.size(), batch_ranks_[b].size()));
    for (Index r = 0; r < model->ranks.size(); ++r) {
      const RankFirstPass& first = ranks_[batch_ranks_[b][r]];
      if (fileName(model->ranks[r].store_path) != first.store)
        return trace::failure(first.store + " changed while the run was analysed");
      shiftRank(*model, r, run_aligned_ns(first) - model->ranks[r].to_aligned_ns);
      if (trace::Status s = measure(*model, r, first); !s) return s;
    }
    if (batches_.size() == 1) kept_ = std::move(model).value();
  }
  return trace::Status();
}

}  // namespace syncopate::analyzer
