#include "syncopate/gui/widgets/metrics_panel.hpp"

#include <QHeaderView>
#include <QVBoxLayout>

namespace syncopate::gui {

MetricsPanel::MetricsPanel(const TimelineModel* model, QWidget* parent)
    : QTabWidget(parent), model_(model), table_(model), compare_(model) {
  auto* page = new QWidget(this);
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(0, 0, 0, 0);
  status_ = new QLabel(page);
  status_->setWordWrap(true);
  layout->addWidget(status_);
  proxy_.setSourceModel(&table_);
  proxy_.setSortRole(MetricsTableModel::SortRole);
  view_ = new QTableView(page);
  view_->setModel(&proxy_);
  view_->setSortingEnabled(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(view_);
  addTab(page, QStringLiteral("Per rank and iteration"));
  connect(view_, &QTableView::activated, this, [this](const QModelIndex& index) {
    emit jumpTo(table_.target(proxy_.mapToSource(index).row()));
  });

  compare_view_ = new QTableView(this);
  auto* compare_proxy = new QSortFilterProxyModel(this);
  compare_proxy->setSourceModel(&compare_);
  compare_proxy->setSortRole(CompareTableModel::SortRole);
  compare_view_->setModel(compare_proxy);
  compare_view_->setSortingEnabled(true);
  compare_view_->verticalHeader()->hide();
  compare_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  addTab(compare_view_, QStringLiteral("Compare A / B"));
  refresh({});
}

void MetricsPanel::refresh(const QString& errors) {
  table_.refresh();
  compare_.refresh();
  view_->setColumnHidden(MetricsTableModel::Run, model_->runCount() < 2);
  setTabVisible(1, model_->runCount() > 1);
  if (!errors.isEmpty()) status_->setText(errors);
  else if (table_.rowCount() == 0) status_->setText(QStringLiteral("Metrics appear once the analysis is ready."));
  else status_->setText(QStringLiteral("Double-click a row to see it on the timeline. Times are per iteration."));
}

}  // namespace syncopate::gui
