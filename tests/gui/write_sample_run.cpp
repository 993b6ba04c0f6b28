// Writes the two-rank sample run into the directory given (a fixture for the command-line tests).
#include <cstdio>

#include "written_run.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gui_write_sample_run DIR\n");
    return 2;
  }
  std::error_code ec;
  std::filesystem::remove_all(argv[1], ec);
  std::filesystem::create_directories(argv[1], ec);
  const std::string error = syncopate::gui::testing::writeTwoRankRun(argv[1]);
  if (!error.empty()) {
    std::fprintf(stderr, "gui_write_sample_run: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
