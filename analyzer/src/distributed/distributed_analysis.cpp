#include "syncopate/analyzer/distributed_analysis.hpp"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "distributed_critical_path.hpp"
#include "part_codec.hpp"
#include "store_plan.hpp"
#include "syncopate/analyzer/rank_batches.hpp"

namespace syncopate::analyzer {

namespace {

// Where the root put each store: its rank row in the run's model and how far its clock moved.
struct StorePlace {
  std::int64_t row = -1;  // -1: the root could not take it
  std::int64_t to_aligned_ns = 0;
};

// The stores' summaries to the root, in the run's order, and the run's model built from them.
trace::Result<RunModel> summaryModelOnRoot(const MpiSession& mpi, const StorePlan& plan,
                                           std::vector<trace::Result<PackedStore>>& summaries,
                                           const std::vector<std::size_t>& mine, const LoadOptions& load,
                                           std::uint64_t& sent) {
  if (!mpi.root()) {
    std::deque<std::pair<MPI_Request, std::string>> in_flight;
    for (std::size_t k = 0; k < mine.size(); ++k) {
      bool ok = summaries[k].ok();
      std::string bytes;
      if (ok) bytes.assign(reinterpret_cast<const char*>(summaries[k]->data()), summaries[k]->size());
      else bytes = processName(mpi) + ": " + summaries[k].message();
      summaries[k] = trace::failure("sent");
      if (bytes.size() > static_cast<std::size_t>(INT32_MAX))
        bytes = processName(mpi) + ": the store's summary is 2 GiB or more, more than one MPI message carries", ok = false;
      auto& f = in_flight.emplace_back(MPI_REQUEST_NULL, std::move(bytes));
      MPI_Isend(f.second.data(), static_cast<int>(f.second.size()), MPI_BYTE, 0, ok ? kRowsTag : kFailureTag,
                MPI_COMM_WORLD, &f.first);
      sent += f.second.size();
    }
    for (auto& f : in_flight) waitPolling(f.first);
    return trace::failure("not the root");
  }
  std::map<std::size_t, std::size_t> own;  // store -> index into `summaries`
  for (std::size_t k = 0; k < mine.size(); ++k) own[mine[k]] = k;
  const auto next = [&](std::size_t i) -> trace::Result<PackedStore> {
    if (auto it = own.find(i); it != own.end()) {
      auto& r = summaries[it->second];
      if (!r.ok()) return trace::failure(processName(mpi) + ": " + r.message());
      return std::exchange(*r, {});
    }
    return receiveStore(plan.owner[i]);
  };
  LoadOptions summary_load = load;
  summary_load.timings = nullptr;  // one phase of the caller's
  return loadPackedRun(plan.run.files, next, summary_load);
}

std::string placesText(const RunModel& model, const StorePlan& plan) {
  std::map<std::string, Index> row_of;
  for (Index r = 0; r < model.ranks.size(); ++r)
    row_of[std::filesystem::path(model.ranks[r].store_path).filename().string()] = r;
  std::vector<StorePlace> places(plan.run.files.size());
  for (std::size_t i = 0; i < places.size(); ++i) {
    auto it = row_of.find(plan.run.files[i].path.filename().string());
    if (it == row_of.end()) continue;
    places[i] = {it->second, model.ranks[it->second].to_aligned_ns};
  }
  return PartWriter().put(places).take();
}

// Where the root put the store of a rank this process read.
const StorePlace* placeOf(const std::map<std::string, const StorePlace*>& places, const RankFirstPass& rank) {
  auto it = places.find(rank.store);
  return it == places.end() || it->second->row < 0 ? nullptr : it->second;
}

}  // namespace

trace::Result<DistributedAnalysis> analyzeRunDistributed(const MpiSession& mpi, const std::filesystem::path& run_dir,
                                                         const LoadOptions& load, const AnalysisOptions& options) {
  PhaseScope phase(load.timings, "list and assign stores");
  auto plan = planStores(mpi, run_dir);
  if (!plan) return plan.status();
  std::uint64_t sent = plan->bytes_sent;
  DistributedAnalysis out;
  out.stores_per_process.assign(static_cast<std::size_t>(mpi.size()), 0);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < plan->owner.size(); ++i) {
    if (plan->owner[i] >= 0) ++out.stores_per_process[static_cast<std::size_t>(plan->owner[i])];
    if (plan->owner[i] == mpi.rank()) mine.push_back(i);
  }

