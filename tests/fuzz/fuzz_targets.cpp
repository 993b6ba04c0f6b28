#include "fuzz_targets.hpp"

#include <array>

namespace syncopate::fuzz {

namespace {
#define SYNCOPATE_FUZZ_TARGET_ENTRY(name, what) Target{#name, what, &name},
constexpr std::array kTargets{SYNCOPATE_FUZZ_TARGETS(SYNCOPATE_FUZZ_TARGET_ENTRY)};
#undef SYNCOPATE_FUZZ_TARGET_ENTRY
}  // namespace

std::span<const Target> targets() { return kTargets; }

const Target* findTarget(std::string_view name) {
  for (const Target& t : kTargets)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace syncopate::fuzz
