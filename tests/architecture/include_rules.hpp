// The rules the include graph between top-level folders must keep (docs/architecture.md,
// "Parts and their direction"), and the check that finds every include breaking one.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "include_graph.hpp"

namespace syncopate::architecture {

struct PartRules {
  // Whether the part ships in what a GPU user runs (the product) or only serves the project
  // (the simulator, samples, tests, benchmarks).
  bool product = false;
  // The other parts whose headers it may include.
  std::set<std::string> may_include;
};

// Every top-level folder that holds sources, with what it may include. A folder missing here is
// itself a fault: a new part must say where it sits.
const std::map<std::string, PartRules>& projectRules();

// One include that breaks a rule, with a sentence saying which and why it matters.
struct Fault {
  std::string file;
  int line = 0;
  std::string included;
  std::string rule;
};

// Checks `graph` against `rules`:
//  - a part includes only the parts it may (and so the product parts' graph has no cycle,
//    which is checked on the rules themselves as well);
//  - no part includes another part's private headers (a path segment `src/` below the part);
//  - no product part includes a non-product part (simgpu above all: the product runs on GPUs);
//  - every part that holds sources has rules.
std::vector<Fault> checkIncludes(const IncludeGraph& graph, const std::map<std::string, PartRules>& rules);

// What a library built from `sources` (paths relative to the root: the translation units of its
// whole link closure) can see through includes, checked against the parts it may depend on:
// one fault per translation unit that reaches a file of another part, naming the chain.
std::vector<Fault> checkClosure(const IncludeGraph& graph, const std::vector<std::string>& sources,
                                const std::set<std::string>& allowed_parts, const std::string& library);

// The parts whose code may end up in libsyncopate_preload.so, which every job preloads: nothing
// of the analyzer, the GUI, the command line or the simulator.
const std::set<std::string>& preloadLibraryParts();

// The cycles among the product parts' allowed dependencies, each as "a -> b -> a".
std::vector<std::string> cyclesIn(const std::map<std::string, PartRules>& rules);

}  // namespace syncopate::architecture
