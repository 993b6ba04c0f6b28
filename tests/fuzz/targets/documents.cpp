// The small JSON documents a user or another process hands Syncopate.
#include <string>

#include "../fuzz_targets.hpp"
#include "../scratch.hpp"
#include "simgpu/core/profile.hpp"
#include "syncopate/collector/control_files.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::fuzz {

namespace {

std::string_view textOf(Input input) { return {reinterpret_cast<const char*>(input.data()), input.size()}; }

}  // namespace

Verdict machine_profile(Input input) {
  simgpu::ProfileResult parsed = simgpu::parseProfile(textOf(input), "fuzz input");
  if (!parsed.profile) return parsed.error;
  return std::nullopt;
}

Verdict run_meta(Input input) {
  freshScratchFile(trace::kRunMetaFileName, input);
  auto meta = trace::readRunMeta(scratchDirectory());
  if (!meta) return meta.message();
  // What is read is written back as `record` and the importers rewrite it.
  if (trace::Status written = trace::writeRunMeta(scratchDirectory(), *meta); !written) return written.message();
  return std::nullopt;
}

Verdict attach_request(Input input) {
  std::string error;
  auto request = collector::parseRequest(textOf(input), error);
  if (!request) return error;
  (void)collector::formatRequest(*request);
  return std::nullopt;
}

Verdict attach_status(Input input) {
  std::string error;
  auto status = collector::parseStatus(textOf(input), error);
  if (!status) return error;
  (void)collector::formatStatus(*status);
  return std::nullopt;
}

}  // namespace syncopate::fuzz
