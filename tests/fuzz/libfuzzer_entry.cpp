// The libFuzzer executable (scripts/fuzz.sh): one binary holding every target, the target
// chosen by SYNCOPATE_FUZZ_TARGET. SYNCOPATE_FUZZ_TARGET=list prints the targets' names.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_targets.hpp"

namespace {
const syncopate::fuzz::Target* chosen = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("SYNCOPATE_FUZZ_TARGET");
  if (name && std::string_view(name) == "list") {
    for (const auto& t : syncopate::fuzz::targets())
      std::printf("%.*s\n", static_cast<int>(t.name.size()), t.name.data());
    std::exit(0);
  }
  chosen = name ? syncopate::fuzz::findTarget(name) : nullptr;
  if (!chosen) {
    std::fprintf(stderr, "syncopate_fuzz: set SYNCOPATE_FUZZ_TARGET to one of:");
    for (const auto& t : syncopate::fuzz::targets())
      std::fprintf(stderr, " %.*s", static_cast<int>(t.name.size()), t.name.data());
    std::fprintf(stderr, " (or 'list')\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const syncopate::fuzz::Verdict verdict = chosen->run({data, size});
  // A refusal the user could not read is a finding: stop here so libFuzzer keeps the input.
  if (verdict && verdict->empty()) {
    std::fprintf(stderr, "syncopate_fuzz: %.*s refused an input without saying why\n", static_cast<int>(chosen->name.size()),
                 chosen->name.data());
    std::abort();
  }
  return 0;
}
