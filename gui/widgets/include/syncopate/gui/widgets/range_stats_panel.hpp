// Statistics of the selected time range (computed on a worker by RangeStatsWorker): per run,
// how each rank's GPU time split inside the range, ops per kind and the top kernels.
#pragma once

#include <QTextBrowser>

#include "syncopate/gui/model/range_stats.hpp"

namespace syncopate::gui {

class RangeStatsPanel : public QTextBrowser {
  Q_OBJECT
 public:
  explicit RangeStatsPanel(QWidget* parent = nullptr);
  void showPending(std::int64_t start, std::int64_t end);
  void showStatistics(const RangeStatistics& stats);
  void showNothing();
};

}  // namespace syncopate::gui
