// A private folder for the targets whose input is a file (traces, stores, meta.json): made
// once per process under $TMPDIR (scripts/fuzz.sh points it at memory), emptied before each
// input and removed when the process ends.
#pragma once

#include <filesystem>
#include <string_view>

#include "fuzz_targets.hpp"

namespace syncopate::fuzz {

// Empties the scratch folder and writes `input` into it as `name`; the file's path.
std::filesystem::path freshScratchFile(std::string_view name, Input input);

// The scratch folder itself (a run directory for the targets that need one).
const std::filesystem::path& scratchDirectory();

}  // namespace syncopate::fuzz
