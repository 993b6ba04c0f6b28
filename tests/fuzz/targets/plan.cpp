// The plan reader. A plan carries a checksum of its content, so a changed byte is refused
// before any group is read: each input is read as it is, and again with its checksum made to
// match (when it is a JSON object at all), so that mutations reach every field the reader
// checks, as a plan written by a newer or broken tool would.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../fuzz_targets.hpp"
#include "syncopate/trace/hash.hpp"
#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/plan.hpp"

namespace syncopate::fuzz {

namespace {

std::string withMatchingChecksum(nlohmann::json plan) {
  plan.erase("checksum");
  const std::uint64_t sum = trace::fnv1a(trace::jsonText(plan));
  plan["checksum"] = fmt::format("fnv1a64:{:016x}", sum);
  return trace::jsonText(plan);
}

}  // namespace

Verdict plan(Input input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  auto as_given = tuner::parsePlan(text);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    auto resealed = tuner::parsePlan(withMatchingChecksum(doc));
    if (!resealed) return resealed.message();
    // Whatever the reader accepts, the runtime turns into rules and the plan writes back.
    (void)resealed->rules();
    (void)tuner::planJson(*resealed);
  }
  if (!as_given) return as_given.message();
  return std::nullopt;
}

}  // namespace syncopate::fuzz
