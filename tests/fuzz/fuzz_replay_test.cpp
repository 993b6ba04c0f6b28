// Replays every input kept under tests/fixtures/fuzz/<target>/: each once made a target
// crash, hang or refuse without a sentence (docs/reliability.md, "Fuzzed inputs"). Each must
// now be accepted or refused with a sentence; under scripts/sanitize.sh, without a memory error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz_targets.hpp"

namespace syncopate::fuzz {
namespace {

const std::filesystem::path kRegressions = SYNCOPATE_FUZZ_REGRESSIONS_DIR;

std::vector<std::uint8_t> bytesOf(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::filesystem::path> sorted(std::filesystem::directory_iterator entries) {
  std::vector<std::filesystem::path> paths;
  for (const auto& e : entries) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(FuzzRegressions, EveryFolderNamesATarget) {
  ASSERT_TRUE(std::filesystem::is_directory(kRegressions)) << kRegressions;
  for (const auto& folder : sorted(std::filesystem::directory_iterator(kRegressions))) {
    if (!std::filesystem::is_directory(folder)) continue;
    EXPECT_NE(findTarget(folder.filename().string()), nullptr) << folder.filename() << " is no fuzz target";
  }
}

TEST(FuzzRegressions, EveryKeptInputIsAcceptedOrRefusedWithASentence) {
  int replayed = 0;
  for (const Target& target : targets()) {
    const std::filesystem::path folder = kRegressions / target.name;
    if (!std::filesystem::is_directory(folder)) continue;
    for (const auto& input : sorted(std::filesystem::directory_iterator(folder))) {
      if (input.extension() == ".md") continue;  // what the inputs are, for people
      const std::vector<std::uint8_t> bytes = bytesOf(input);
      const Verdict verdict = target.run(bytes);
      if (verdict) {
        EXPECT_FALSE(verdict->empty()) << input << " was refused without a sentence";
      }
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0) << "no kept input under " << kRegressions;
}

TEST(FuzzTargets, NamesAreUnique) {
  for (const Target& t : targets()) EXPECT_EQ(findTarget(t.name), &t) << t.name;
}

}  // namespace
}  // namespace syncopate::fuzz
