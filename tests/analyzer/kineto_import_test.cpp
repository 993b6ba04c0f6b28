// The real PyTorch-profiler traces in ../shared/traces/kineto (see its SOURCE.md) import
// without loss and analyse; numbers on nccl_data.json.gz were re-computed independently (a
// Python script over the raw JSON with the definitions of docs/analyzer.md) and agree to the
// nanosecond.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <map>

#include "kineto_trace_writer.hpp"
#include "scratch_dir.hpp"
#include "shared_traces.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/reader.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

std::filesystem::path kineto(const std::string& relative) { return testing::tracesDir() / "kineto" / relative; }

std::map<std::string, std::int64_t> categories(const ImportedStore& s) {
  std::map<std::string, std::int64_t> out;
  for (const auto& c : s.categories) out[c.what + " -> " + c.stored_as.substr(0, c.stored_as.find(':'))] += c.events;
  return out;
}

struct StoreCounts {
  std::int64_t ops = 0, api_calls = 0, ranges = 0, collectives = 0, allocations = 0;
  std::map<trace::OpKind, std::int64_t> by_kind;
};

StoreCounts countRows(const std::filesystem::path& file) {
  StoreCounts c;
  auto r = trace::StoreReader::open(file);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return c;
  EXPECT_TRUE(r->forEachOp([&](const trace::OpRow& row) { ++c.ops, ++c.by_kind[row.kind]; }).ok());
  EXPECT_TRUE(r->forEachApiCall([&](const trace::ApiCallRow&) { ++c.api_calls; }).ok());
  EXPECT_TRUE(r->forEachNvtxRange([&](const trace::NvtxRangeRow&) { ++c.ranges; }).ok());
  EXPECT_TRUE(r->forEachCollective([&](const trace::CollectiveRow&) { ++c.collectives; }).ok());
  EXPECT_TRUE(r->forEachAllocation([&](const trace::AllocationRow&) { ++c.allocations; }).ok());
  return c;
}

// Event counts of the largest trace, per (phase, category), as Python's json module counts them.
TEST(KinetoImport, LargestTraceImportsEveryEvent) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  ScratchDir dir;
  const std::filesystem::path file = kineto("df_index_resolver/df_index_resolver.json.gz");
  auto report = importKineto(std::span(&file, 1), dir.path());
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->stores.size(), 1u);
  const ImportedStore& s = report->stores[0];
  EXPECT_EQ(s.rank, 1);  // distributedInfo.rank
  EXPECT_EQ(s.file.filename(), "rank-1.sqlite");
  EXPECT_EQ(s.source_events, 216092);
  const auto cats = categories(s);
  EXPECT_EQ(cats.at("X kernel -> ops"), 19370);
  EXPECT_EQ(cats.at("X gpu_memcpy -> ops"), 2040);
  EXPECT_EQ(cats.at("X gpu_memset -> ops"), 880);
  EXPECT_EQ(cats.at("X cuda_runtime -> api_calls"), 42373);
  EXPECT_EQ(cats.at("X cpu_op -> nvtx_ranges"), 56680);
  EXPECT_EQ(cats.at("X user_annotation -> nvtx_ranges"), 2035);
  EXPECT_EQ(cats.at("s ac2g -> correlation ids"), 22290);
  EXPECT_EQ(cats.at("f ac2g -> correlation ids"), 42373);
  EXPECT_EQ(cats.at("M -> meta (thread and process names)"), 38);
  EXPECT_EQ(cats.at("i cpu_instant_event -> allocations") + cats.at("i cpu_instant_event -> not stored"), 28010);
  std::int64_t accounted = 0;
  for (const auto& c : s.categories) accounted += c.events;
  EXPECT_EQ(accounted, s.source_events);  // every event is somewhere: a row, a link, metadata, or counted

  // The store holds exactly those rows.
  StoreCounts rows = countRows(s.file);
  EXPECT_EQ(rows.ops, 19370 + 2040 + 880);
  EXPECT_EQ(rows.by_kind[trace::OpKind::Collective], 2020);  // the NCCL all-reduce kernels
  EXPECT_EQ(rows.by_kind[trace::OpKind::Kernel], 19370 - 2020);
  EXPECT_EQ(rows.api_calls, 42373);
  EXPECT_EQ(rows.ranges, 56680 + 2035);
  EXPECT_EQ(rows.collectives, 2020);
  EXPECT_EQ(rows.ops, s.ops);
  EXPECT_EQ(rows.allocations, s.allocations);

  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ops.size(), 22290u);
  // Thread names come from the metadata events at the end of the file.
  ASSERT_EQ(m->threads.size(), 2u);
  EXPECT_EQ(m->str(m->threads[0].name), "thread 783658 (python3.8)");
  EXPECT_EQ(m->threads[1].tid, 785244);
  EXPECT_EQ(m->ranks[0].pid, 783658);
  // Every GPU op of this trace was launched by a recorded call (the s ac2g flows say so).
  std::size_t launched = 0;
  for (Index op = 0; op < m->ops.size(); ++op) launched += m->launchOf(op) != kNone;
  EXPECT_EQ(launched, 22290u);
  auto a = analyze(*m);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->iterations.source, IterationSource::Markers);
  EXPECT_EQ(a->iterations.numbers, (std::vector<std::int64_t>{2, 3, 4, 5}));  // step 6 cut by the profiler
}

