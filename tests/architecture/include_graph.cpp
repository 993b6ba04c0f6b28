#include "include_graph.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <unordered_map>

namespace syncopate::architecture {
namespace {

bool isSource(const std::filesystem::path& file) {
  static const std::set<std::string> kExtensions = {".h", ".hpp", ".inc", ".c", ".cc", ".cpp", ".cu", ".cuh"};
  return kExtensions.count(file.extension().string()) != 0;
}

}  // namespace

std::string partOf(const std::string& relative_path) {
  const auto slash = relative_path.find('/');
  return slash == std::string::npos ? std::string() : relative_path.substr(0, slash);
}

IncludeGraph readIncludeGraph(const std::filesystem::path& root, const std::set<std::string>& skip) {
  namespace fs = std::filesystem;
  IncludeGraph graph;
  for (const fs::directory_entry& top : fs::directory_iterator(root)) {
    const std::string name = top.path().filename().string();
    if (!top.is_directory() || name.starts_with('.') || skip.count(name) != 0) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(top.path())) {
      if (entry.is_regular_file() && isSource(entry.path())) {
        graph.files.push_back(fs::relative(entry.path(), root).generic_string());
      }
    }
  }
  std::sort(graph.files.begin(), graph.files.end());

  // Every path suffix of every file ("a/b/c.hpp", "b/c.hpp", "c.hpp") -> the files it names.
  std::unordered_map<std::string, std::vector<const std::string*>> by_suffix;
  for (const std::string& file : graph.files) {
    for (std::size_t at = 0;; ++at) {
      by_suffix[file.substr(at)].push_back(&file);
      at = file.find('/', at);
      if (at == std::string::npos) break;
    }
  }

  static const std::regex kInclude(R"(^\s*#\s*include\s*["<]([^">]+)[">])");
  for (const std::string& file : graph.files) {
    std::ifstream in(root / file);
    std::string text;
    int line_number = 0;
    const std::string part = partOf(file);
    while (std::getline(in, text)) {
      ++line_number;
      std::smatch match;
      if (!std::regex_search(text, match, kInclude)) continue;
      const auto found = by_suffix.find(match[1].str());
      if (found == by_suffix.end()) continue;
      // Several files can end the same way: a file of the including part wins (that is where its
      // own include folders point), else the first by name, as the drawing of the folders does.
      const std::string* target = found->second.front();
      for (const std::string* candidate : found->second) {
        if (partOf(*candidate) == part) {
          target = candidate;
          break;
        }
      }
      if (*target != file) graph.edges.push_back({file, *target, line_number});
    }
  }
  return graph;
}

}  // namespace syncopate::architecture
