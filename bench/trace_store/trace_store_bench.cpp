// Micro-benchmarks of the trace library's hot and warm paths. Figures in docs/trace.md.
//   build/bin/trace_store_bench
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/spsc_ring.hpp"
#include "syncopate/trace/writer.hpp"
#include "workload.hpp"

namespace syncopate::trace::bench {
namespace {

std::filesystem::path freshDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "syncopate-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

// The collector's per-event cost: one 32-byte push (a drain every 4096 keeps room).
void BM_RingPush(benchmark::State& state) {
  auto ring = SpscRing<Record>::create(1 << 16);
  const Record record = OpRecord::launch(OpKind::Kernel, 1, 2, 3, 4, 5);
  std::uint64_t pushes = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ring->tryPush(record));
    if ((++pushes & 4095) == 0) {
      state.PauseTiming();
      ring->drain([](std::span<const Record>) {});
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RingPush);

// The lookup every NVTX push of a known name pays: wait-free, no lock.
void BM_InternKnownName(benchmark::State& state) {
  Catalog catalog;
  std::vector<std::string> names;
  for (int i = 0; i < 10'000; ++i) names.push_back("ProfilerStep#" + std::to_string(i) + "/forward/layer");
  for (const auto& n : names) catalog.intern(n);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(catalog.intern(names[i]));
    i = (i + 1) % names.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InternKnownName);

void BM_InternKnownShape(benchmark::State& state) {
  Catalog catalog;
  const StringId name = catalog.intern("gemm");
  std::vector<LaunchShape> shapes;
  for (std::uint32_t i = 0; i < 1'000; ++i) shapes.push_back({name, {i + 1, 1, 1}, {256, 1, 1}});
  for (const auto& s : shapes) catalog.internShape(s);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(catalog.internShape(shapes[i]));
    i = (i + 1) % shapes.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InternKnownShape);

// The writer alone: records appended and committed in batches of `range(0)`, the realistic
// mix of workload.hpp. Reports on-disk bytes per record after close.
void BM_WriterAppendFlush(benchmark::State& state) {
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  const std::filesystem::path dir = freshDirectory();
  Catalog catalog;
  Workload workload(catalog);
  auto writer = StoreWriter::createFile(dir / "bench.sqlite", {"bench", 1, 0, "synthetic"}, catalog);
  if (!writer.ok()) {
    state.SkipWithError(writer.message().c_str());
    return;
  }
  std::vector<Record> batch;
  std::uint64_t records = 0;
  for (auto _ : state) {
    state.PauseTiming();
    workload.next(batch, batch_size);
    state.ResumeTiming();
    if (!(*writer)->append(kNoThread, batch).ok() || !(*writer)->flush().ok()) {
      state.SkipWithError("write failed");
      break;
    }
    records += batch.size();
  }
  const auto path = (*writer)->path();
  (void)(*writer)->close();
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
  state.counters["disk_bytes_per_record"] =
      static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(records);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_WriterAppendFlush)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The analyzer's load path: every op of a store of `range(0)` records of the mix, scanned
// through the row callback (the store is written once, outside the timing).
void BM_ReaderScan(benchmark::State& state) {
  const std::filesystem::path dir = freshDirectory();
  Catalog catalog;
  Workload workload(catalog);
  {
    auto writer = StoreWriter::createFile(dir / "scan.sqlite", {"bench", 1, 0, "synthetic"}, catalog);
    std::vector<Record> batch;
    for (std::int64_t written = 0; writer.ok() && written < state.range(0); written += 100'000) {
      workload.next(batch, 100'000);
      (void)(*writer)->append(catalog.registerThread({1, kNoString}), batch);
    }
    if (!writer.ok() || !(*writer)->close().ok()) {
      state.SkipWithError("cannot write the store to scan");
      return;
    }
  }
  auto reader = StoreReader::open(dir / "scan.sqlite");
  if (!reader.ok()) {
    state.SkipWithError(reader.message().c_str());
    return;
  }
  std::int64_t rows = 0;
  for (auto _ : state) {
    std::int64_t sum = 0;
    (void)reader->forEachOp([&](const OpRow& op) { sum += op.end_ns - op.start_ns; ++rows; });
    (void)reader->forEachApiCall([&](const ApiCallRow& call) { sum += call.end_ns; ++rows; });
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(rows);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReaderScan)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace syncopate::trace::bench

BENCHMARK_MAIN();
