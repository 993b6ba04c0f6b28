// The include graph of the source tree, folder by folder: every `#include "..."` or `<...>` that
// names a file of the tree, resolved the way a reader (and the drawing of the folders) resolves
// it — by the longest path suffix that matches a file, preferring a file of the including part.
// Includes of files outside the tree (system and toolkit headers) are not edges.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace syncopate::architecture {

// One resolved include: `from` includes `to`, both relative to the tree's root.
struct IncludeEdge {
  std::string from;
  std::string to;
  int line = 0;
};

struct IncludeGraph {
  std::vector<std::string> files;  // every source file read, relative to the root
  std::vector<IncludeEdge> edges;  // includes of another file of the tree
};

// Reads every C, C++ and CUDA source and header under `root`, except the folders named in
// `skip` (top-level names, e.g. "build") and hidden ones.
IncludeGraph readIncludeGraph(const std::filesystem::path& root, const std::set<std::string>& skip);

// The top-level folder of a path relative to the root ("" for a file at the root).
std::string partOf(const std::string& relative_path);

}  // namespace syncopate::architecture
