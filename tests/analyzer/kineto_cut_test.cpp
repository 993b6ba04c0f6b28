// A Kineto trace cut off while it was written (the job killed while the profiler saved it)
// imports every complete event before the cut, with a warning naming where the text stops; one
// cut before its first event, or damaged before it stops, is refused with a sentence.
// The expected counts are found here independently of the importer: the real trace is written
// one event after the other as `{"ph": ...}, {"ph": ...}`, so an event ends two bytes before the
// next one starts, and a cut keeps exactly the events that end at or before it.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "shared_traces.hpp"
#include "syncopate/analyzer/importers.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/diagnostics.hpp"

namespace syncopate::analyzer {
namespace {

using testing::ScratchDir;

const std::filesystem::path kTrace = "kineto/trace_filter/sampled_rank-0.json.gz";
constexpr std::int64_t kTraceEvents = 4855;  // rank 0 of trace_filter, as Python's json module counts them

// Inflates gzip bytes with zlib as far as they go (a stream cut off gives what it holds).
std::string inflatePrefix(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  std::string out;
  std::string chunk(1 << 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out > 0) break;  // the input stops before the stream's end
  }
  inflateEnd(&z);
  return out;
}

// The real trace's text and where each of its events starts and ends.
struct Events {
  std::string text;
  std::vector<std::size_t> start, end;  // end: one past the event's closing brace

