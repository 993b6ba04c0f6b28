// `syncopate gui` as library calls, so that the command line stays one small file and the
// tests can run it: interactive (a window and the event loop) or headless (--screenshot: load,
// wait for the analysis, save a PNG of the window).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "syncopate/trace/status.hpp"
#include "syncopate/gui/model/lanes.hpp"
#include "syncopate/gui/model/workers.hpp"

namespace syncopate::gui {

struct GuiOptions {
  std::vector<std::filesystem::path> runs;  // one run directory, or two to compare
  std::optional<std::filesystem::path> screenshot;
  std::optional<std::int64_t> iteration;
  std::vector<LaneKind> hidden_lanes;  // lane kinds not shown
  OpenMode open = OpenMode::Auto;      // on the analysis results, or every store
  int width = 1600, height = 1000;
};

// Both need a QApplication.
// Loads the runs, shows `iteration` (else the first), saves a PNG of the window. Fails with a
// sentence when a run cannot be opened, the iteration does not exist or the PNG cannot be written.
trace::Status saveScreenshot(const GuiOptions& options);
// Shows the window and runs the event loop (errors appear as dialogs); the loop's exit code.
int runInteractive(const GuiOptions& options);

}  // namespace syncopate::gui