  if (load.timings) load.timings->start("read and build own ranks");
  // Counted only where a limit cuts them into batches.
  std::vector<StoreRowCount> own_stores;
  for (std::size_t i : mine) {
    auto counted = load.memory_limit > 0 ? countRows(plan->run.files[i]) : trace::failure("not counted");
    own_stores.push_back(counted ? std::move(counted).value() : StoreRowCount{plan->run.files[i]});
  }
  auto own = RankBatches::read(own_stores, load.memory_limit, options.iterations);
  trace::Status read = own.status();
  if (own && options.critical_path && own->batches() > 1)
    read = trace::failure(fmt::format("its stores need {} batches to fit {:.2f} MiB (--memory-limit), and the critical path "
                                      "walks a process's ranks at once: start more processes, raise the limit, or analyse "
                                      "without the critical path (--no-critical-path)",
                                      own->batches(), static_cast<double>(load.memory_limit) / (1 << 20)));
  if (trace::Status s = everyProcessOk(mpi, read); !s) return s;
  int batches = static_cast<int>(own->batches());
  out.batches_per_process.resize(static_cast<std::size_t>(mpi.size()));
  MPI_Gather(&batches, 1, MPI_INT, out.batches_per_process.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);

  // The run's model from the summaries, on the root; every process learns where its stores went.
  // A rank's unmatched event waits and syncs are counted where its markers are: the summaries
  // leave them out.
  if (load.timings) load.timings->start("summary model");
  long long unmatched[2] = {own->unmatched().waits, own->unmatched().syncs}, all_unmatched[2] = {0, 0};
  MPI_Reduce(unmatched, all_unmatched, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  LoadOptions summary_load = load;
  summary_load.unmatched_events_elsewhere = {all_unmatched[0], all_unmatched[1]};
  auto summary = summaryModelOnRoot(mpi, *plan, own->summaries(), mine, summary_load, sent);
  own->summaries().clear();
  std::string places_text = mpi.root() ? (summary ? placesText(*summary, *plan) : "!" + summary.message()) : std::string();
  places_text = broadcastFromRoot(std::move(places_text), mpi);
  if (!places_text.empty() && places_text.front() == '!') return trace::failure(places_text.substr(1));
  std::vector<StorePlace> places;
  if (!PartReader(places_text).get(places).ok() || places.size() != plan->run.files.size())
    return trace::failure("the root's placing of the stores arrived damaged");
  std::map<std::string, const StorePlace*> place_of;
  for (std::size_t i : mine) place_of[plan->run.files[i].path.filename().string()] = &places[i];
  trace::Status placed;
  for (const RankFirstPass& f : own->ranks())
    if (!placeOf(place_of, f) && placed) placed = trace::failure(f.store + " was read here, but the root's model of the run has no rank of it");
  if (trace::Status s = everyProcessOk(mpi, placed); !s) return s;

  if (load.timings) load.timings->start("own ranks' iterations");
  int any_marker = 0;
  for (const RankFirstPass& f : own->ranks()) any_marker |= f.has_markers ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any_marker, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  PartWriter facts_out;
  facts_out.put(std::uint64_t{own->ranks().size()});
  for (const RankFirstPass& first : own->ranks()) {
    const StorePlace* place = placeOf(place_of, first);
    const RankIterationFacts f = first.factsFor(any_marker != 0, place->to_aligned_ns);
    facts_out.put(static_cast<Index>(place->row)).put(f.iterations).put(f.period).put(f.notes).put(f.whole_run).put(f.has_ops);
  }
  auto all_facts = gatherParts(mpi, facts_out.take(), sent);
  if (!all_facts) return all_facts.status();
  if (load.timings) load.timings->start("combine iterations");
  std::string iterations_text;
  trace::Result<Iterations> iterations = trace::failure("not the root");
  if (mpi.root()) {
    std::vector<RankIterationFacts> facts(summary->ranks.size());
    std::vector<bool> have(facts.size(), false);
    for (const std::string& part : *all_facts) {
      PartReader in(part);
      std::uint64_t n = 0;
      in.get(n);
      for (std::uint64_t k = 0; k < n && in.ok(); ++k) {
        Index row = kNone;
        RankIterationFacts f;
        in.get(row).get(f.iterations).get(f.period).get(f.notes).get(f.whole_run).get(f.has_ops);
        if (!in.ok() || row >= facts.size()) break;
        facts[row] = std::move(f);
        have[row] = true;
      }
    }
    if (std::find(have.begin(), have.end(), false) != have.end())
      iterations = trace::failure("a process's iterations of its ranks arrived damaged or incomplete");
    else
      iterations = combineRankIterations(*summary, options.iterations, any_marker != 0, std::move(facts));
    iterations_text = iterations ? PartWriter().put(iterations->per_rank).take() : "!" + iterations.message();
  }
  iterations_text = broadcastFromRoot(std::move(iterations_text), mpi);
  if (!iterations_text.empty() && iterations_text.front() == '!') return trace::failure(iterations_text.substr(1));
  std::vector<std::vector<RankIteration>> per_rank;
  if (!PartReader(iterations_text).get(per_rank).ok()) return trace::failure("the run's iterations arrived damaged");

  if (load.timings) load.timings->start("own ranks' metrics");
  PartWriter parts_out;
  parts_out.put(std::uint64_t{own->ranks().size()});
  trace::Status measured = own->measure(
      [&](const RankFirstPass& f) { return placeOf(place_of, f)->to_aligned_ns; },
      [&](const RunModel& model, Index r, const RankFirstPass& first) {
        const auto row = static_cast<Index>(placeOf(place_of, first)->row);
        if (row >= per_rank.size()) return trace::failure("the run's iterations do not cover this process's ranks");
        RankPart part = analyzeRankPart(model, r, per_rank[row], options);
        // Streams by their place among the rank's, names as text: the root's model numbers both its own way.
        for (RankIterationMetrics& m : part.rows) m.rank = row;
        for (StreamIdle& st : part.streams) st.stream -= model.ranks[r].first_stream;
        std::vector<std::string> names;
        for (const KernelTally& k : part.kernels) names.emplace_back(model.str(k.name));
        parts_out.put(row).put(part.rows).put(part.streams).put(part.kernel_types).put(part.kernels).put(names)
            .put(first.ops).put(first.api_calls);
        return trace::Status();
      });
  if (trace::Status s = everyProcessOk(mpi, measured); !s) return s;
  auto all_parts = gatherParts(mpi, parts_out.take(), sent);
  if (!all_parts) return all_parts.status();

  std::vector<CriticalPath> paths;
  if (options.critical_path) {
    if (load.timings) load.timings->start("own ranks' path index");
    static const RunModel kNoRanks;
    const RunModel* held = own->measuredModel();
    OwnRanks ranks{held ? *held : kNoRanks, {}};
    const PathWalker walker(ranks.model);
    if (load.timings) load.timings->start("critical paths in legs");
    for (const RankInfo& r : ranks.model.ranks)
      ranks.row_of.push_back(static_cast<Index>(place_of.at(std::filesystem::path(r.store_path).filename().string())->row));
    std::vector<int> process_of_row;
    if (mpi.root()) {
      process_of_row.assign(summary->ranks.size(), -1);
      for (std::size_t i = 0; i < places.size(); ++i)
        if (places[i].row >= 0) process_of_row[static_cast<std::size_t>(places[i].row)] = plan->owner[i];
    }
    const std::vector<std::int64_t> no_numbers;
    const RunOnRoot run{mpi.root() ? *summary : kNoRanks, mpi.root() && iterations ? iterations->numbers : no_numbers,
                        process_of_row};
    auto walked = walkCriticalPathsInLegs(mpi, mpi.root() ? &run : nullptr, ranks, walker, per_rank, sent);
    if (!walked) return walked.status();
    paths = std::move(walked->paths);
    out.path_legs = walked->legs, out.path_rounds = walked->rounds;
  }
  own = trace::failure("measured");

  unsigned long long mine_sent = sent, total_sent = 0;
  MPI_Reduce(&mine_sent, &total_sent, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  long peak_kb = usage.ru_maxrss;
  out.peak_rss_kb.resize(static_cast<std::size_t>(mpi.size()));
  MPI_Gather(&peak_kb, 1, MPI_LONG, out.peak_rss_kb.data(), 1, MPI_LONG, 0, MPI_COMM_WORLD);
  out.bytes_exchanged = total_sent;
  if (!mpi.root()) return out;

  if (load.timings) load.timings->start("combine ranks");
  RunModel& m = *summary;
  std::vector<RankPart> parts(m.ranks.size());
  std::vector<bool> have(parts.size(), false);
  std::uint64_t ops = 0, calls = 0;
  for (const std::string& bytes : *all_parts) {
    PartReader in(bytes);
    std::uint64_t n = 0;
    in.get(n);
    for (std::uint64_t k = 0; k < n && in.ok(); ++k) {
      Index row = kNone;
      RankPart part;
      std::vector<std::string> names;
      std::uint64_t rank_ops = 0, rank_calls = 0;
      in.get(row).get(part.rows).get(part.streams).get(part.kernel_types).get(part.kernels).get(names).get(rank_ops).get(rank_calls);
      if (!in.ok() || row >= parts.size() || names.size() != part.kernels.size()) break;
      for (StreamIdle& s : part.streams) s.stream += m.ranks[row].first_stream;
      for (std::size_t j = 0; j < names.size(); ++j) part.kernels[j].name = m.strings.intern(names[j]);
      parts[row] = std::move(part);
      have[row] = true;
      ops += rank_ops, calls += rank_calls;
    }
  }
  if (std::find(have.begin(), have.end(), false) != have.end())
    return trace::failure("a process's metrics of its ranks arrived damaged or incomplete");
  AnalysisOptions combine = options;
  combine.critical_path = false;  // walked in legs above
  auto analysis = combineRankParts(m, std::move(iterations).value(), std::move(parts), combine, load.timings);
  if (!analysis) return analysis.status();
  analysis->critical_paths = std::move(paths);
  analysis->run_ops = ops, analysis->run_api_calls = calls;
  out.analysis = std::move(analysis).value();
  out.model_bytes = summary->bytes();
  out.model = std::move(summary).value();
  return out;
}

}  // namespace syncopate::analyzer
