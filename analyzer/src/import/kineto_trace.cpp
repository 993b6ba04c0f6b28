#include "kineto_trace.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "json_cut.hpp"

namespace syncopate::analyzer::import {

namespace od = simdjson::ondemand;

KinetoCat categoryOf(std::string_view c) {
  static constexpr std::array<std::pair<std::string_view, KinetoCat>, 15> kCats{{
      {"kernel", KinetoCat::Kernel},
      {"gpu_memcpy", KinetoCat::GpuMemcpy},
      {"gpu_memset", KinetoCat::GpuMemset},
      {"cuda_runtime", KinetoCat::CudaRuntime},
      {"cuda_driver", KinetoCat::CudaDriver},
      {"cuda_sync", KinetoCat::CudaSync},
      {"cpu_op", KinetoCat::CpuOp},
      {"user_annotation", KinetoCat::UserAnnotation},
      {"gpu_user_annotation", KinetoCat::GpuUserAnnotation},
      {"python_function", KinetoCat::PythonFunction},
      {"cpu_instant_event", KinetoCat::CpuInstant},
      {"Trace", KinetoCat::Trace},
      {"ac2g", KinetoCat::Ac2g},
      {"async_cpu_to_gpu", KinetoCat::AsyncCpuToGpu},
      {"fwdbwd", KinetoCat::FwdBwd},
  }};
  for (const auto& [name, cat] : kCats)
    if (c == name) return cat;
  return KinetoCat::Other;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The characters of a JSON string token (quotes and the whitespace after it included) when it
// holds no escape; a null view otherwise (an escape, or not a string).
std::string_view withoutEscapes(std::string_view token) {
  token = trim(token);
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return {};
  const std::string_view inside = token.substr(1, token.size() - 2);
  return inside.find('\\') == std::string_view::npos ? inside : std::string_view{};
}

// Integers that some writers emit as floats (68.0).
bool getInt(od::value v, std::int64_t& out) {
  std::int64_t i = 0;
  if (!v.get_int64().get(i)) {
    out = i;
    return true;
  }
  double d = 0;
  if (!v.get_double().get(d) && std::isfinite(d)) {
    out = std::llround(d);
    return true;
  }
  return false;
}

// pid/tid: a number, a numeric string, or a label such as "Spans" (then absent).
std::int64_t getId(od::value v) {
  std::int64_t i = 0;
  if (getInt(v, i)) return i;
  return kAbsent;
}

constexpr std::size_t kBatchEvents = 8192;

class Parser {
 public:
  Parser(KinetoSummary& out, const std::string& file, StringTable& strings, KinetoSink& sink)
      : out_(out), file_(file), strings_(strings), sink_(sink) {}

  // Parses `text`; again after a cut text was closed (`cut`), from the start, handing over
  // only the events not handed over before.
  trace::Status parse(const TextBuffer& text, const KinetoCut* cut = nullptr) {
    out_ = KinetoSummary{};
    counts_.clear();
    failed_on_syntax_ = false;
    od::parser parser;
    od::document doc;
    if (auto err = parser.iterate(text.data(), text.size(), text.capacity()).get(doc)) return jsonError(err);
    od::object top;
    if (auto err = doc.get_object().get(top)) {
      if (err != simdjson::INCORRECT_TYPE) return jsonError(err);
      return trace::failure(file_ + " is not a Chrome trace: its JSON is not an object");
    }
    bool saw_events = false;
    for (auto field : top) {
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return jsonError(err);
      od::value v;
      if (auto err = field.value().get(v)) return jsonError(err);
      if (key == "traceEvents") {
        saw_events = true;
        if (!begun_) {
          begun_ = true;
          if (trace::Status s = sink_.begin(out_.header); !s) return s;
        }
        if (trace::Status s = parseEvents(v); !s) return s;
      } else if (key == "distributedInfo") {
        if (trace::Status s = parseDistributedInfo(v); !s) return s;
      } else if (key == "baseTimeNanoseconds") {
        std::int64_t base = 0;
        if (!getInt(v, base)) return trace::failure(file_ + ": baseTimeNanoseconds is not a number");
        out_.header.base_time_ns = base;
      } else if (key == "deviceProperties") {
        if (trace::Status s = parseDevices(v); !s) return s;
      } else if (key == "host_name" || key == "hostname") {
        std::string_view h;
        if (!v.get_string().get(h)) out_.header.host_name = std::string(h);
      }
    }
    if (cut && out_.json_events == 0)
      return trace::failure(file_ + " was cut off before its first complete trace event (" + describeCut(*cut) +
                            "): there is nothing to import");
    if (!saw_events) return trace::failure(file_ + " is not a Chrome trace: it has no traceEvents array");
    return {};
  }

  // Whether the last parse failed on the JSON itself (not on an event's content or the sink).
  bool failedOnSyntax() const { return failed_on_syntax_; }

 private:
  trace::Status jsonError(simdjson::error_code err) {
    failed_on_syntax_ = true;
    return trace::failure(file_ + " is not valid JSON (" + simdjson::error_message(err) + ")");
  }
  trace::Status badEvent(std::string_view what) const {
    return trace::failure(file_ + ": trace event " + std::to_string(out_.json_events) + " has " + std::string(what));
  }

  trace::Status parseDistributedInfo(od::value v) {
    od::object o;
    if (v.get_object().get(o)) return trace::failure(file_ + ": distributedInfo is not an object");
    for (auto f : o) {
      std::string_view key;
      if (f.unescaped_key().get(key)) return trace::failure(file_ + ": malformed distributedInfo");
      std::int64_t n = 0;
      if (key == "rank" && getInt(f.value(), n)) out_.header.rank = static_cast<std::int32_t>(n);
      if (key == "world_size" && getInt(f.value(), n)) out_.header.world_size = static_cast<std::int32_t>(n);
    }
    return {};
  }

  trace::Status parseDevices(od::value v) {
    od::array a;
    if (v.get_array().get(a)) return trace::failure(file_ + ": deviceProperties is not an array");
    for (auto d : a) {
      od::object o;
      if (d.get_object().get(o)) return trace::failure(file_ + ": deviceProperties holds a non-object");
      KinetoDevice dev;
      for (auto f : o) {
        std::string_view key;
        if (f.unescaped_key().get(key)) return trace::failure(file_ + ": malformed deviceProperties");
        std::int64_t n = 0;
        std::string_view s;
        if (key == "id" && getInt(f.value(), n)) dev.id = static_cast<std::int32_t>(n);
        else if (key == "name" && !f.value().get_string().get(s)) dev.name = std::string(s);
        else if (key == "numSms" && getInt(f.value(), n)) dev.sm_count = static_cast<std::int32_t>(n);
        else if (key == "totalGlobalMem" && getInt(f.value(), n)) dev.memory_bytes = n;
      }
      out_.header.devices.push_back(std::move(dev));
    }
    return {};
  }

  trace::Status parseEvents(od::value v) {
    od::array events;
    if (v.get_array().get(events)) return trace::failure(file_ + " is not a Chrome trace: traceEvents is not an array");
    batch_.events.reserve(kBatchEvents);
    for (auto element : events) {
      od::object o;
      if (auto err = element.get_object().get(o)) {
        if (err == simdjson::INCORRECT_TYPE) return badEvent("no object form");
        return jsonError(err);
      }
      KinetoEvent e;
      if (trace::Status s = parseEvent(o, e); !s) return s;
      ++out_.json_events;
      ++counts_[(static_cast<std::uint64_t>(static_cast<unsigned char>(e.ph)) << 32) | e.cat_name];
      if (out_.json_events <= handed_over_) continue;  // handed over by the parse before the text was closed
      handed_over_ = out_.json_events;
      batch_.events.push_back(e);
      if (batch_.events.size() == kBatchEvents)
        if (trace::Status s = flushBatch(); !s) return s;
    }
    return flushBatch();
  }

  trace::Status flushBatch() {
    if (batch_.events.empty() && batch_.new_strings.empty()) return {};
    trace::Status s = sink_.consume(std::move(batch_));
    batch_ = KinetoBatch{};
    batch_.events.reserve(kBatchEvents);
    return s;
  }

  StringId internString(od::value v) {
    std::string_view s = withoutEscapes(v.raw_json_token());
    // A string with escapes is unescaped by simdjson (into its buffer); most have none, and are
    // interned from the text itself.
    if (s.data() == nullptr && v.get_string().get(s)) return 0;
    const std::size_t known = strings_.size();
    const StringId id = strings_.intern(s);
    if (strings_.size() > known) batch_.new_strings.emplace_back(id, strings_[id]);
    return id;
  }

  trace::Status parseEvent(od::object o, KinetoEvent& e) {
    for (auto f : o) {
      od::raw_json_string key;
      if (auto err = f.key().get(key)) return jsonError(err);
      od::value v;
      if (auto err = f.value().get(v)) return jsonError(err);
      if (key == "ph") {
        std::string_view ph;
        if (v.get_string().get(ph) || ph.empty()) return badEvent("a \"ph\" that is not a phase letter");
        e.ph = ph[0];
      } else if (key == "cat") {
        e.cat_name = internString(v);
        e.cat = categoryOf(strings_[e.cat_name]);
      } else if (key == "name") {
        e.name = internString(v);
      } else if (key == "ts" || key == "dur") {
        const std::string_view token = v.raw_json_token();
        const auto ns = microsToNanos(trim(token));
        if (!ns) return badEvent("a time that is not a number (" + std::string(trim(token).substr(0, 32)) + ")");
        (key == "ts" ? e.ts : e.dur) = *ns;
      } else if (key == "pid") {
        e.pid = getId(v);
      } else if (key == "tid") {
        e.tid = getId(v);
      } else if (key == "id") {
        e.id = getId(v);
      } else if (key == "bp") {
        std::string_view bp;
        e.binding_end = !v.get_string().get(bp) && bp == "e";
      } else if (key == "args") {
        od::object args;
        if (v.get_object().get(args)) continue;  // args of another shape carry nothing we read
        if (trace::Status s = parseArgs(args, e); !s) return s;
      }
    }
    return {};
  }

  trace::Status parseArgs(od::object args, KinetoEvent& e) {
    for (auto f : args) {
      od::raw_json_string key;
      if (auto err = f.key().get(key)) return jsonError(err);
      od::value v;
      if (auto err = f.value().get(v)) return jsonError(err);
      // Events carry a dozen arguments of which a few matter: dispatching on the first letter
      // rejects the others after one comparison or two.
      std::int64_t n = 0;
      auto integer = [&](std::int64_t& out) {
        if (getInt(v, n)) out = n;
      };
      switch (key.raw()[0]) {
        case 'c':
          if (key == "correlation") integer(e.correlation);
          else if (key == "cuda_sync_kind") e.sync_kind = internString(v);
          break;
        case 'E':
          if (key == "External id") integer(e.external_id);
          break;
        case 's':
          if (key == "stream") integer(e.stream);
          break;
        case 'd':
          if (key == "device") integer(e.device);
          else if (key == "dtype") e.dtype = internString(v);
          break;
        case 'g':
        case 'b':
          if (key == "grid" || key == "block") {
            od::array a;
            if (v.get_array().get(a)) break;
            std::int32_t* dims = key == "grid" ? e.grid : e.block;
            int i = 0;
            for (auto x : a) {
              od::value xv;
              if (i < 3 && !x.get(xv) && getInt(xv, n)) dims[i] = static_cast<std::int32_t>(n);
              ++i;
            }
          } else if (key == "bytes") {
            integer(e.bytes);
          }
          break;
        case 'C':
          if (key == "Collective name") e.coll_name = internString(v);
          break;
        case 'P':
          if (key == "Process Group Name") e.pg_name = internString(v);
          else if (key == "Process Group Ranks") e.pg_ranks = internString(v);
          break;
        case 'I':
          if (key == "In msg nelems") integer(e.in_nelems);
          break;
        case 'O':
          if (key == "Out msg nelems") integer(e.out_nelems);
          break;
        case 'G':
          if (key == "Group size") integer(e.group_size);
          break;
        case 'w':
          if (key == "wait_on_stream") integer(e.wait_stream);
          else if (key == "wait_on_cuda_event_record_corr_id") integer(e.wait_record_corr);
          else if (key == "wait_on_cuda_event_id") integer(e.wait_event);
          break;
        case 'A':
          if (key == "Addr") integer(e.addr);
          break;
        case 'B':
          if (key == "Bytes") integer(e.mem_bytes);
          break;
        case 'D':
          if (key == "Device Type") integer(e.device_type);
          else if (key == "Device Id") integer(e.device_id);
          break;
        case 'n':
          if (key == "name") e.arg_name = internString(v);
          break;
        case 'l':
          if (key == "labels") e.arg_labels = internString(v);
          break;
        default: break;
      }
    }
    return {};
  }

  KinetoSummary& out_;
  const std::string& file_;
  StringTable& strings_;
  KinetoSink& sink_;
  KinetoBatch batch_;
  std::unordered_map<std::uint64_t, std::int64_t> counts_;  // (ph << 32 | category) -> events
  bool begun_ = false;              // sink_.begin() was called
  std::int64_t handed_over_ = 0;    // events put in a batch for the sink
  bool failed_on_syntax_ = false;

 public:
  void publishCounts() {
    for (const auto& [key, n] : counts_)
      out_.counts[{static_cast<char>(key >> 32), std::string(strings_[static_cast<StringId>(key & 0xffffffffu)])}] += n;
  }
};

}  // namespace

std::optional<std::int64_t> microsToNanos(std::string_view t) {
  if (t.empty()) return std::nullopt;
  bool negative = false;
  std::size_t i = 0;
  if (t[0] == '-') negative = true, ++i;
  std::int64_t whole = 0;
  std::size_t digits = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) {
    if (whole > (INT64_MAX / 1000 - 9) / 10) return std::nullopt;  // would overflow in ns
    whole = whole * 10 + (t[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  std::int64_t frac = 0;  // thousandths of a microsecond
  int frac_digits = 0;
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (frac_digits < 3) {
        frac = frac * 10 + (t[i] - '0');
        ++frac_digits;
      } else if (frac_digits == 3) {
        round_up = t[i] >= '5';
        ++frac_digits;
      }
    }
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    // Rare in traces; exactness matters less than range here.
    double d = 0;
    try {
      d = std::stod(std::string(t));
    } catch (...) {
      return std::nullopt;
    }
    if (!std::isfinite(d) || std::fabs(d) > 9.0e15) return std::nullopt;
    return std::llround(d * 1000.0);
  }
  if (i != t.size()) return std::nullopt;
  while (frac_digits < 3) frac *= 10, ++frac_digits;
  std::int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
  return negative ? -ns : ns;
}

std::string describeCut(const KinetoCut& cut) {
  std::string out = "its text stops at byte " + std::to_string(cut.text_bytes);
  if (cut.gzip_bytes) out += ", its gzip stream at compressed byte " + std::to_string(*cut.gzip_bytes) + " before its end";
  return out;
}

trace::Result<KinetoSummary> parseKinetoTrace(TextBuffer& text, const std::string& file_name, StringTable& strings,
                                              KinetoSink& sink) {
  KinetoSummary out;
  Parser parser(out, file_name, strings, sink);
  std::optional<KinetoCut> cut;
  if (text.gzipCut()) cut = KinetoCut{text.size(), text.gzipCut()};
  trace::Status status = parser.parse(text);
  if (!status && parser.failedOnSyntax()) {
    if (const std::optional<JsonCut> end = findJsonCut(text.text())) {
      cut = KinetoCut{text.size(), text.gzipCut()};
      if (!text.endWith(end->keep, end->closing)) return trace::failure("out of memory reading " + file_name);
      const trace::Status closed = parser.parse(text, &*cut);
      // Damage before the cut is still damage: the first parse's sentence says what it was.
      if (closed || !parser.failedOnSyntax()) status = closed;
    }
  }
  if (!status) return status;
  parser.publishCounts();
  out.cut = cut;
  return out;
}

std::map<std::int64_t, std::string> kinetoThreadNames(const TextBuffer& text) {
  std::map<std::int64_t, std::string> names;
  const std::string_view all = text.text();
  constexpr std::string_view kKey = "\"thread_name\"";
  od::parser parser;
  // memmem, not string_view::find: find() scans for the first character, '"', which is on every
  // other position of a JSON text.
  auto next = [&](std::size_t from) -> std::size_t {
    const void* hit = ::memmem(all.data() + from, all.size() - from, kKey.data(), kKey.size());
    return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - all.data()) : std::string_view::npos;
  };
  // A thread_name event is a line of about 150 bytes: no further than this is looked at around
  // a key, and all the looking together stays within a few times the text, whatever a damaged
  // or hostile file holds (scanning to the end from every key of a file of unclosed objects
  // was quadratic). Thread names only label threads: past the budget, the rest go unnamed.
  constexpr std::size_t kMaxMetadataEvent = 4096;
  std::size_t budget = 4 * all.size() + (std::size_t{1} << 20);
  for (std::size_t at = next(0); at != std::string_view::npos; at = next(at + kKey.size())) {
    // The metadata event is a flat object around the key, except for its args object.
    const std::size_t window_start = at > kMaxMetadataEvent ? at - kMaxMetadataEvent : 0;
    const std::size_t open = all.substr(window_start, at - window_start).rfind('{');
    if (open == std::string_view::npos) continue;
    const std::size_t begin = window_start + open;
    const std::size_t end = std::min(all.size(), begin + 2 * kMaxMetadataEvent);
    std::size_t close = begin, depth = 0;
    bool in_string = false;
    for (; close < end; ++close) {
      const char c = all[close];
      if (in_string) {
        if (c == '\\') ++close;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        break;
      }
    }
    const std::size_t looked_at = (at - window_start) + (close - begin);
    if (looked_at >= budget) break;
    budget -= looked_at;
    if (close >= end) continue;
    const simdjson::padded_string object(all.substr(begin, close - begin + 1));
    od::document doc;
    od::object o;
    if (parser.iterate(object).get(doc) || doc.get_object().get(o)) continue;
    std::string_view ph, name, thread;
    std::int64_t tid = kAbsent;
    for (auto f : o) {
      std::string_view key;
      od::value v;
      if (f.unescaped_key().get(key) || f.value().get(v)) break;
      std::string_view value;
      // A field of another type leaves the view empty, which the check below rejects.
      if (key == "ph" && !v.get_string().get(value)) ph = value;
      else if (key == "name" && !v.get_string().get(value)) name = value;
      else if (key == "tid") tid = getId(v);
      else if (key == "args") {
        od::object args;
        if (v.get_object().get(args)) continue;
        for (auto a : args) {
          std::string_view akey;
          if (!a.unescaped_key().get(akey) && akey == "name") {
            std::string_view t;
            if (!a.value().get_string().get(t)) thread = t;
          }
        }
      }
    }
    if (ph == "M" && name == "thread_name" && tid != kAbsent && !thread.empty()) names[tid] = std::string(thread);
  }
  return names;
}

}  // namespace syncopate::analyzer::import