TEST(KinetoImport, NcclDataNumbersAgreeWithAnIndependentComputation) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  ScratchDir dir;
  const std::filesystem::path file = kineto("nccl_parser_config/nccl_data.json.gz");
  auto report = importKineto(std::span(&file, 1), dir.path());
  ASSERT_TRUE(report.ok()) << report.message();
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  // baseTimeNanoseconds is the realtime offset of ts.
  EXPECT_EQ(m->ranks[0].to_aligned_ns, 1711964646000000000);
  // NCCL kernels carry their process group, size, element count and type.
  ASSERT_EQ(m->collectives.size(), 21u);
  std::map<trace::CollType, int> types;
  for (Index c = 0; c < m->collectives.size(); ++c) {
    ++types[m->collectives.coll_type[c]];
    EXPECT_EQ(m->collectives.comm_size[c], 2);
    EXPECT_EQ(m->collectives.comm_rank[c], 0);
  }
  EXPECT_EQ(types[trace::CollType::AllReduce], 15);
  EXPECT_EQ(types[trace::CollType::Broadcast], 6);
  const auto first_ar = std::find(m->collectives.coll_type.begin(), m->collectives.coll_type.end(), trace::CollType::AllReduce) -
                        m->collectives.coll_type.begin();
  EXPECT_EQ(m->collectives.dtype[first_ar], trace::DataType::Float32);
  EXPECT_GT(m->collectives.count[first_ar], 0);
  EXPECT_EQ(m->collectives.bytes[first_ar], 4 * m->collectives.count[first_ar]);

  auto a = analyze(*m);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->rank_iterations.size(), 2u);  // ProfilerStep#4 and #5; #6 was cut by the profiler
  const TimeBreakdown& s4 = a->rank_iterations[0].time;
  const TimeBreakdown& s5 = a->rank_iterations[1].time;
  EXPECT_EQ(a->rank_iterations[0].window.number, 4);
  EXPECT_EQ(a->rank_iterations[0].window.op_count, 1258u);
  EXPECT_EQ(a->rank_iterations[0].window.start, 4458676422880181 + 1711964646000000000);
  EXPECT_EQ(s4.window_ns, 222054811);
  EXPECT_EQ(s4.compute_ns, 38506406);
  EXPECT_EQ(s4.communication_ns, 11989021);
  EXPECT_EQ(s4.memory_ns, 885588);
  EXPECT_EQ(s4.overlapped_communication_ns, 1825259);
  EXPECT_EQ(s4.busy_ns, 49438921);
  EXPECT_EQ(s5.window_ns, 213532750);
  EXPECT_EQ(s5.compute_ns, 38429422);
  EXPECT_EQ(s5.communication_ns, 12300029);
  EXPECT_EQ(s5.memory_ns, 867415);
  EXPECT_EQ(s5.overlapped_communication_ns, 1760420);
  EXPECT_EQ(s5.busy_ns, 49728926);
  EXPECT_EQ(s4.idle_ns, s4.window_ns - s4.busy_ns);
  EXPECT_EQ(s4.exposed_communication_ns, s4.communication_ns - s4.overlapped_communication_ns);
  ASSERT_EQ(a->critical_paths.size(), 2u);
  for (const CriticalPath& p : a->critical_paths) {
    std::int64_t sum = 0;
    for (auto v : p.attribution) sum += v;
    EXPECT_EQ(sum, p.length());
  }
}

TEST(KinetoImport, TwoRanksOfOneJobLoadAsOneRun) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  ScratchDir dir;
  const std::vector<std::filesystem::path> files{kineto("trace_filter/sampled_rank-0.json.gz"),
                                                 kineto("trace_filter/sampled_rank-1.json.gz")};
  auto report = importKineto(files, dir.path());
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->stores.size(), 2u);
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->ranks.size(), 2u);
  EXPECT_EQ(m->ranks[0].rank, 0);
  EXPECT_EQ(m->ranks[1].rank, 1);
  EXPECT_EQ(m->ranks[0].world_size, 128);
  EXPECT_EQ(m->ranks[0].op_count, 1154u + 40 + 10);
  EXPECT_EQ(m->ranks[1].op_count, m->ops.size() - m->ranks[0].op_count);
  auto a = analyze(*m);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->iterations.numbers, (std::vector<std::int64_t>{551, 552}));
  EXPECT_EQ(a->rank_iterations.size(), 4u);
}

