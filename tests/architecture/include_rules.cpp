#include "include_rules.hpp"

#include <functional>

namespace syncopate::architecture {

const std::map<std::string, PartRules>& projectRules() {
  // The product, bottom up. Each may include only what is below it; see docs/architecture.md.
  static const std::map<std::string, PartRules> rules = {
      {"trace", {true, {}}},
      {"plugin_abi", {true, {}}},
      {"dispatch", {true, {"trace"}}},
      {"collector", {true, {"trace", "plugin_abi", "dispatch"}}},
      {"analyzer", {true, {"trace"}}},
      {"tuner", {true, {"trace", "analyzer", "dispatch"}}},
      {"preload", {true, {"plugin_abi", "dispatch", "collector", "tuner"}}},
      {"gui", {true, {"trace", "analyzer", "tuner"}}},
      {"cli", {true, {"trace", "collector", "analyzer", "tuner"}}},
      // What serves the project. simgpu implements the real libraries' interfaces and the
      // plugin ABIs NCCL defines; it knows nothing of the product's parts.
      {"simgpu", {false, {"plugin_abi"}}},
      {"samples", {false, {}}},
      {"tests", {false, {"trace", "plugin_abi", "dispatch", "collector", "analyzer", "tuner", "preload", "gui", "cli",
                         "simgpu", "samples"}}},
      {"bench", {false, {"trace", "plugin_abi", "dispatch", "collector", "analyzer", "tuner", "gui", "simgpu",
                         "samples", "tests"}}},
  };
  return rules;
}

namespace {

// "collector/src/recorder/x.hpp" is private to collector; so is "tuner/runtime/src/y.hpp".
bool isPrivateHeader(const std::string& path) {
  const std::string part = partOf(path);
  return path.find("/src/", part.size()) != std::string::npos;
}

}  // namespace

std::vector<Fault> checkIncludes(const IncludeGraph& graph, const std::map<std::string, PartRules>& rules) {
  std::vector<Fault> faults;
  std::set<std::string> unknown_parts;
  for (const std::string& file : graph.files) {
    const std::string part = partOf(file);
    if (!part.empty() && rules.count(part) == 0 && unknown_parts.insert(part).second) {
      faults.push_back({file, 0, "", "the folder " + part + "/ holds sources but has no place in the include rules: "
                                         "say what it may include (tests/architecture/include_rules.cpp) and "
                                         "where it sits in docs/architecture.md"});
    }
  }
  for (const IncludeEdge& edge : graph.edges) {
    const std::string from = partOf(edge.from);
    const std::string to = partOf(edge.to);
    if (from == to || from.empty()) continue;
    const auto from_rules = rules.find(from);
    const auto to_rules = rules.find(to);
    if (from_rules == rules.end()) continue;  // already reported as an unknown part
    if (isPrivateHeader(edge.to)) {
      faults.push_back({edge.from, edge.line, edge.to,
                        from + "/ includes a private header of " + to + "/ (its src/): use " + to +
                            "'s public headers (include/), or move what is needed there"});
      continue;
    }
    if (from_rules->second.product && to_rules != rules.end() && !to_rules->second.product) {
      faults.push_back({edge.from, edge.line, edge.to,
                        "the product part " + from + "/ includes " + to + "/, which does not ship: " +
                            (to == "simgpu" ? "the product must run on a real GPU, through real interfaces only"
                                            : "product code must not depend on it")});
      continue;
    }
    if (from_rules->second.may_include.count(to) == 0) {
      faults.push_back({edge.from, edge.line, edge.to,
                        from + "/ may not include " + to + "/ (dependencies point one way; see the rules in "
                               "docs/architecture.md)"});
    }
  }
  return faults;
}

const std::set<std::string>& preloadLibraryParts() {
  static const std::set<std::string> parts = {"trace", "plugin_abi", "dispatch", "collector", "tuner", "preload"};
  return parts;
}

std::vector<Fault> checkClosure(const IncludeGraph& graph, const std::vector<std::string>& sources,
                                const std::set<std::string>& allowed_parts, const std::string& library) {
  std::map<std::string, std::vector<const IncludeEdge*>> includes;
  for (const IncludeEdge& edge : graph.edges) includes[edge.from].push_back(&edge);
  std::vector<Fault> faults;
  for (const std::string& source : sources) {
    // Breadth first, remembering how each file was reached, so the fault names the chain.
    std::map<std::string, const IncludeEdge*> reached_by = {{source, nullptr}};
    std::vector<std::string> queue = {source};
    for (std::size_t next = 0; next < queue.size(); ++next) {
      const std::string file = queue[next];
      if (allowed_parts.count(partOf(file)) == 0) {
        std::string chain = file;
        for (const IncludeEdge* by = reached_by[file]; by != nullptr; by = reached_by[by->from]) {
          chain = by->from + " -> " + chain;
        }
        std::string allowed;
        for (const std::string& part : allowed_parts) allowed += (allowed.empty() ? "" : ", ") + part + "/";
        faults.push_back({source, 0, file,
                          library + " may hold code of " + allowed + " only, but one of its translation units reaches " +
                              partOf(file) + "/: " + chain});
        break;
      }
      const auto found = includes.find(file);
      if (found == includes.end()) continue;
      for (const IncludeEdge* edge : found->second) {
        if (reached_by.emplace(edge->to, edge).second) queue.push_back(edge->to);
      }
    }
  }
  return faults;
}

std::vector<std::string> cyclesIn(const std::map<std::string, PartRules>& rules) {
  std::vector<std::string> cycles;
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& part) {
    state[part] = 1;
    path.push_back(part);
    const auto found = rules.find(part);
    if (found != rules.end()) {
      for (const std::string& next : found->second.may_include) {
        if (state[next] == 1) {
          std::string cycle;
          bool on = false;
          for (const std::string& step : path) {
            if (step == next) on = true;
            if (on) cycle += step + " -> ";
          }
          cycles.push_back(cycle + next);
        } else if (state[next] == 0) {
          visit(next);
        }
      }
    }
    path.pop_back();
    state[part] = 2;
  };
  for (const auto& [part, part_rules] : rules) {
    if (state[part] == 0) visit(part);
  }
  return cycles;
}

}  // namespace syncopate::architecture
