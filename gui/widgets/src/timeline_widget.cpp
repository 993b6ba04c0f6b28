#include "syncopate/gui/widgets/timeline_widget.hpp"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "syncopate/gui/model/links.hpp"

namespace syncopate::gui {

namespace {
constexpr double kKeyZoom = 1.25;       // W / S
constexpr double kKeyPanFraction = 0.1; // A / D: a tenth of the window
constexpr double kDragThreshold = 4;    // pixels before a press becomes a drag
}  // namespace

TimelineWidget::TimelineWidget(TimelineModel* model, QWidget* parent)
    : QWidget(parent), model_(model), vscroll_(new QScrollBar(Qt::Vertical, this)) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);  // moves reach us during drags whatever the platform
  setMinimumSize(400, 200);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(vscroll_, &QScrollBar::valueChanged, this, [this](int v) {
    scroll_y_ = v;
    update();
  });
}

TimelineGeometry TimelineWidget::geometry() const {
  TimelineGeometry g;
  g.size = QSize(width() - vscroll_->sizeHint().width(), height());
  g.scroll_y = scroll_y_;
  return g;
}

void TimelineWidget::ensureAxisWidth() {
  axis_.setWidth(std::max(1.0, geometry().canvasWidth()));
}

void TimelineWidget::modelReset() {
  overlays_ = {};
  text_cache_.clear();
  selected_item_.reset();
  scroll_y_ = 0;
  axis_.setBounds(model_->beginNs(), model_->endNs());
  ensureAxisWidth();
  fitAll();
  updateScrollBar();
}

void TimelineWidget::runsReplaced() {
  overlays_ = {};
  text_cache_.clear();
  selected_item_.reset();
  axis_.setBounds(model_->beginNs(), model_->endNs());
  updateScrollBar();
  changed();
}

void TimelineWidget::modelChanged() {
  axis_.setBounds(model_->beginNs(), model_->endNs());
  updateScrollBar();
  // Lanes may have moved (collapse) or links gained timings (analysis).
  if (selected_item_) refreshItemOverlays();
  update();
}

void TimelineWidget::changed() {
  update();
  emit viewChanged();
}

void TimelineWidget::fitAll() {
  ensureAxisWidth();
  axis_.fitBounds();
  changed();
}

void TimelineWidget::fitRange(std::int64_t start, std::int64_t end) {
  ensureAxisWidth();
  axis_.fit(start, end);
  changed();
}

bool TimelineWidget::fitIteration(std::int64_t number) {
  for (std::uint32_t r = 0; r < model_->runCount(); ++r) {
    if (const IterationSpan* s = model_->run(r).iteration(number)) {
      const std::int64_t offset = model_->displayOffset(r);
      fitRange(s->start + offset, s->end + offset);
      return true;
    }
  }
  return false;
}

std::optional<std::int64_t> TimelineWidget::currentIteration() const {
  if (model_->runCount() == 0) return std::nullopt;
  const std::int64_t centre = axis_.toTime(axis_.width() / 2) - model_->displayOffset(0);
  for (const IterationSpan& s : model_->run(0).iteration_spans)
    if (centre >= s.start && centre < s.end) return s.number;
  return std::nullopt;
}

void TimelineWidget::updateScrollBar() {
  const TimelineGeometry g = geometry();
  const double visible = g.size.height() - g.ruler_height;
  const int max = static_cast<int>(std::max(0.0, std::ceil(model_->contentHeight() - visible)));
  vscroll_->setRange(0, max);
  vscroll_->setPageStep(static_cast<int>(visible));
  vscroll_->setSingleStep(static_cast<int>(TimelineModel::kLaneHeight));
  setScroll(scroll_y_);
}

void TimelineWidget::setScroll(double y) {
  const double clamped = std::clamp(y, 0.0, static_cast<double>(vscroll_->maximum()));
  scroll_y_ = clamped;
  vscroll_->setValue(static_cast<int>(clamped));
  update();
}

void TimelineWidget::scrollToRow(int row) {
  if (row < 0 || static_cast<std::size_t>(row) >= model_->rows().size()) return;
  const LayoutRow& r = model_->rows()[static_cast<std::size_t>(row)];
  const TimelineGeometry g = geometry();
  const double visible = g.size.height() - g.ruler_height;
  if (r.y < scroll_y_) setScroll(r.y - TimelineModel::kGroupHeight);
  else if (r.y + r.height > scroll_y_ + visible) setScroll(r.y + r.height - visible + TimelineModel::kGroupHeight);
}

