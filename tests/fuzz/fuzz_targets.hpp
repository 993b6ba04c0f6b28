// One function per input a user can hand Syncopate, each taking the bytes as that input and
// going through what the product does with it (docs/reliability.md, "Fuzzed inputs"). Both the
// libFuzzer executable (scripts/fuzz.sh) and the regression replay (fuzz_replay_test.cpp) call
// them, so a crash found by the one is replayed by the other exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace syncopate::fuzz {

// What a user would see: nothing when the input was accepted, else the sentence that refused
// it. A refusal without a sentence is a defect as much as a crash is.
using Verdict = std::optional<std::string>;
using Input = std::span<const std::uint8_t>;

// X(name, what it reads)
#define SYNCOPATE_FUZZ_TARGETS(X)                                                          \
  X(kineto_json, "a PyTorch profiler (Kineto) JSON trace, through `syncopate import kineto`") \
  X(kineto_gzip, "a gzip-compressed Kineto trace, through `syncopate import kineto`")      \
  X(nsys_sqlite, "an Nsight Systems SQLite export, through `syncopate import nsys`")       \
  X(run_store, "a rank's run store, through `syncopate analyze` (load, analyse, JSON report)") \
  X(plan, "a plan file, through the plan reader the runtime and `compare` use")           \
  X(machine_profile, "a simgpu machine profile (`syncopate demo --profile`, SIMGPU_PROFILE)") \
  X(run_meta, "a run directory's meta.json")                                                \
  X(attach_request, "the attach channel's request.json, as an armed process reads it")    \
  X(attach_status, "an armed process's status file, as `syncopate attach` reads it")

#define SYNCOPATE_DECLARE_FUZZ_TARGET(name, what) Verdict name(Input input);
SYNCOPATE_FUZZ_TARGETS(SYNCOPATE_DECLARE_FUZZ_TARGET)
#undef SYNCOPATE_DECLARE_FUZZ_TARGET

using TargetFn = Verdict (*)(Input);
struct Target {
  std::string_view name;
  std::string_view what;
  TargetFn run;
};

// Every target, in declaration order; nullptr from findTarget for an unknown name.
std::span<const Target> targets();
const Target* findTarget(std::string_view name);

}  // namespace syncopate::fuzz
