#include "syncopate/analyzer/chrome_export.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace syncopate::analyzer {

namespace {

// Streams large documents to a file through one buffer, escaping JSON strings.
class JsonOut {
 public:
  explicit JsonOut(std::FILE* f) : f_(f) {}
  ~JsonOut() { flush(); }
  void raw(std::string_view s) {
    buf_.append(s.data(), s.data() + s.size());
    if (buf_.size() > (1 << 20)) flush();
  }
  template <class... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    if (buf_.size() > (1 << 20)) flush();
  }
  void string(std::string_view s) {
    buf_.push_back('"');
    for (char c : s) {
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\n': raw("\\n"); break;
        case '\t': raw("\\t"); break;
        default:
          if (static_cast<unsigned char>(c) < 0x20)
            format("\\u{:04x}", static_cast<int>(c));
          else
            buf_.push_back(c);
      }
    }
    buf_.push_back('"');
  }
  void flush() {
    if (buf_.size() > 0 && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) failed_ = true;
    buf_.clear();
  }
  bool failed() const { return failed_; }

 private:
  std::FILE* f_;
  fmt::memory_buffer buf_;
  bool failed_ = false;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class Exporter {
 public:
  Exporter(const RunModel& m, const Analysis* a, JsonOut& out) : m_(m), a_(a), out_(out), origin_(m.beginNs()) {}

  ChromeExportStats run() {
    out_.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"syncopate export\"},\"traceEvents\":[\n");
    metadata();
    ops();
    calls();
    ranges();
    syncs();
    collectiveFlows();
    criticalPaths();
    out_.raw("\n]}\n");
    return stats_;
  }

 private:
  // Microseconds since the origin with nanosecond decimals, exact.
  std::string ts(std::int64_t ns) const {
    const std::int64_t d = ns - origin_;
    const char* sign = d < 0 ? "-" : "";
    const std::int64_t a = d < 0 ? -d : d;
    return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
  }
  std::int64_t pid(Index rank) const { return m_.ranks[rank].rank >= 0 ? m_.ranks[rank].rank : 100000 + rank; }
  // Stream tracks get their own tid space, after any plausible OS thread id.
  static std::int64_t streamTid(Index stream) { return 1'000'000'000LL + stream; }

  void begin() {
    out_.raw(first_ ? " " : ",\n ");
    first_ = false;
    ++stats_.events;
  }

  void name(const char* what, std::int64_t p, std::int64_t t, std::string_view value, std::int64_t sort) {
    begin();
    out_.format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", what, p, t);
    out_.string(value);
    out_.raw("}}");
    begin();
    out_.format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
                std::string_view(what) == "process_name" ? "process_sort_index" : "thread_sort_index", p, t, sort);
  }

  void metadata() {
    for (Index r = 0; r < m_.ranks.size(); ++r) {
      const RankInfo& info = m_.ranks[r];
      name("process_name", pid(r), 0, fmt::format("rank {}{}", info.rank, info.host.empty() ? "" : " (" + info.host + ")"), pid(r));
      for (Index t = info.first_thread; t < info.first_thread + info.thread_count; ++t) {
        const ThreadInfo& th = m_.threads[t];
        name("thread_name", pid(r), th.tid,
             fmt::format("thread {}{}", th.tid, m_.str(th.name).empty() ? "" : " " + std::string(m_.str(th.name))), t);
      }
      for (Index s = info.first_stream; s < info.first_stream + info.stream_count; ++s) {
        const StreamInfo& st = m_.streams[s];
        name("thread_name", pid(r), streamTid(s), fmt::format("GPU {} {}", st.device, m_.str(st.name)), 1'000'000 + s);
      }
    }
  }

  void slice(std::int64_t p, std::int64_t t, std::string_view n, std::string_view cat, std::int64_t start, std::int64_t end) {
    begin();
    out_.format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{}.{:03},\"cat\":\"{}\",\"name\":", p, t, ts(start),
                (end - start) / 1000, (end - start) % 1000, cat);
    out_.string(n);
  }

  void flow(char ph, std::uint64_t id, std::int64_t p, std::int64_t t, std::int64_t at, std::string_view cat) {
    begin();
    out_.format("{{\"ph\":\"{}\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"cat\":\"{}\",\"name\":\"{}\"{}}}", ph, id, p, t,
                ts(at), cat, cat, ph == 'f' ? ",\"bp\":\"e\"" : "");
  }

  void ops() {
    for (Index op = 0; op < m_.ops.size(); ++op) {
      const Index s = m_.ops.stream[op];
      const Index r = m_.streams[s].rank;
      slice(pid(r), streamTid(s), m_.str(m_.ops.name[op]), toString(m_.ops.op_class[op]), m_.ops.start[op], m_.ops.end[op]);
      out_.format(",\"args\":{{\"kind\":\"{}\",\"stream\":{}", trace::toString(m_.ops.kind[op]), m_.streams[s].handle);
      if (m_.ops.bytes[op] >= 0) out_.format(",\"bytes\":{}", m_.ops.bytes[op]);
      if (const Index c = m_.collectiveOf(op); c != kNone) {
        out_.format(",\"collective\":\"{}\",\"comm\":{},\"seq\":{},\"comm_rank\":{}", trace::toString(m_.collectives.coll_type[c]),
                    m_.collectives.comm_id[c], m_.collectives.seq[c], m_.collectives.comm_rank[c]);
        if (m_.collectives.count[c] >= 0) out_.format(",\"count\":{}", m_.collectives.count[c]);
      }
      out_.raw("}}");
      if (const Index call = m_.ops.launch[op]; call != kNone) {
        const std::uint64_t id = ++flow_id_;
        flow('s', id, pid(r), m_.threads[m_.api_calls.thread[call]].tid, m_.api_calls.start[call], "launch");
        flow('f', id, pid(r), streamTid(s), m_.ops.start[op], "launch");
        ++stats_.flows;
      }
    }
  }

  void calls() {
    for (Index c = 0; c < m_.api_calls.size(); ++c) {
      const ThreadInfo& th = m_.threads[m_.api_calls.thread[c]];
      slice(pid(th.rank), th.tid, m_.str(m_.api_calls.name[c]), trace::toString(m_.api_calls.domain[c]), m_.api_calls.start[c],
            m_.api_calls.end[c]);
      out_.raw("}");
    }
  }

  void ranges() {
    for (Index i = 0; i < m_.ranges.size(); ++i) {
      const Index r = m_.ranges.rank[i];
      const Index t = m_.ranges.thread[i];
      const std::int64_t tid = t == kNone ? 0 : m_.threads[t].tid;
      const std::string_view domain = m_.str(m_.ranges.domain[i]);
      slice(pid(r), tid, m_.str(m_.ranges.name[i]), domain.empty() ? "nvtx" : domain, m_.ranges.start[i], m_.ranges.end[i]);
      out_.raw("}");
    }
  }

  void syncs() {
    for (Index h = 0; h < m_.host_syncs.size(); ++h) {
      const Index call = m_.host_syncs.api_call[h];
      const std::int64_t tid = call == kNone ? 0 : m_.threads[m_.api_calls.thread[call]].tid;
      slice(pid(m_.host_syncs.rank[h]), tid, fmt::format("host sync ({})", trace::toString(m_.host_syncs.sync_kind[h])), "sync",
            m_.host_syncs.start[h], m_.host_syncs.end[h]);
      out_.raw("}");
    }
  }

  // The last rank to arrive points at every other rank's op of the same call (they waited for
  // it); a send points at its receive.
  void collectiveFlows() {
    for (Index k = 0; k < m_.matches.size(); ++k) {
      const auto parts = m_.matches.of(k);
      if (parts.size() < 2) continue;
      const bool p2p = m_.matches.coll_type[k] == trace::CollType::Send;
      Index from = m_.collectives.op[parts[0]];
      if (!p2p)
        for (Index row : parts)
          if (m_.ops.start[m_.collectives.op[row]] > m_.ops.start[from]) from = m_.collectives.op[row];
      const std::int64_t at = m_.ops.start[from];
      for (Index row : parts) {
        const Index to = m_.collectives.op[row];
        if (to == from) continue;
        const std::uint64_t id = ++flow_id_;
        const char* cat = p2p ? "send_recv" : "collective";
        flow('s', id, pid(m_.rankOfOp(from)), streamTid(m_.ops.stream[from]), at, cat);
        flow('f', id, pid(m_.rankOfOp(to)), streamTid(m_.ops.stream[to]), std::max(at, m_.ops.start[to]), cat);
        ++stats_.flows;
      }
    }
  }

  void criticalPaths() {
    if (!a_ || a_->critical_paths.empty()) return;
    constexpr std::int64_t kPid = -1;
    name("process_name", kPid, 0, "critical path", -1);
    for (const CriticalPath& p : a_->critical_paths) {
      for (const PathSegment& seg : p.segments) {
        std::string_view what;
        switch (seg.node.kind()) {
          case NodeRef::Kind::Op: what = m_.str(m_.ops.name[seg.node.index()]); break;
          case NodeRef::Kind::ApiCall: what = m_.str(m_.api_calls.name[seg.node.index()]); break;
          case NodeRef::Kind::HostSync: what = "host sync"; break;
        }
        slice(kPid, 0, fmt::format("{}: {}", toString(seg.category), what), toString(seg.category), seg.start, seg.end);
        out_.format(",\"args\":{{\"iteration\":{},\"rank\":{}}}}}", p.iteration, m_.ranks[seg.rank].rank);
      }
    }
  }

  const RunModel& m_;
  const Analysis* a_;
  JsonOut& out_;
  std::int64_t origin_;
  bool first_ = true;
  std::uint64_t flow_id_ = 0;
  ChromeExportStats stats_;
};

}  // namespace

trace::Result<ChromeExportStats> exportChromeTrace(const RunModel& model, const Analysis* analysis,
                                                   const std::filesystem::path& file) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(file.c_str(), "wb"));
  if (!f) return trace::failure("cannot create " + file.string() + ": " + std::strerror(errno));
  ChromeExportStats stats;
  {
    JsonOut out(f.get());
    stats = Exporter(model, analysis, out).run();
    out.flush();
    if (out.failed()) return trace::failure("cannot write " + file.string() + " (disk full?)");
  }
  if (std::fclose(f.release()) != 0) return trace::failure("cannot write " + file.string() + ": " + std::strerror(errno));
  return stats;
}

}  // namespace syncopate::analyzer