void TimelineWidget::selectItem(const ItemRef& item) {
  selected_item_ = item;
  overlays_.selected_block.reset();
  refreshItemOverlays();
  if (const auto at = overlays_.selected) {
    scrollToRow(model_->rowOfLane(at->lane));
    const std::int64_t s = model_->displayStart(*at), e = model_->displayEnd(*at);
    if (static_cast<double>(e - s) > axis_.span()) {
      axis_.fit(s, e);
    } else if (s < axis_.startNs() || e > axis_.endNs()) {
      const auto half = static_cast<std::int64_t>(axis_.span() / 2);
      axis_.setWindow(s + (e - s) / 2 - half, s + (e - s) / 2 + half);
    }
  }
  changed();
  emit itemSelected(item);
}

void TimelineWidget::refreshItemOverlays() {
  const ItemRef item = *selected_item_;
  const auto at = model_->locate(item);
  overlays_.selected = at;
  overlays_.flows.clear();
  overlays_.collective.reset();
  if (item.table == ItemTable::Op) {
    if (auto call = launchingCall(*model_, item)) {
      auto from = model_->locate(*call);
      if (from && at) overlays_.flows.emplace_back(*from, *at);
    }
    overlays_.collective = collectiveLink(*model_, item.run, item.index);
  } else if (item.table == ItemTable::ApiCall) {
    for (const ItemRef& op : launchedOps(*model_, item)) {
      auto to = model_->locate(op);
      if (to && at) overlays_.flows.emplace_back(*at, *to);
    }
  }
}

void TimelineWidget::selectRange(std::int64_t start, std::int64_t end) {
  if (end < start) std::swap(start, end);
  overlays_.range = std::make_pair(start, end);
  update();
  emit rangeSelected(start, end);
}

void TimelineWidget::clearSelection() {
  overlays_.selected.reset();
  overlays_.selected_block.reset();
  overlays_.flows.clear();
  overlays_.collective.reset();
  overlays_.range.reset();
  selected_item_.reset();
  update();
  emit selectionCleared();
}

void TimelineWidget::setCriticalPath(std::vector<PathMark> marks) {
  overlays_.critical_path = std::move(marks);
  update();
}

void TimelineWidget::paintTo(QPainter& p) {
  ensureAxisWidth();
  paintTimeline(p, *model_, axis_, geometry(), overlays_, text_cache_);
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintTo(p);
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
  const int w = vscroll_->sizeHint().width();
  vscroll_->setGeometry(width() - w, TimelineGeometry::kRulerHeight, w, height() - TimelineGeometry::kRulerHeight);
  // Keep the same window of time across the new width.
  const std::int64_t start = axis_.startNs(), end = axis_.endNs();
  ensureAxisWidth();
  axis_.setWindow(start, end);
  updateScrollBar();
}

double TimelineWidget::canvasX(double widget_x) const {
  return widget_x - geometry().canvasLeft();
}

void TimelineWidget::keyPressEvent(QKeyEvent* event) {
  const QPointF cursor = mapFromGlobal(QCursor::pos());
  const TimelineGeometry g = geometry();
  const bool over = cursor.x() >= g.canvasLeft() && cursor.x() < g.size.width() && cursor.y() >= 0 && cursor.y() < height();
  const double anchor = over ? canvasX(cursor.x()) : axis_.width() / 2;
  switch (event->key()) {
    case Qt::Key_W: axis_.zoomAt(anchor, kKeyZoom); break;
    case Qt::Key_S: axis_.zoomAt(anchor, 1 / kKeyZoom); break;
    case Qt::Key_A: axis_.panPixels(-axis_.width() * kKeyPanFraction); break;
    case Qt::Key_D: axis_.panPixels(axis_.width() * kKeyPanFraction); break;
    case Qt::Key_Home: axis_.fitBounds(); break;
    case Qt::Key_F:
      if (overlays_.range) axis_.fit(overlays_.range->first, overlays_.range->second);
      else if (overlays_.selected) axis_.fit(model_->displayStart(*overlays_.selected), model_->displayEnd(*overlays_.selected));
      else if (overlays_.selected_block) axis_.fit(overlays_.selected_block->start, overlays_.selected_block->end);
      else if (auto it = currentIteration()) {
        fitIteration(*it);
        return;
      }
      break;
    case Qt::Key_Up: setScroll(scroll_y_ - TimelineModel::kLaneHeight * 3); return;
    case Qt::Key_Down: setScroll(scroll_y_ + TimelineModel::kLaneHeight * 3); return;
    case Qt::Key_Escape: clearSelection(); return;
    default: QWidget::keyPressEvent(event); return;
  }
  changed();
}

