// The one list of what Syncopate counts or reports instead of dropping it (diagnostics.inc):
// each entry's stable key, severity and sentence. Whoever writes a counter or a diagnostic
// names its entry (diagnostics::rows_lost, ...) rather than spelling the name or the sentence.
#pragma once

#include <cstdint>
#include <string_view>

#include "syncopate/trace/types.hpp"

namespace syncopate::trace::diagnostics {

enum Key : std::uint16_t {
#define SYNCOPATE_DIAGNOSTIC(key, severity, sentence) key,
#include "syncopate/trace/diagnostics.inc"
};

struct Entry {
  std::string_view key;  // the counter's name, where it is a counter
  Severity severity;
  std::string_view sentence;  // {} where an argument goes
};

inline constexpr Entry kEntries[] = {
#define SYNCOPATE_DIAGNOSTIC(key, severity, sentence) {#key, Severity::severity, sentence},
#include "syncopate/trace/diagnostics.inc"
};

constexpr const Entry& entry(Key key) noexcept { return kEntries[key]; }

}  // namespace syncopate::trace::diagnostics