TEST(KinetoImport, NanosecondTimestampsAreExact) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  ScratchDir dir;
  const std::filesystem::path file = kineto("ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  auto report = importKineto(std::span(&file, 1), dir.path());
  ASSERT_TRUE(report.ok()) << report.message();
  // Kernels such as "ts": 1712195495505772.8 would lose their tenths of a microsecond in a
  // double (0.25 us apart at that magnitude); the store keeps them.
  auto r = trace::StoreReader::open(report->stores[0].file);
  ASSERT_TRUE(r.ok());
  std::int64_t sub_microsecond = 0, ops = 0;
  ASSERT_TRUE(r->forEachOp([&](const trace::OpRow& row) {
                 ++ops;
                 sub_microsecond += row.start_ns % 1000 != 0;
               }).ok());
  EXPECT_GT(ops, 0);
  EXPECT_GT(sub_microsecond, ops / 2);
}

TEST(KinetoImport, EventSyncTracesGetTheirEventRecordsBack) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  ScratchDir dir;
  const std::filesystem::path file = kineto("critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
  auto report = importKineto(std::span(&file, 1), dir.path());
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_GT(report->stores[0].derived_event_records, 0);
  auto m = loadRun(dir.path());
  ASSERT_TRUE(m.ok());
  std::size_t event_flows = 0;
  for (Index e = 0; e < m->flows.size(); ++e) event_flows += m->flows.kind(e) == FlowKind::EventWait;
  EXPECT_GT(event_flows, 0u);
  EXPECT_EQ(m->host_syncs.size(), 4u);  // of the 5 cuda_sync events: 3 Event Sync, 1 Context Sync (the 5th is a stream wait)
}

// Every real trace imports and analyses.
TEST(KinetoImport, EveryRealTraceImportsAndAnalyses) {
  ASSERT_TRUE(testing::tracesPresent("kineto"));
  std::size_t traces = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::tracesDir() / "kineto")) {
    if (entry.path().extension() != ".gz") continue;
    ++traces;
    SCOPED_TRACE(entry.path().string());
    ScratchDir dir;
    const std::filesystem::path file = entry.path();
    auto report = importKineto(std::span(&file, 1), dir.path());
    ASSERT_TRUE(report.ok()) << report.message();
    auto m = loadRun(dir.path());
    ASSERT_TRUE(m.ok()) << m.message();
    auto a = analyze(*m);
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_FALSE(a->rank_iterations.empty());
  }
  EXPECT_GT(traces, 0u) << "no .json.gz trace under " << (testing::tracesDir() / "kineto").string();
}

std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

constexpr const char* kSmallTrace = R"({"distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100.5, "dur": 10,
  "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 90, "dur": 2,
  "args": {"correlation": 1}}]})";

std::string importError(const ScratchDir& dir, const std::string& name, const std::string& bytes) {
  const auto file = dir / name;
  testing::writeFile(file, bytes);
  auto r = importKineto(std::span(&file, 1), dir / "out");
  return r.ok() ? std::string("(imported)") : r.message();
}

TEST(KinetoImport, SmallTraceAsJsonAndAsGzip) {
  ScratchDir dir;
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"t.json", kSmallTrace}, {"t.json.gz", gzip(kSmallTrace)}}) {
    SCOPED_TRACE(name);
    const auto file = dir / name;
    testing::writeFile(file, bytes);
    const auto out = dir / (name + ".run");
    auto r = importKineto(std::span(&file, 1), out);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->stores[0].rank, 3);
    auto m = loadRun(out);
    ASSERT_TRUE(m.ok());
    ASSERT_EQ(m->ops.size(), 1u);
    EXPECT_EQ(m->ops.start[0], 100500);
    EXPECT_EQ(m->ops.end[0], 110500);
    EXPECT_EQ(m->launchOf(0), 0u);
  }
}

