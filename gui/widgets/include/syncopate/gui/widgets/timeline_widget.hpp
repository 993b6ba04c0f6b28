// The timeline view: paints the TimelineModel (timeline_painter.hpp) and turns input into view
// changes and selections. Navigation as in Perfetto, Tracy and chrome://tracing:
//   W / S            zoom in / out (at the mouse when it is over the timeline)
//   A / D            pan left / right
//   Ctrl+wheel       zoom at the cursor (plain wheel scrolls the lanes, Shift+wheel pans)
//   drag             pan (horizontally and vertically)
//   Shift+drag, or drag on the ruler   select a time range
//   click            select an op / call / range (or a merged block); click a group header to
//                    collapse or expand it
//   double-click     zoom to the item or merged block under the cursor
//   F / Home         fit the selection (else the current iteration) / the whole run
//   Esc              clear the selection
#pragma once

#include <QScrollBar>
#include <QWidget>

#include <cstdint>
#include <optional>
#include <vector>

#include "syncopate/gui/model/time_axis.hpp"
#include "syncopate/gui/model/timeline_model.hpp"
#include "syncopate/gui/widgets/timeline_painter.hpp"

namespace syncopate::gui {

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineWidget(TimelineModel* model, QWidget* parent = nullptr);

  // The model's runs changed: new bounds, whole run in view, nothing selected.
  void modelReset();
  // The same runs came back with more of their rows (a rank of a summary was loaded): nothing
  // selected, and the view where it was.
  void runsReplaced();
  // The model's layout or analyses changed (collapse, alignment, analysis arrived).
  void modelChanged();

  const TimeAxis& axis() const { return axis_; }
  TimeAxis& axis() { return axis_; }
  TimelineGeometry geometry() const;
  const TimelineOverlays& overlays() const { return overlays_; }

  void fitAll();
  void fitRange(std::int64_t start, std::int64_t end);
  // Shows iteration `number` of run 0 (display time); false when no run has it.
  bool fitIteration(std::int64_t number);
  // Scrolls vertically so that row `row` is visible.
  void scrollToRow(int row);

  // Selects an item, scrolls to it and brings it into view (keeping the zoom when it fits).
  void selectItem(const ItemRef& item);
  void selectRange(std::int64_t start, std::int64_t end);
  void clearSelection();
  std::optional<ItemRef> selectedItem() const { return selected_item_; }

  // The critical path drawn over the timeline (empty: none).
  void setCriticalPath(std::vector<PathMark> marks);

  // Paints exactly what paintEvent would, on any painter (benchmarks, screenshot tests).
  void paintTo(QPainter& p);

 signals:
  void itemSelected(const syncopate::gui::ItemRef& item);
  void blockSelected(const syncopate::gui::Hit& block);
  void rangeSelected(qint64 start, qint64 end);
  void selectionCleared();
  void viewChanged();
  // A group header was clicked and the group collapsed or expanded.
  void groupToggled(quint32 group, bool collapsed);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  enum class Drag { None, Pending, Pan, Range };
  double canvasX(double widget_x) const;
  Hit hitAt(QPointF pos) const;
  void clickAt(QPointF pos);
  void refreshItemOverlays();  // selection outline, flows and collective of selected_item_
  void updateScrollBar();
  void setScroll(double y);
  void changed();  // repaint and tell listeners the view moved
  void ensureAxisWidth();
  std::optional<std::int64_t> currentIteration() const;

  TimelineModel* model_;
  TimeAxis axis_;
  QScrollBar* vscroll_;
  double scroll_y_ = 0;
  TimelineOverlays overlays_;
  TextCache text_cache_;
  std::optional<ItemRef> selected_item_;

  Drag drag_ = Drag::None;
  QPointF press_pos_;
  double press_scroll_ = 0;
  TimeAxis press_axis_;                     // the view at the press (a pan drag moves from it)
  std::int64_t range_anchor_ = 0;           // display ns where a range drag started
  bool press_selects_range_ = false;        // Shift held, or the press was on the ruler
};

}  // namespace syncopate::gui
