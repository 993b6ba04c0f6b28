// The collector's recording pipeline at a chosen rate: producer threads push records into
// their own SpscRing (as traced threads do), one writer thread drains every ring every few
// milliseconds and flushes every 100 ms (as the collector's background thread does).
// Prints what was pushed, dropped and written, and the bytes per record in memory and on disk.
//
//   build/bin/trace_store_sustained [--rate RECORDS_PER_S] [--seconds S] [--producers N]
//                                   [--ring CAPACITY] [--flush-ms MS] [--dir DIR]
// --rate 0 pushes as fast as the producers can (the writer then falls behind and drops are
// expected); any other rate is split evenly between the producers.
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/spsc_ring.hpp"
#include "syncopate/trace/writer.hpp"
#include "workload.hpp"

namespace {

using namespace syncopate::trace;
using Clock = std::chrono::steady_clock;

struct Options {
  double rate = 1'000'000;
  double seconds = 5;
  int producers = 1;
  std::size_t ring = 1 << 16;
  int flush_ms = 100;
  std::string dir;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "trace_store_sustained: %s needs a value\n", arg.c_str());
      return false;
    }
    const char* value = argv[++i];
    char* end = nullptr;
    const double number = std::strtod(value, &end);
    const bool numeric = end != value && *end == '\0' && number >= 0;
    if (arg == "--dir") {
      o.dir = value;
      continue;
    }
    if (!numeric) {
      std::fprintf(stderr, "trace_store_sustained: %s wants a non-negative number, not '%s'\n", arg.c_str(), value);
      return false;
    }
    if (arg == "--rate") {
      o.rate = number;
    } else if (arg == "--seconds") {
      o.seconds = number;
    } else if (arg == "--producers" && number >= 1) {
      o.producers = static_cast<int>(number);
    } else if (arg == "--ring" && number >= 2) {
      o.ring = static_cast<std::size_t>(number);
    } else if (arg == "--flush-ms" && number >= 1) {
      o.flush_ms = static_cast<int>(number);
    } else {
      std::fprintf(stderr, "trace_store_sustained: unknown or invalid option %s %s\n", arg.c_str(), value);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  std::filesystem::path dir = options.dir;
  const bool own_dir = dir.empty();
  if (own_dir) {
    std::string pattern = (std::filesystem::temp_directory_path() / "syncopate-sustained-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("trace_store_sustained: mkdtemp");
      return 1;
    }
    dir = pattern;
  }

  Catalog catalog;
  bench::Workload workload(catalog);
  // Records are generated before the clock starts, so producers only push.
  std::vector<Record> records;
  workload.next(records, 1 << 20);

  auto created = StoreWriter::create(dir, {"bench", 0, 0, "synthetic"}, catalog);
  if (!created.ok()) {
    std::fprintf(stderr, "trace_store_sustained: %s\n", created.message().c_str());
    return 1;
  }
  StoreWriter& writer = **created;

  std::vector<std::unique_ptr<SpscRing<Record>>> rings;
  for (int p = 0; p < options.producers; ++p) rings.push_back(SpscRing<Record>::create(options.ring));
  std::atomic<bool> stop{false};
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(options.seconds);

  std::vector<std::thread> producers;
  for (int p = 0; p < options.producers; ++p) {
    producers.emplace_back([&, p] {
      SpscRing<Record>& ring = *rings[p];
      const double per_producer = options.rate / options.producers;
      constexpr std::size_t kChunk = 1024;  // one wake-up per ms at 1M records/s
      std::size_t next = static_cast<std::size_t>(p) * 4096 % records.size();
      std::uint64_t sent = 0;
      while (Clock::now() < deadline) {
        for (std::size_t i = 0; i < kChunk; ++i) {
          ring.tryPush(records[next]);
          next = next + 1 == records.size() ? 0 : next + 1;
        }
        sent += kChunk;
        if (per_producer > 0) {
          std::this_thread::sleep_until(start + std::chrono::duration<double>(sent / per_producer));
        }
      }
    });
  }

  // The writer thread's loop: drain every ring often, flush every flush_ms. Its CPU time is
  // measured too: on a shared machine the wall clock also counts other people's work.
  const auto thread_cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
  };
  const double cpu_start = thread_cpu();
  std::uint64_t failed_writes = 0;
  double longest_flush = 0;  // the longest stall of the drain loop, which the rings must absorb
  auto last_flush = Clock::now();
  const auto drain_all = [&] {
    for (std::size_t p = 0; p < rings.size(); ++p) {
      rings[p]->drain([&](std::span<const Record> span) {
        if (!writer.append(static_cast<ThreadId>(p + 1), span).ok()) ++failed_writes;
      });
    }
  };
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    drain_all();
    if (Clock::now() - last_flush >= std::chrono::milliseconds(options.flush_ms)) {
      const auto flush_start = Clock::now();
      if (!writer.flush().ok()) ++failed_writes;
      last_flush = Clock::now();
      longest_flush = std::max(longest_flush, std::chrono::duration<double>(last_flush - flush_start).count());
    }
  }
  for (auto& t : producers) t.join();
  drain_all();
  const Status closed = writer.close();
  const double writer_cpu = thread_cpu() - cpu_start;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  std::uint64_t pushed = 0, dropped = 0;
  for (const auto& ring : rings) {
    pushed += ring->pushed();
    dropped += ring->dropped();
  }
  const WriterStats stats = writer.stats();
  const auto store = writer.path();
  const double disk = static_cast<double>(std::filesystem::file_size(store));
  std::printf("producers           %d (target %.0f records/s in all)\n", options.producers, options.rate);
  std::printf("elapsed             %.2f s\n", elapsed);
  std::printf("records pushed      %llu (%.0f /s)\n", static_cast<unsigned long long>(pushed), pushed / elapsed);
  std::printf("records dropped     %llu (%.3f%%)\n", static_cast<unsigned long long>(dropped),
              pushed + dropped > 0 ? 100.0 * dropped / static_cast<double>(pushed + dropped) : 0.0);
  std::printf("records written     %llu (%.0f /s)\n", static_cast<unsigned long long>(stats.records_appended),
              stats.records_appended / elapsed);
  std::printf("writer CPU          %.2f s: %.2f us per record, %.0f records per CPU-second\n", writer_cpu,
              1e6 * writer_cpu / static_cast<double>(stats.records_appended),
              static_cast<double>(stats.records_appended) / writer_cpu);
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) std::printf("load average        %.1f on %u cores\n", load[0], std::thread::hardware_concurrency());
  std::printf("flushes             %llu (%llu failed writes), longest %.1f ms\n",
              static_cast<unsigned long long>(stats.flushes), static_cast<unsigned long long>(failed_writes),
              1e3 * longest_flush);
  std::printf("memory per record   %zu bytes (ring: %zu records = %zu KiB per thread)\n", sizeof(Record),
              rings[0]->capacity(), rings[0]->capacity() * sizeof(Record) / 1024);
  std::printf("disk per record     %.1f bytes (%s, %.1f MB)\n", disk / static_cast<double>(stats.records_appended),
              store.filename().c_str(), disk / 1e6);
  if (!closed.ok()) std::fprintf(stderr, "trace_store_sustained: %s\n", closed.message().c_str());
  if (own_dir) std::filesystem::remove_all(dir);
  return closed.ok() && failed_writes == 0 ? 0 : 1;
}