// Thread names are looked for around each "thread_name" key; a file with 200 000 of them in
// one large object made that look through the object from every key (quadratic: hours). The
// import now finishes, with its event, and the names past the search's budget go unnamed.
TEST(KinetoImport, ManyThreadNameKeysInOneObjectImportInLinearTime) {
  ScratchDir dir;
  std::string text = std::string(kSmallTrace, std::strlen(kSmallTrace) - 1) + R"(, "padding": {)";
  for (int i = 0; i < 200'000; ++i) text += R"("thread_name": 0, )";
  text += R"("end": 0}})";
  const auto file = dir / "many-keys.json";
  testing::writeFile(file, text);
  auto r = importKineto(std::span(&file, 1), dir / "run");
  ASSERT_TRUE(r.ok()) << r.message();
  auto m = loadRun(dir / "run");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ops.size(), 1u);
}

TEST(KinetoImport, BadInputsFailWithASentence) {
  ScratchDir dir;
  const std::string gz = gzip(kSmallTrace);
  // Cut off before its first complete event (kineto_cut_test.cpp cuts traces after it).
  EXPECT_NE(importError(dir, "trunc.json.gz", gz.substr(0, 12)).find("was cut off before its first complete trace event"),
            std::string::npos);
  EXPECT_NE(importError(dir, "trunc.json", std::string(kSmallTrace).substr(0, 120)).find("was cut off before its first complete trace event"),
            std::string::npos);
  EXPECT_NE(importError(dir, "garbage.json.gz", gz.substr(0, 10) + std::string(64, 'x')).find("not valid gzip"), std::string::npos);
  EXPECT_NE(importError(dir, "garbage.json", "{\"traceEvents\": [{\"ph\" \"X\"}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(importError(dir, "other.json", R"({"hello": [1, 2]})").find("no traceEvents"), std::string::npos);
  EXPECT_NE(importError(dir, "array.json", "[1, 2, 3]").find("not a Chrome trace"), std::string::npos);
  EXPECT_NE(importError(dir, "badts.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "soon"}]})")
                .find("time that is not a number"),
            std::string::npos);
  // A failed import leaves no store behind (the store is written while the file is parsed).
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "rank-0.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "rank-0.sqlite-wal"));
  const auto missing = dir / "missing.json";
  auto r = importKineto(std::span(&missing, 1), dir / "out2");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("cannot read"), std::string::npos);
}

// The tests' own two-rank trace (kineto_trace_writer.hpp), whose numbers follow from its
// description: per step, compute is gemm_fwd + gemm_bwd + embedding_bwd (rank 1's gemm_bwd 30 µs
// longer), the all-reduce overlaps embedding_bwd for 95 µs on both ranks, the copy and the memset
// take 22 µs, and rank 0 waits 30 µs for rank 1 at each all-reduce.
TEST(KinetoImport, GeneratedTwoRankTraceGivesItsDescribedMetrics) {
  ScratchDir dir;
  std::vector<std::filesystem::path> files;
  for (int rank = 0; rank < 2; ++rank) {
    files.push_back(dir / ("rank-" + std::to_string(rank) + ".json"));
    testing::writeFile(files.back(), testing::kinetoTrace(rank));
  }
  auto report = importKineto(files, dir / "run");
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_EQ(report->stores.size(), 2u);
  for (const ImportedStore& s : report->stores) {
    EXPECT_EQ(s.collectives, 3);
    EXPECT_EQ(s.allocations, 1);
    EXPECT_EQ(s.derived_event_records, 3);
  }
  auto m = loadRun(dir / "run");
  ASSERT_TRUE(m.ok()) << m.message();
  auto a = analyze(*m);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->iterations.numbers, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(a->collectives.complete, 3);
  ASSERT_EQ(a->rank_iterations.size(), 6u);
  for (const RankIterationMetrics& it : a->rank_iterations) {
    const std::int32_t rank = m->ranks[it.rank].rank;
    SCOPED_TRACE("rank " + std::to_string(rank) + ", step " + std::to_string(it.window.number));
    EXPECT_EQ(it.time.compute_ns, 600'000 + 30'000 * rank);
    EXPECT_EQ(it.time.communication_ns, 200'000 - 30'000 * rank);
    EXPECT_EQ(it.time.overlapped_communication_ns, 95'000);
    EXPECT_EQ(it.time.memory_ns, 22'000);
    EXPECT_EQ(it.collective_wait_ns, rank == 0 ? 30'000 : 0);
  }
}

TEST(KinetoImport, RefusesToOverwriteAStore) {
  ScratchDir dir;
  const auto file = dir / "t.json";
  testing::writeFile(file, kSmallTrace);
  ASSERT_TRUE(importKineto(std::span(&file, 1), dir / "run").ok());
  auto again = importKineto(std::span(&file, 1), dir / "run");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("rank-3.sqlite"), std::string::npos) << again.message();
}

}  // namespace
}  // namespace syncopate::analyzer
