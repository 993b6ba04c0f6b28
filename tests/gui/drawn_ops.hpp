// The structure check of a screenshot shared by the tests that open real runs: for every rank of
// run 0, its stream lanes are scrolled into view, the window is grabbed, and every op wide
// enough to see must be drawn in its kind's colour (where the critical path does not outline it).
#pragma once

#include <string>

#include "syncopate/gui/widgets/main_window.hpp"

namespace syncopate::gui::testing {

struct DrawnOps {
  int checked = 0, communication = 0;  // ops whose colour was checked, of them communication
  std::string failure;                 // the first mismatch, empty when none
};

DrawnOps checkDrawnOps(MainWindow& w);

}  // namespace syncopate::gui::testing
