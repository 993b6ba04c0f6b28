#include "syncopate/gui/model/metrics_models.hpp"

#include <map>

namespace syncopate::gui {

namespace {

QVariant ms(std::int64_t ns, int role) {
  if (role == Qt::DisplayRole) return QString::number(static_cast<double>(ns) / 1e6, 'f', 3);
  return QVariant::fromValue<qlonglong>(ns);
}

QVariant percent(double fraction, int role) {
  if (role == Qt::DisplayRole) return QString::number(fraction * 100.0, 'f', 1) + QLatin1String(" %");
  return fraction;
}

}  // namespace

MetricsTableModel::MetricsTableModel(const TimelineModel* timeline, QObject* parent)
    : QAbstractTableModel(parent), timeline_(timeline) {}

void MetricsTableModel::refresh() {
  beginResetModel();
  rows_.clear();
  for (std::uint32_t r = 0; r < timeline_->runCount(); ++r) {
    if (const analyzer::Analysis* a = timeline_->analysis(r))
      for (const auto& m : a->rank_iterations) rows_.push_back({r, &m});
  }
  endResetModel();
}

int MetricsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MetricsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant MetricsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != SortRole) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const analyzer::TimeBreakdown& t = row.metrics->time;
  switch (index.column()) {
    case Run:
      return role == Qt::DisplayRole ? QVariant(QString::fromStdString(timeline_->run(row.run).label))
                                     : QVariant(row.run);
    case Iteration: return QVariant::fromValue<qlonglong>(row.metrics->window.number);
    case Rank: return timeline_->run(row.run).model.ranks[row.metrics->rank].rank;
    case IterationTime: return ms(t.window_ns, role);
    case Compute: return ms(t.compute_ns, role);
    case Communication: return ms(t.communication_ns, role);
    case Overlapped: return ms(t.overlapped_communication_ns, role);
    case Exposed: return ms(t.exposed_communication_ns, role);
    case ExposedAllGather:
      return ms(t.exposed_by_collective_ns[static_cast<std::size_t>(analyzer::CollectiveGroup::AllGather)], role);
    case ExposedReduceScatter:
      return ms(t.exposed_by_collective_ns[static_cast<std::size_t>(analyzer::CollectiveGroup::ReduceScatter)], role);
    case OverlapRatio: return percent(t.overlapRatio(), role);
    case Idle: return ms(t.idle_ns, role);
    case CollectiveWait: return ms(row.metrics->collective_wait_ns, role);
    default: return {};
  }
}

QVariant MetricsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Run: return QStringLiteral("Run");
    case Iteration: return QStringLiteral("Iteration");
    case Rank: return QStringLiteral("Rank");
    case IterationTime: return QStringLiteral("Iteration (ms)");
    case Compute: return QStringLiteral("Compute (ms)");
    case Communication: return QStringLiteral("Comm (ms)");
    case Overlapped: return QStringLiteral("Overlapped (ms)");
    case Exposed: return QStringLiteral("Exposed comm (ms)");
    case ExposedAllGather: return QStringLiteral("Exposed all-gather (ms)");
    case ExposedReduceScatter: return QStringLiteral("Exposed reduce-scatter (ms)");
    case OverlapRatio: return QStringLiteral("Overlap");
    case Idle: return QStringLiteral("Idle (ms)");
    case CollectiveWait: return QStringLiteral("Coll. wait (ms)");
    default: return {};
  }
}

JumpTarget MetricsTableModel::target(int row) const {
  const Row& r = rows_.at(static_cast<std::size_t>(row));
  const std::int64_t offset = timeline_->displayOffset(r.run);
  return {r.run, r.metrics->rank, r.metrics->window.start + offset, r.metrics->window.end + offset,
          r.metrics->window.number};
}

CompareTableModel::CompareTableModel(const TimelineModel* timeline, QObject* parent)
    : QAbstractTableModel(parent), timeline_(timeline) {}

void CompareTableModel::refresh() {
  beginResetModel();
  rows_.clear();
  const analyzer::Analysis* a = timeline_->runCount() > 1 ? timeline_->analysis(0) : nullptr;
  const analyzer::Analysis* b = timeline_->runCount() > 1 ? timeline_->analysis(1) : nullptr;
  if (a && b) {
    rows_.push_back({-1, a->aggregate, b->aggregate});
    // Ranks by number; a rank present in one run only is left out of the side-by-side rows.
    std::map<std::int32_t, analyzer::TimeBreakdown> in_a;
    for (const auto& s : a->ranks)
      if (s.iterations > 0) in_a[timeline_->run(0).model.ranks[s.rank].rank] = s.mean;
    for (const auto& s : b->ranks) {
      if (s.iterations == 0) continue;
      auto it = in_a.find(timeline_->run(1).model.ranks[s.rank].rank);
      if (it != in_a.end()) rows_.push_back({it->first, it->second, s.mean});
    }
  }
  endResetModel();
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != SortRole) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  switch (index.column()) {
    case Rank:
      if (r.rank < 0) return role == Qt::DisplayRole ? QVariant(QStringLiteral("all")) : QVariant(-1);
      return r.rank;
    case IterationA: return ms(r.a.window_ns, role);
    case IterationB: return ms(r.b.window_ns, role);
    case Speedup: {
      const double s = r.b.window_ns > 0 ? static_cast<double>(r.a.window_ns) / static_cast<double>(r.b.window_ns) : 0;
      return role == Qt::DisplayRole ? QVariant(QString::number(s, 'f', 3) + QStringLiteral("×")) : QVariant(s);
    }
    case ExposedA: return ms(r.a.exposed_communication_ns, role);
    case ExposedB: return ms(r.b.exposed_communication_ns, role);
    case OverlapA: return percent(r.a.overlapRatio(), role);
    case OverlapB: return percent(r.b.overlapRatio(), role);
    case IdleA: return ms(r.a.idle_ns, role);
    case IdleB: return ms(r.b.idle_ns, role);
    default: return {};
  }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Rank: return QStringLiteral("Rank");
    case IterationA: return QStringLiteral("Iteration A (ms)");
    case IterationB: return QStringLiteral("Iteration B (ms)");
    case Speedup: return QStringLiteral("Speedup A/B");
    case ExposedA: return QStringLiteral("Exposed A (ms)");
    case ExposedB: return QStringLiteral("Exposed B (ms)");
    case OverlapA: return QStringLiteral("Overlap A");
    case OverlapB: return QStringLiteral("Overlap B");
    case IdleA: return QStringLiteral("Idle A (ms)");
    case IdleB: return QStringLiteral("Idle B (ms)");
    default: return {};
  }
}

}  // namespace syncopate::gui
