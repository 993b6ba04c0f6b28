// A diagnostic of the analyzer or an importer from its entry in the one list
// (syncopate/trace/diagnostics.inc): the entry's severity, and its sentence with each {} filled
// in by `args`, which the compiler checks against the sentence.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>

#include "syncopate/trace/diagnostics.hpp"
#include "syncopate/trace/rows.hpp"

namespace syncopate::analyzer {

template <trace::diagnostics::Key key, class... Args>
trace::DiagnosticRow diagnosticRow(std::string source, std::int64_t count, Args&&... args) {
  constexpr trace::diagnostics::Entry entry = trace::diagnostics::entry(key);
  trace::DiagnosticRow row;
  row.severity = entry.severity;
  row.source = std::move(source);
  row.message = fmt::format(fmt::format_string<Args...>(entry.sentence), std::forward<Args>(args)...);
  row.count = count;
  return row;
}

}  // namespace syncopate::analyzer
