// A JSON text cut off while it was written (a profiler killed while saving its trace simply
// stops, possibly inside an event or a string): where it can be cut again so that everything
// before is whole, and what then closes the document.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace syncopate::analyzer::import {

struct JsonCut {
  std::size_t keep = 0;  // bytes kept: up to the end of the last whole value of the outer two levels
  std::string closing;   // what closes the object (and the array) still open there: "}" or "]}" ...
};

// For a text that is the beginning of a JSON object that stops before the object closes
// (every token valid JSON up to there, outside the strings whose content it skips): the last
// place where a member of the object, or an element of one of its members (an event of
// traceEvents), has just ended. Values nested deeper are kept whole or not at all, so an event
// is never kept in part. A text of nothing but white space stopped before the object opened
// (keep 0, closing "{}"). nullopt when the text is not such a beginning: not an object, an
// object that closes (so it was not cut), or damaged (what follows the damage is no JSON,
// which a damaged quote or bracket makes plain within a few bytes). Whoever uses the cut
// parses the kept text, which checks what this skips.
// One pass over the text; no allocation beyond a stack of kMaxJsonDepth containers (deeper
// nesting is nullopt, as simdjson refuses it too).
inline constexpr std::size_t kMaxJsonDepth = 1024;
std::optional<JsonCut> findJsonCut(std::string_view text);

}  // namespace syncopate::analyzer::import
