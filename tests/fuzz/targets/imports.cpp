// The importers: a trace file as `syncopate import` reads it, into a store written beside it.
#include <array>
#include <filesystem>

#include "../fuzz_targets.hpp"
#include "../scratch.hpp"
#include "syncopate/analyzer/importers.hpp"

namespace syncopate::fuzz {

namespace {

template <typename ImportFn>
Verdict importFile(std::string_view name, Input input, ImportFn import) {
  const std::array files{freshScratchFile(name, input)};
  auto report = import(std::span<const std::filesystem::path>(files), scratchDirectory() / "imported");
  if (!report) return report.message();
  return std::nullopt;
}

}  // namespace

Verdict kineto_json(Input input) {
  return importFile("rank-0.json", input, [](auto files, const auto& out) { return analyzer::importKineto(files, out); });
}

Verdict kineto_gzip(Input input) {
  return importFile("rank-0.json.gz", input, [](auto files, const auto& out) { return analyzer::importKineto(files, out); });
}

Verdict nsys_sqlite(Input input) {
  return importFile("report.sqlite", input, [](auto files, const auto& out) { return analyzer::importNsys(files, out); });
}

}  // namespace syncopate::fuzz