  explicit Events(std::string t) : text(std::move(t)) {
    constexpr std::string_view kEventStart = "{\"ph\": ";
    for (std::size_t at = text.find(kEventStart); at != std::string::npos; at = text.find(kEventStart, at + 1))
      start.push_back(at);
    for (std::size_t k = 0; k + 1 < start.size(); ++k) end.push_back(start[k + 1] - 2);  // "}, " between events
    end.push_back(text.rfind("]}"));
  }
  std::int64_t completeBefore(std::size_t cut) const {
    return std::count_if(end.begin(), end.end(), [&](std::size_t e) { return e <= cut; });
  }
  // GPU ops (kernels, copies, memsets) among the events complete before `cut`.
  std::int64_t opsBefore(std::size_t cut) const {
    std::int64_t ops = 0;
    for (std::size_t k = 0; k < start.size() && end[k] <= cut; ++k)
      for (std::string_view cat : {"kernel", "gpu_memcpy", "gpu_memset"}) {
        const std::string head = "{\"ph\": \"X\", \"cat\": \"" + std::string(cat) + "\"";
        ops += text.compare(start[k], head.size(), head) == 0;
      }
    return ops;
  }
};

const Events& realTrace() {
  static const Events events(inflatePrefix(testing::readFile(testing::tracesDir() / kTrace)));
  return events;
}

trace::Result<ImportReport> importBytes(const ScratchDir& dir, const std::string& name, const std::string& bytes) {
  const auto file = dir / name;
  testing::writeFile(file, bytes);
  return importKineto(std::span(&file, 1), dir / (name + ".run"));
}

// The trace cut at `cut`, imported: exactly the complete events before the cut, the warning
// naming the cut, and the analyzer warning of it too.
void expectCutImport(const ScratchDir& dir, std::size_t cut) {
  SCOPED_TRACE("cut at byte " + std::to_string(cut));
  const Events& trace = realTrace();
  const std::string name = "cut-" + std::to_string(cut) + ".json";
  auto report = importBytes(dir, name, trace.text.substr(0, cut));
  ASSERT_TRUE(report.ok()) << report.message();
  const ImportedStore& s = report->stores.at(0);
  const std::int64_t kept = trace.completeBefore(cut);
  EXPECT_EQ(s.source_events, kept);
  EXPECT_EQ(s.ops, trace.opsBefore(cut));
  EXPECT_EQ(s.rank, 0);  // distributedInfo comes before the events
  ASSERT_EQ(s.warnings.size(), 1u);
  const std::string& warning = s.warnings[0];
  EXPECT_NE(warning.find("(its text stops at byte " + std::to_string(cut) + ")"), std::string::npos) << warning;
  EXPECT_NE(warning.find("the " + std::to_string(kept) + " complete events before the cut were imported"), std::string::npos)
      << warning;
  auto m = loadRun(dir / (name + ".run"));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(static_cast<std::int64_t>(m->ops.size()), s.ops);
  EXPECT_TRUE(std::any_of(m->diagnostics.begin(), m->diagnostics.end(), [&](const trace::DiagnosticRow& d) {
    return d.message == warning && d.severity == trace::Severity::Warning;
  }));
}

TEST(KinetoCut, RealTraceCutMidEventMidStringAndBetweenEvents) {
  ASSERT_TRUE(testing::tracesPresent(kTrace));
  const Events& trace = realTrace();
  ASSERT_EQ(static_cast<std::int64_t>(trace.start.size()), kTraceEvents);
  ScratchDir dir;
  const std::size_t k = trace.start.size() / 2;
  const std::size_t name_value = trace.text.find("\"name\": \"", trace.start[k]) + 9;
  ASSERT_LT(name_value, trace.end[k]);
  for (std::size_t cut : {trace.start[k] + 37,   // inside event k, after its category
                          name_value + 3,        // inside the string of its name
                          trace.end[k - 1],      // just after the closing brace of event k - 1
                          trace.end[k - 1] + 1,  // after the comma that follows it
                          trace.start[k],        // just before event k
                          trace.end.back(),      // every event complete, the array not closed
                          trace.text.size() - 1})  // only the object's closing brace missing
    expectCutImport(dir, cut);
  EXPECT_EQ(trace.completeBefore(trace.start[k] + 37), static_cast<std::int64_t>(k));
  EXPECT_EQ(trace.completeBefore(trace.end.back()), kTraceEvents);
}

TEST(KinetoCut, CutsAcrossTheWholeTraceKeepExactlyTheCompleteEvents) {
  ASSERT_TRUE(testing::tracesPresent(kTrace));
  const Events& trace = realTrace();
  ScratchDir dir;
  const std::size_t first = trace.end[0], span = trace.text.size() - first;
  for (std::size_t i = 0; i < 24; ++i) expectCutImport(dir, first + span * i / 24 + i * 7919 % 97);
}

TEST(KinetoCut, GzipCutInsideItsStream) {
  ASSERT_TRUE(testing::tracesPresent(kTrace));
  const Events& trace = realTrace();
  const std::string gz = testing::readFile(testing::tracesDir() / kTrace);
  ScratchDir dir;
  for (std::size_t compressed : {gz.size() / 4, gz.size() / 2, gz.size() - 20, gz.size() - 4}) {
    SCOPED_TRACE("gzip cut at compressed byte " + std::to_string(compressed));
    const std::string part = gz.substr(0, compressed);
    const std::size_t text_bytes = inflatePrefix(part).size();
    const std::string name = "cut-" + std::to_string(compressed) + ".json.gz";
    auto report = importBytes(dir, name, part);
    ASSERT_TRUE(report.ok()) << report.message();
    const ImportedStore& s = report->stores.at(0);
    EXPECT_EQ(s.source_events, trace.completeBefore(text_bytes));
    EXPECT_EQ(s.ops, trace.opsBefore(text_bytes));
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_NE(s.warnings[0].find("(its text stops at byte " + std::to_string(text_bytes) + ", its gzip stream at compressed byte " +
                                 std::to_string(compressed) + " before its end)"),
              std::string::npos)
        << s.warnings[0];
  }
  // Cut inside its 8-byte trailer, the stream has inflated the whole text: every event is kept.
  EXPECT_EQ(inflatePrefix(gz.substr(0, gz.size() - 4)), trace.text);
}

TEST(KinetoCut, CutBeforeTheFirstCompleteEventIsRefused) {
  ASSERT_TRUE(testing::tracesPresent(kTrace));
  const Events& trace = realTrace();
  ScratchDir dir;
  for (std::size_t cut : {std::size_t{10}, trace.start[0] + 20, trace.end[0] - 1}) {
    auto report = importBytes(dir, "early.json", trace.text.substr(0, cut));
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.message(), (dir / "early.json").string() + " was cut off before its first complete trace event (its text stops at byte " +
                                    std::to_string(cut) + "): there is nothing to import");
    EXPECT_FALSE(std::filesystem::exists(dir / "early.json.run" / "rank-0.sqlite"));  // no empty store left behind
  }
  const std::string gz = testing::readFile(testing::tracesDir() / kTrace);
  auto report = importBytes(dir, "early.json.gz", gz.substr(0, 6));  // inside the gzip header
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.message().find("was cut off before its first complete trace event (its text stops at byte 0, its gzip "
                                  "stream at compressed byte 6 before its end)"),
            std::string::npos)
      << report.message();
}

