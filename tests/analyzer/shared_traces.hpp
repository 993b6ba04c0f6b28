// The real public traces beside the repository (../shared/traces), read in place and never
// copied into it. A test that needs them fails when they are missing, saying where it looked:
// one that skipped, or passed on an empty folder, would report as checked what was not.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

namespace syncopate::analyzer::testing {

inline std::filesystem::path tracesDir() { return SYNCOPATE_TRACES_DIR; }

// Success when tracesDir()/relative exists, else a failure that says what is missing and why.
inline ::testing::AssertionResult tracesPresent(const std::filesystem::path& relative) {
  const std::filesystem::path where = tracesDir() / relative;
  if (std::filesystem::exists(where)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << where.string()
                                       << " is missing: this test reads the real traces of the shared folder beside "
                                          "the repository in place (tests/fixtures/README.md)";
}

}  // namespace syncopate::analyzer::testing