void TimelineWidget::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  const QPointF pos = event->position();
  const bool on_ruler = pos.y() < TimelineGeometry::kRulerHeight;
  if (event->modifiers() & Qt::ControlModifier || on_ruler) {
    axis_.zoomAt(canvasX(pos.x()), std::pow(1.2, steps));
    changed();
  } else if (event->modifiers() & Qt::ShiftModifier) {
    const double dx = event->angleDelta().x() != 0 ? event->angleDelta().x() / 120.0 : steps;
    axis_.panPixels(-dx * axis_.width() * kKeyPanFraction);
    changed();
  } else {
    setScroll(scroll_y_ - steps * TimelineModel::kLaneHeight * 3);
  }
  event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  setFocus();
  press_pos_ = event->position();
  press_scroll_ = scroll_y_;
  press_axis_ = axis_;
  drag_ = Drag::Pending;
  const bool on_ruler = press_pos_.y() < TimelineGeometry::kRulerHeight;
  press_selects_range_ = (event->modifiers() & Qt::ShiftModifier) || on_ruler;
  range_anchor_ = axis_.toTime(canvasX(press_pos_.x()));
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
  if (drag_ == Drag::None) return;
  const QPointF d = event->position() - press_pos_;
  if (drag_ == Drag::Pending) {
    if (std::abs(d.x()) < kDragThreshold && std::abs(d.y()) < kDragThreshold) return;
    drag_ = press_selects_range_ ? Drag::Range : Drag::Pan;
  }
  if (drag_ == Drag::Pan) {
    // The press's time stays under the cursor.
    axis_ = press_axis_;
    axis_.panPixels(-d.x());
    setScroll(press_scroll_ - d.y());
    changed();
  } else {
    const std::int64_t t = axis_.toTime(canvasX(event->position().x()));
    overlays_.range = std::make_pair(std::min(range_anchor_, t), std::max(range_anchor_, t));
    update();
  }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const Drag was = drag_;
  drag_ = Drag::None;
  if (was == Drag::Pending) clickAt(event->position());
  else if (was == Drag::Range && overlays_.range) selectRange(overlays_.range->first, overlays_.range->second);
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* event) {
  const Hit hit = hitAt(event->position());
  if (!hit.found()) return;
  axis_.fit(hit.start, hit.end, 0.1);
  changed();
}

Hit TimelineWidget::hitAt(QPointF pos) const {
  const TimelineGeometry g = geometry();
  if (pos.x() < g.canvasLeft() || pos.y() < g.ruler_height) return {};
  const int row = model_->rowAt(g.contentY(pos.y()));
  if (row < 0) return {};
  const LayoutRow& r = model_->rows()[static_cast<std::size_t>(row)];
  if (r.kind != LayoutRow::Kind::Lane) return {};
  return model_->hitTest(r.index, axis_.toTime(canvasX(pos.x())), axis_.nsPerPixel());
}

void TimelineWidget::clickAt(QPointF pos) {
  const TimelineGeometry g = geometry();
  if (pos.y() >= g.ruler_height) {
    const int row = model_->rowAt(g.contentY(pos.y()));
    if (row >= 0) {
      const LayoutRow& r = model_->rows()[static_cast<std::size_t>(row)];
      if (r.kind == LayoutRow::Kind::Group) {
        model_->setCollapsed(r.index, !model_->collapsed(r.index));
        modelChanged();
        emit groupToggled(r.index, model_->collapsed(r.index));
        return;
      }
    }
  }
  const Hit hit = hitAt(pos);
  if (!hit.found()) {
    clearSelection();
    return;
  }
  if (hit.single()) {
    selectItem(model_->itemAt({hit.lane, hit.first}));
    return;
  }
  overlays_.selected.reset();
  overlays_.flows.clear();
  overlays_.collective.reset();
  selected_item_.reset();
  overlays_.selected_block = hit;
  update();
  emit blockSelected(hit);
}

}  // namespace syncopate::gui