TEST(KinetoCut, DamageInTheMiddleIsStillRefused) {
  ASSERT_TRUE(testing::tracesPresent(kTrace));
  const Events& trace = realTrace();
  ScratchDir dir;
  const std::size_t k = trace.start.size() / 3;
  auto refusal = [&](const std::string& name, const std::string& bytes) {
    auto report = importBytes(dir, name, bytes);
    EXPECT_FALSE(report.ok()) << name;
    EXPECT_FALSE(std::filesystem::exists(dir / (name + ".run") / "rank-0.sqlite")) << name;
    return report.ok() ? std::string("(imported)") : report.message();
  };
  // An event's closing brace gone: the brackets no longer match where the document closes.
  std::string unbalanced = trace.text;
  unbalanced[trace.end[k] - 1] = ' ';
  EXPECT_NE(refusal("unbalanced.json", unbalanced).find("is not valid JSON ("), std::string::npos);
  // Cut off, and damaged before the cut: the damage is refused, not salvaged around.
  std::string damaged = trace.text.substr(0, trace.start[2 * k] + 50);
  damaged[trace.text.find("\": ", trace.start[k])] = '#';
  EXPECT_NE(refusal("damaged-and-cut.json", damaged).find("is not valid JSON ("), std::string::npos);
  EXPECT_EQ(refusal("text.json", "this is not JSON at all, only text\n"),
            (dir / "text.json").string() + " is not a Chrome trace: its JSON is not an object");
  EXPECT_EQ(refusal("array.json", "[{\"ph\": \"X\"}, {\"ph\": "),
            (dir / "array.json").string() + " is not a Chrome trace: its JSON is not an object");
  // Deflate data damaged in the middle of a whole stream: refused, not inflated up to the damage.
  std::string gz = testing::readFile(testing::tracesDir() / kTrace);
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 16; ++i) gz[i] = static_cast<char>(~gz[i]);
  EXPECT_NE(refusal("damaged.json.gz", gz).find("is not valid gzip (damaged at compressed byte "), std::string::npos);
}

// Cut just after an event's closing brace, a text still looks whole to the first parse until
// its very end: by then it has handed the store thousands of events in batches. Parsed again
// once closed, the trace hands over only the events it had not, so none is stored twice.
TEST(KinetoCut, CutAfterAnEventDeepInALongTrace) {
  constexpr int kEvents = 20000, kKept = 15000;
  std::string text = R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)";
  std::size_t cut = 0;
  for (int i = 0; i < kEvents; ++i) {
    text += (i == 0 ? "" : ", ");
    text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i) + R"(", "pid": 0, "tid": 7, "ts": )" +
            std::to_string(10 * i) + R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(i + 1) +
            "}}";
    if (i + 1 == kKept) cut = text.size();
  }
  text += "]}";
  ScratchDir dir;
  auto report = importBytes(dir, "long.json", text.substr(0, cut));
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->stores[0].source_events, kKept);
  EXPECT_EQ(report->stores[0].ops, kKept);
  auto m = loadRun(dir / "long.json.run");
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->ops.size(), static_cast<std::size_t>(kKept));
  EXPECT_EQ(m->str(m->ops.name[kKept - 1]), "k" + std::to_string(kKept - 1));
}

// Kineto writes baseTimeNanoseconds after the events: a cut that loses it says that times stay
// on the trace's own clock; one after it keeps it.
TEST(KinetoCut, WhatTheTraceSaysAfterItsEvents) {
  const std::string trace = R"({"distributedInfo": {"rank": 1, "world_size": 2}, "traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100.5, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 90, "dur": 2, "args": {"correlation": 1}}
 ], "baseTimeNanoseconds": 1700000000000000000, "traceName": "rank-1.json"})";
  ScratchDir dir;
  const std::size_t after_events = trace.find("], ") + 1, in_name = trace.find("rank-1.json");
  auto lost = importBytes(dir, "lost.json", trace.substr(0, after_events + 10));
  ASSERT_TRUE(lost.ok()) << lost.message();
  EXPECT_EQ(lost->stores[0].source_events, 2);
  EXPECT_EQ(lost->stores[0].rank, 1);
  ASSERT_EQ(lost->stores[0].warnings.size(), 1u);
  EXPECT_EQ(lost->stores[0].warnings[0],
            "the source trace was cut off while it was written (its text stops at byte " + std::to_string(after_events + 10) +
                "): the 2 complete events before the cut were imported, the rest is lost; the trace gives no "
                "baseTimeNanoseconds (Kineto writes it after the events), so times stay on the trace's own clock");
  auto kept = importBytes(dir, "kept.json", trace.substr(0, in_name));
  ASSERT_TRUE(kept.ok()) << kept.message();
  ASSERT_EQ(kept->stores[0].warnings.size(), 1u);
  EXPECT_EQ(kept->stores[0].warnings[0].find("baseTimeNanoseconds"), std::string::npos) << kept->stores[0].warnings[0];
  auto m = loadRun(dir / "kept.json.run");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->ranks[0].to_aligned_ns, 1700000000000000000);
}

}  // namespace
}  // namespace syncopate::analyzer
