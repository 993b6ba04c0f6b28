// The analyzer's metrics: a sortable table of every rank in every iteration (double-click a row
// to see that rank's iteration on the timeline) and, when comparing, both runs side by side.
#pragma once

#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>

#include "syncopate/gui/model/metrics_models.hpp"

namespace syncopate::gui {

class MetricsPanel : public QTabWidget {
  Q_OBJECT
 public:
  explicit MetricsPanel(const TimelineModel* model, QWidget* parent = nullptr);
  // Analyses changed: reread them; `errors` says why a run has none.
  void refresh(const QString& errors);
  MetricsTableModel& table() { return table_; }
  QSortFilterProxyModel& sorted() { return proxy_; }
  QTableView* tableView() { return view_; }

 signals:
  void jumpTo(const syncopate::gui::JumpTarget& target);

 private:
  const TimelineModel* model_;
  MetricsTableModel table_;
  QSortFilterProxyModel proxy_;
  CompareTableModel compare_;
  QTableView* view_;
  QTableView* compare_view_;
  QLabel* status_;
};

}  // namespace syncopate::gui
