// Painting the timeline, apart from the widget's input handling so that the benchmark and the
// screenshot tests can render into an image: rows from the TimelineModel's layout, each lane
// at the level of detail the model chose for this resolution, the per-rank exposed
// communication / idle strip, the ruler, and the overlays (selection, selected range,
// collective links, launch flows, critical path, iteration starts).
#pragma once

#include <QFont>
#include <QHash>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QStaticText>
#include <QString>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "syncopate/gui/model/critical_path_overlay.hpp"
#include "syncopate/gui/model/links.hpp"
#include "syncopate/gui/model/time_axis.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

struct TimelineOverlays {
  std::optional<LanePosition> selected;                  // a single item
  std::optional<Hit> selected_block;                     // a merged LOD block
  std::optional<std::pair<std::int64_t, std::int64_t>> range;  // display ns
  std::optional<CollectiveLink> collective;
  std::vector<std::pair<LanePosition, LanePosition>> flows;    // API call -> GPU op
  std::vector<PathMark> critical_path;
};

// Where things are on the widget.
struct TimelineGeometry {
  static constexpr int kLabelWidth = 230;
  static constexpr int kRulerHeight = 30;
  int label_width = kLabelWidth;
  int ruler_height = kRulerHeight;
  QSize size;             // the painted area, label column and ruler included
  double scroll_y = 0;    // content pixels scrolled off the top

  double canvasLeft() const { return label_width; }
  double canvasWidth() const { return size.width() - label_width; }
  double rowTop(const LayoutRow& row) const { return ruler_height + row.y - scroll_y; }
  // Content y of widget y.
  double contentY(double y) const { return y - ruler_height + scroll_y; }
};

// Text laid out once and kept between frames: eliding and shaping a label costs far more than
// drawing it, and the same labels come back frame after frame.
class TextCache {
 public:
  // `text` elided to `max_width` pixels in `font`, ready to draw.
  const QStaticText& get(const QString& text, int max_width, const QFont& font);
  void clear() { entries_.clear(); }

 private:
  static constexpr int kCapacity = 8192;  // cleared when full (labels of one view are far fewer)
  QHash<QString, QStaticText> entries_;
};

// Draws everything; `axis` must be as wide as geometry.canvasWidth().
void paintTimeline(QPainter& p, const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& geometry,
                   const TimelineOverlays& overlays, TextCache& text);

// Where an item is drawn (widget coordinates), if its row is shown.
std::optional<QRectF> itemRect(const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& geometry,
                               const LanePosition& at);

}  // namespace syncopate::gui
