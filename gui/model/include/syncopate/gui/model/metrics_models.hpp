// The analyzer's metrics as Qt item models for the metrics panel: one row per rank and
// iteration (sortable through a QSortFilterProxyModel on SortRole, each row knowing where on
// the timeline it is), and in compare mode one row per rank with both runs side by side.
// They read the TimelineModel's analyses; call refresh() when one arrives.
#pragma once

#include <QAbstractTableModel>

#include <cstdint>
#include <vector>

#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

// Where a table row sits on the timeline.
struct JumpTarget {
  std::uint32_t run = 0;
  Index rank = 0;                   // rank row
  std::int64_t start = 0, end = 0;  // display ns
  std::int64_t iteration = 0;
};

class MetricsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Run, Iteration, Rank, IterationTime, Compute, Communication, Overlapped, Exposed, ExposedAllGather,
    ExposedReduceScatter, OverlapRatio, Idle, CollectiveWait, ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;  // numbers as numbers

  explicit MetricsTableModel(const TimelineModel* timeline, QObject* parent = nullptr);
  void refresh();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  JumpTarget target(int row) const;

 private:
  struct Row {
    std::uint32_t run;
    const analyzer::RankIterationMetrics* metrics;
  };
  const TimelineModel* timeline_;
  std::vector<Row> rows_;
};

// Compare mode: per rank number (and all ranks), run A's and run B's mean per-iteration figures.
class CompareTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Rank, IterationA, IterationB, Speedup, ExposedA, ExposedB, OverlapA, OverlapB, IdleA, IdleB, ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;

  explicit CompareTableModel(const TimelineModel* timeline, QObject* parent = nullptr);
  void refresh();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    std::int32_t rank = -1;  // -1: all ranks (the analyzer's aggregate)
    analyzer::TimeBreakdown a, b;
  };
  const TimelineModel* timeline_;
  std::vector<Row> rows_;
};

}  // namespace syncopate::gui

Q_DECLARE_METATYPE(syncopate::gui::JumpTarget)  // carried by the views' signals
