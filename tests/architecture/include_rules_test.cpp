// The include rules between top-level folders (docs/architecture.md, "Parts and their
// direction"), on the real tree and on small trees holding each kind of fault, the four the
// repository once had among them.
#include "include_rules.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "include_graph.hpp"

namespace syncopate::architecture {
namespace {

namespace fs = std::filesystem;

std::string describe(const std::vector<Fault>& faults) {
  std::ostringstream out;
  for (const Fault& fault : faults) {
    out << fault.file << ":" << fault.line << " includes " << fault.included << ": " << fault.rule << "\n";
  }
  return out.str();
}

std::vector<std::string> linesOf(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

const fs::path kSourceDir = SYNCOPATE_SOURCE_DIR;
// Top-level folders that hold no sources: these, and every build tree (a folder with a
// CMakeCache.txt, wherever a user configured one).
std::set<std::string> notSources() {
  std::set<std::string> names = {"build", "docs", "scripts", "cmake"};
  for (const fs::directory_entry& entry : fs::directory_iterator(kSourceDir)) {
    if (entry.is_directory() && fs::exists(entry.path() / "CMakeCache.txt"))
      names.insert(entry.path().filename().string());
  }
  return names;
}
const std::set<std::string> kNotSources = notSources();

TEST(IncludeRules, TheRulesThemselvesHaveNoCycle) { EXPECT_EQ(cyclesIn(projectRules()), std::vector<std::string>{}); }

TEST(IncludeRules, EveryIncludeOfTheTreeKeepsThem) {
  const IncludeGraph graph = readIncludeGraph(kSourceDir, kNotSources);
  ASSERT_GT(graph.files.size(), 500u) << "the source tree was not found at " << kSourceDir;
  ASSERT_GT(graph.edges.size(), 1000u);
  const std::vector<Fault> faults = checkIncludes(graph, projectRules());
  EXPECT_TRUE(faults.empty()) << describe(faults);
}

// Every translation unit of libsyncopate_preload.so's link closure, listed by CMake from the
// targets it links (tests/architecture/CMakeLists.txt).
TEST(IncludeRules, ThePreloadLibraryHoldsNoAnalyzerGuiCliOrSimulatorCode) {
  const std::vector<std::string> sources = linesOf(SYNCOPATE_PRELOAD_SOURCES_FILE);
  ASSERT_GT(sources.size(), 20u) << "no sources listed in " << SYNCOPATE_PRELOAD_SOURCES_FILE;
  const IncludeGraph graph = readIncludeGraph(kSourceDir, kNotSources);
  const std::set<std::string> files(graph.files.begin(), graph.files.end());
  for (const std::string& source : sources) EXPECT_EQ(files.count(source), 1u) << source << " is not in the tree";
  const std::vector<Fault> faults = checkClosure(graph, sources, preloadLibraryParts(), "libsyncopate_preload.so");
  EXPECT_TRUE(faults.empty()) << describe(faults);
}

// A small tree written for one test, removed after it.
class SmallTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("include-rules-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& file, const std::string& text) {
    fs::create_directories((root_ / file).parent_path());
    std::ofstream(root_ / file) << text;
  }

  std::vector<Fault> faults() { return checkIncludes(readIncludeGraph(root_, {}), projectRules()); }

  fs::path root_;
};

TEST_F(SmallTree, CollectorIncludingTheTunerIsABackEdge) {
  write("tuner/runtime/runtime_layer.hpp", "#pragma once\n");
  write("collector/src/preload_layers.cpp", "#include \"runtime_layer.hpp\"\n");
  const std::vector<Fault> found = faults();
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].file, "collector/src/preload_layers.cpp");
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[0].included, "tuner/runtime/runtime_layer.hpp");
  EXPECT_EQ(found[0].rule, "collector/ may not include tuner/ (dependencies point one way; see the rules in "
                           "docs/architecture.md)");
}

TEST_F(SmallTree, ThePrivateHeadersOfAnotherPartAreOutOfReach) {
  write("collector/src/common/log.hpp", "#pragma once\n");
  write("tuner/runtime/plan_runtime.cpp", "// the runtime\n#include \"common/log.hpp\"\n");
  const std::vector<Fault> found = faults();
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].line, 2);
  EXPECT_EQ(found[0].included, "collector/src/common/log.hpp");
  EXPECT_EQ(found[0].rule, "tuner/ includes a private header of collector/ (its src/): use collector's public headers "
                           "(include/), or move what is needed there");
}

TEST_F(SmallTree, TheProductNeverIncludesTheSimulator) {
  write("simgpu/nccl/include/simgpu/nccl/nccl_profiler_v5.h", "#pragma once\n");
  write("collector/src/recorder/nccl_profiler.cpp", "#include \"simgpu/nccl/nccl_profiler_v5.h\"\n");
  const std::vector<Fault> found = faults();
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].rule, "the product part collector/ includes simgpu/, which does not ship: the product must run on "
                           "a real GPU, through real interfaces only");
}

TEST_F(SmallTree, APreloadedTranslationUnitReachingTheAnalyzerIsFound) {
  write("analyzer/include/syncopate/analyzer/expected.hpp", "#pragma once\n");
  write("tuner/include/syncopate/tuner/plan.hpp", "#include \"syncopate/analyzer/expected.hpp\"\n");
  write("tuner/src/plan.cpp", "#include \"syncopate/tuner/plan.hpp\"\n");
  write("tuner/src/knobs.cpp", "#include <vector>\n");
  const IncludeGraph graph = readIncludeGraph(root_, {});
  EXPECT_TRUE(checkIncludes(graph, projectRules()).empty()) << "tuner/ may include analyzer/ as a folder";
  const std::vector<Fault> found =
      checkClosure(graph, {"tuner/src/knobs.cpp", "tuner/src/plan.cpp"}, preloadLibraryParts(), "the library");
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].file, "tuner/src/plan.cpp");
  EXPECT_EQ(found[0].included, "analyzer/include/syncopate/analyzer/expected.hpp");
  EXPECT_EQ(found[0].rule,
            "the library may hold code of collector/, dispatch/, plugin_abi/, preload/, trace/, tuner/ only, but one of "
            "its translation units reaches analyzer/: tuner/src/plan.cpp -> tuner/include/syncopate/tuner/plan.hpp -> "
            "analyzer/include/syncopate/analyzer/expected.hpp");
}

TEST_F(SmallTree, ANewFolderMustSayWhereItSits) {
  write("newpart/a.cpp", "int a;\n");
  const std::vector<Fault> found = faults();
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].file, "newpart/a.cpp");
}

TEST_F(SmallTree, AnIncludeResolvesToTheIncludingPartsOwnFileFirst) {
  // Both parts have a "log.hpp"; the collector's own is the one it means.
  write("tuner/src/log.hpp", "#pragma once\n");
  write("collector/src/log.hpp", "#pragma once\n");
  write("collector/src/a.cpp", "#include \"log.hpp\"\n");
  EXPECT_TRUE(faults().empty()) << describe(faults());
}

TEST(IncludeRules, CyclesInRulesAreNamed) {
  std::map<std::string, PartRules> rules = {{"a", {true, {"b"}}}, {"b", {true, {"c"}}}, {"c", {true, {"a"}}}};
  EXPECT_EQ(cyclesIn(rules), std::vector<std::string>{"a -> b -> c -> a"});
}

}  // namespace
}  // namespace syncopate::architecture
