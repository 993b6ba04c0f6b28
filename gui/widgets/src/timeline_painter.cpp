#include "syncopate/gui/widgets/timeline_painter.hpp"

#include <QFontMetrics>
#include <QImage>

#include <algorithm>
#include <cmath>

#include "syncopate/gui/model/units.hpp"
#include "syncopate/gui/widgets/palette.hpp"

namespace syncopate::gui {

const QStaticText& TextCache::get(const QString& text, int max_width, const QFont& font) {
  QString key = text;
  key += QChar(0x1f);
  key += QString::number(max_width);
  key += QChar(0x1f);
  key += font.key();
  auto it = entries_.find(key);
  if (it != entries_.end()) return *it;
  if (entries_.size() >= kCapacity) entries_.clear();
  QStaticText st(QFontMetrics(font).elidedText(text, Qt::ElideRight, std::max(0, max_width)));
  st.setTextFormat(Qt::PlainText);
  st.prepare(QTransform(), font);
  return *entries_.insert(key, st);
}

namespace {

constexpr double kItemMargin = 2;

// Draws `text` left-aligned in `r`, vertically centred, elided to its width.
void drawLabel(QPainter& p, TextCache& cache, const QRectF& r, const QString& text) {
  const QStaticText& st = cache.get(text, static_cast<int>(r.width()), p.font());
  p.drawStaticText(QPointF(r.left(), r.top() + (r.height() - st.size().height()) / 2), st);
}       // vertical gap between an item and its row's edges
constexpr double kMinLabelPixels = 36;  // narrower items carry no text

std::string_view itemName(const LoadedRun& run, const Lane& lane, std::size_t pos) {
  const auto& m = run.model;
  const Index row = lane.item[pos];
  switch (lane.kind) {
    case LaneKind::Stream: return m.str(m.ops.name[row]);
    case LaneKind::Thread: return m.str(m.api_calls.name[row]);
    case LaneKind::Ranges: return m.str(m.ranges.name[row]);
    case LaneKind::HostSyncs: return "host sync";
  }
  return {};
}

QColor itemColor(const LoadedRun& run, const Lane& lane, std::size_t pos) {
  if (lane.kind == LaneKind::Ranges) return palette::rangeColor(itemName(run, lane, pos));
  return palette::kindColor(lane.visual[pos]);
}

// Draws rectangles left to right, skipping any that fall inside the pixel column already
// filled: at any zoom a lane costs at most about one rectangle per pixel.
class LaneDrawer {
 public:
  LaneDrawer(QPainter& p, TextCache& text, double left, double right, double top, double height)
      : p_(p), text_(text), left_(left), right_(right), top_(top), height_(height) {}

  void draw(double x0, double x1, const QColor& color, const QString* label) {
    x0 = std::max(x0, left_ - 1);
    x1 = std::min(x1, right_ + 1);
    if (x1 < x0) return;
    if (x1 - x0 < 1) {
      // Sub-pixel: one pixel wide, unless that pixel is already drawn.
      const double px = std::floor(x0);
      if (px < filled_to_) return;
      x0 = px;
      x1 = px + 1;
    }
    filled_to_ = std::max(filled_to_, std::floor(x1));
    const QRectF r(x0, top_, x1 - x0, height_);
    p_.fillRect(r, color);
    if (label && r.width() >= kMinLabelPixels) {
      p_.setPen(color.lightness() < 140 ? Qt::white : palette::kText);
      drawLabel(p_, text_, r.adjusted(3, 0, -2, 0), *label);
    }
  }

 private:
  QPainter& p_;
  TextCache& text_;
  double left_, right_, top_, height_;
  double filled_to_ = -1e18;
};

void paintLane(QPainter& p, TextCache& cache, const TimelineModel& model, const TimeAxis& axis,
               const TimelineGeometry& g, std::uint32_t lane_index, double top, double height) {
  const Lane& lane = model.lane(lane_index);
  const LoadedRun& run = model.run(lane.run);
  const std::int64_t offset = model.displayOffset(lane.run);
  const double left = g.canvasLeft();
  auto x = [&](std::int64_t t) { return left + axis.toPixel(t + offset); };
  const std::int64_t t0 = axis.startNs() - offset, t1 = axis.endNs() - offset;
  LaneDrawer drawer(p, cache, left, left + g.canvasWidth(), top + kItemMargin, height - 2 * kItemMargin);
  QString text;
  if (const LodLevel* level = model.lodFor(lane_index, axis.nsPerPixel())) {
    const BlockRange r = visibleBlocks(*level, t0, t1);
    for (std::size_t i = r.first; i < r.last; ++i) {
      const LodBlock& b = level->blocks[i];
      const double x0 = x(b.start), x1 = x(b.end);
      if (b.count == 1) {
        const bool labelled = x1 - x0 >= kMinLabelPixels;
        if (labelled) text = QString::fromUtf8(itemName(run, lane, b.first));
        drawer.draw(x0, x1, itemColor(run, lane, b.first), labelled ? &text : nullptr);
      } else {
        const double extent = static_cast<double>(std::max<std::int64_t>(1, b.end - b.start));
        const bool labelled = x1 - x0 >= kMinLabelPixels;
        if (labelled) text = QString::number(b.count) + QLatin1String(" ops");
        drawer.draw(x0, x1, palette::mergedColor(b.kind, static_cast<double>(b.busy_ns) / extent),
                    labelled ? &text : nullptr);
      }
    }
    return;
  }
  // Fine zoom: the items themselves (ends are sorted as items do not overlap on a lane).
  auto it = std::upper_bound(lane.end.begin(), lane.end.end(), t0);
  for (auto i = static_cast<std::size_t>(it - lane.end.begin()); i < lane.size(); ++i) {
    if (lane.start[i] >= t1) break;
    const double x0 = x(lane.start[i]), x1 = x(lane.end[i]);
    const bool labelled = x1 - x0 >= kMinLabelPixels;
    if (labelled) text = QString::fromUtf8(itemName(run, lane, i));
    drawer.draw(x0, x1, itemColor(run, lane, i), labelled ? &text : nullptr);
  }
}

// The rank's strip: the top half shows how much of each pixel's time had communication exposed
// (not overlapped by compute), the bottom half how much was idle, within the rank's window
// (LoadedRun::rank_window).
// A rank whose rows are not loaded (a run opened on its summary) has the results' shares of
// each iteration instead, spread evenly over the iteration.
void paintRankStrip(QPainter& p, const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g,
                    const LaneGroup& group, double top, double height) {
  const LoadedRun& run = model.run(group.run);
  const auto& activity = run.activity[group.rank];
  const auto& exposed = run.exposed[group.rank];
  const bool from_rows = run.rowsLoaded(group.rank);
  const std::vector<IterationShare> no_shares;
  const auto& shares = from_rows ? no_shares : run.iteration_shares[group.rank];
  const std::int64_t begin = from_rows ? run.rank_window[group.rank].start : shares.empty() ? 0 : shares.front().start;
  const std::int64_t end = from_rows ? run.rank_window[group.rank].end : shares.empty() ? 0 : shares.back().end;
  const auto width = static_cast<int>(g.canvasWidth());
  if (width <= 0 || end <= begin) return;
  // The time in [a, b) of the iterations' exposed and idle shares.
  auto shared = [&shares](std::int64_t a, std::int64_t b) {
    double exposed_ns = 0, idle_ns = 0;
    auto it = std::lower_bound(shares.begin(), shares.end(), a, [](const IterationShare& s, std::int64_t t) { return s.end <= t; });
    for (; it != shares.end() && it->start < b; ++it) {
      const auto overlap = static_cast<double>(std::min(b, it->end) - std::max(a, it->start));
      if (overlap <= 0) continue;
      exposed_ns += overlap * it->exposed;
      idle_ns += overlap * it->idle;
    }
    return std::make_pair(exposed_ns, idle_ns);
  };
  QImage strip(width, 2, QImage::Format_ARGB32_Premultiplied);
  strip.fill(Qt::transparent);
  const std::int64_t offset = model.displayOffset(group.run);
  auto premultiplied = [](const QColor& c, double f) {
    const int a = static_cast<int>(std::clamp(f, 0.0, 1.0) * 255);
    return qRgba(c.red() * a / 255, c.green() * a / 255, c.blue() * a / 255, a);
  };
  auto* top_row = reinterpret_cast<QRgb*>(strip.scanLine(0));
  auto* bottom_row = reinterpret_cast<QRgb*>(strip.scanLine(1));
  for (int px = 0; px < width; ++px) {
    const std::int64_t a = std::max(axis.toTime(px) - offset, begin);
    const std::int64_t b = std::min(axis.toTime(px + 1) - offset, end);
    if (b <= a) continue;
    const double len = static_cast<double>(b - a);
    if (!from_rows) {
      const auto [exposed_ns, idle_ns] = shared(a, b);
      top_row[px] = premultiplied(palette::kExposed, exposed_ns / len);
      bottom_row[px] = premultiplied(palette::kIdle, idle_ns / len);
      continue;
    }
    top_row[px] = premultiplied(palette::kExposed, static_cast<double>(exposed.measure(a, b)) / len);
    bottom_row[px] = premultiplied(palette::kIdle, 1.0 - static_cast<double>(activity.busy.measure(a, b)) / len);
  }
  p.drawImage(QRectF(g.canvasLeft(), top, width, height), strip);
}

// Where iteration starts are drawn: at most one per `min_gap` pixels, so that thousands of
// iterations zoomed out cost what fits on screen. Calls fn(x, number).
template <class Fn>
void forVisibleIterationStarts(const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g,
                               double min_gap, Fn&& fn) {
  for (std::uint32_t r = 0; r < model.runCount(); ++r) {
    const std::int64_t offset = model.displayOffset(r);
    const auto& spans = model.run(r).iteration_spans;
    // Spans are by number, and so by start.
    auto it = std::lower_bound(spans.begin(), spans.end(), axis.startNs() - offset,
                               [](const IterationSpan& s, std::int64_t t) { return s.start < t; });
    double last_x = -1e18;
    for (; it != spans.end(); ++it) {
      const double x = g.canvasLeft() + axis.toPixel(it->start + offset);
      if (x > g.size.width()) break;
      if (x - last_x < min_gap) continue;
      last_x = x;
      fn(x, it->number);
    }
  }
}

void paintRuler(QPainter& p, TextCache& cache, const TimelineModel& model, const TimeAxis& axis,
                const TimelineGeometry& g) {
  p.fillRect(QRectF(0, 0, g.size.width(), g.ruler_height), palette::kLabelBackground);
  const std::int64_t origin = model.runCount() > 0 ? model.run(0).begin_ns + model.displayOffset(0) : 0;
  const Ruler r = makeRuler(axis, origin);
  p.setPen(palette::kText);
  for (const RulerTick& t : r.ticks) {
    const double x = g.canvasLeft() + axis.toPixel(t.time);
    p.drawLine(QPointF(x, g.ruler_height - (t.major ? 10 : 4)), QPointF(x, g.ruler_height));
    if (t.major) {
      p.drawText(QPointF(x + 3, g.ruler_height - 13),
                 QString::fromStdString(formatTimeLabel(t.time - origin, r.major_step_ns)));
    }
  }
  // Iteration numbers where their dashed lines meet the ruler.
  p.setPen(palette::kIteration);
  forVisibleIterationStarts(model, axis, g, 40, [&](double x, std::int64_t number) {
    p.drawText(QPointF(x + 3, g.ruler_height - 1), QStringLiteral("#%1").arg(number));
  });
  p.setPen(palette::kText);
  drawLabel(p, cache, QRectF(6, 0, g.label_width - 12, g.ruler_height),
            QStringLiteral("window ") + QString::fromStdString(formatDuration(static_cast<std::int64_t>(axis.span()))));
}

void paintLabels(QPainter& p, TextCache& cache, const TimelineModel& model, const TimelineGeometry& g,
                 std::size_t first_row, std::size_t last_row) {
  p.fillRect(QRectF(0, g.ruler_height, g.label_width, g.size.height() - g.ruler_height), palette::kLabelBackground);
  const QFont normal = p.font();
  QFont small = normal;
  small.setPointSizeF(normal.pointSizeF() * 0.8);
  const auto& rows = model.rows();
  for (std::size_t i = first_row; i < last_row; ++i) {
    const LayoutRow& row = rows[i];
    const double top = g.rowTop(row);
    const double indent = 6 + 12 * row.indent;
    QRectF r(indent, top, g.label_width - indent - 4, row.height);
    QString text;
    switch (row.kind) {
      case LayoutRow::Kind::Group: {
        const LaneGroup& group = model.group(row.index);
        p.fillRect(QRectF(0, top, g.label_width, row.height),
                   group.kind == GroupKind::Rank ? palette::kGroupBackground : palette::kRunBackground);
        text = QString::fromUtf8(model.collapsed(row.index) ? "▸ " : "▾ ") + QString::fromStdString(group.label);
        p.setPen(palette::kText);
        break;
      }
      case LayoutRow::Kind::RankStrip:
        text = QStringLiteral("exposed comm / idle");
        p.setPen(QColor(110, 110, 110));
        p.setFont(small);
        break;
      case LayoutRow::Kind::Lane:
        text = QString::fromStdString(model.lane(row.index).label);
        p.setPen(palette::kText);
        break;
    }
    drawLabel(p, cache, r, text);
    p.setFont(normal);
  }
  p.setPen(palette::kGridLine);
  p.drawLine(QPointF(g.label_width - 0.5, g.ruler_height), QPointF(g.label_width - 0.5, g.size.height()));
}

// A thin line at each iteration start (numbers are drawn by the ruler), with a solid one-pixel
// pen: dashed pens go through the stroker, and tall fills through Qt's fill threads, both of
// which hundreds of iterations make visible in the frame time.
void paintIterationStarts(QPainter& p, const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g) {
  QPen pen(palette::kIteration, 1);
  pen.setCosmetic(true);
  p.setPen(pen);
  forVisibleIterationStarts(model, axis, g, 4, [&](double x, std::int64_t) {
    const double px = std::floor(x) + 0.5;
    p.drawLine(QPointF(px, g.ruler_height), QPointF(px, g.size.height()));
  });
}

double rowCentre(const TimelineModel& model, const TimelineGeometry& g, std::uint32_t lane) {
  const int row = model.rowOfLane(lane);
  if (row < 0) return -1;
  const LayoutRow& r = model.rows()[static_cast<std::size_t>(row)];
  return g.rowTop(r) + r.height / 2;
}

void paintOverlays(QPainter& p, const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g,
                   const TimelineOverlays& o) {
  auto x = [&](std::int64_t t) { return g.canvasLeft() + axis.toPixel(t); };
  const double top = g.ruler_height, bottom = g.size.height();

  if (o.range) {
    const double x0 = x(o.range->first), x1 = x(o.range->second);
    p.fillRect(QRectF(x0, top, x1 - x0, bottom - top), palette::kRangeFill);
    p.setPen(palette::kRangeEdge);
    p.drawLine(QPointF(x0, top), QPointF(x0, bottom));
    p.drawLine(QPointF(x1, top), QPointF(x1, bottom));
    p.drawText(QRectF(x0, top, std::max(80.0, x1 - x0), 14), Qt::AlignHCenter | Qt::AlignTop,
               QString::fromStdString(formatDuration(o.range->second - o.range->first)));
  }

  // Critical path: each segment outlined on its lane (filled edges, cheaper than a stroked
  // rectangle), consecutive segments joined; segments off screen are skipped.
  if (!o.critical_path.empty()) {
    QPen joint(palette::kCriticalPath, 1);
    joint.setCosmetic(true);
    p.setPen(joint);
    const double left = g.canvasLeft(), right = g.size.width();
    QPointF prev;
    bool have_prev = false;
    for (const PathMark& m : o.critical_path) {
      const double y = m.lane ? rowCentre(model, g, *m.lane) : -1;
      if (y < 0) {
        have_prev = false;
        continue;
      }
      const double x0 = x(m.start), x1 = std::max(x(m.end), x0 + 1);
      if (have_prev && !(prev.x() > right && x0 > right) && !(prev.x() < left && x0 < left)) p.drawLine(prev, QPointF(x0, y));
      prev = QPointF(x1, y);
      have_prev = true;
      if (x1 < left || x0 > right) continue;
      const double box = y - TimelineModel::kLaneHeight / 2 + 1, h = TimelineModel::kLaneHeight - 2;
      const QColor c = palette::kCriticalPath;
      if (m.category == analyzer::PathCategory::StragglerWait) {
        // Waiting for a straggler: a hatched underline rather than a box.
        p.fillRect(QRectF(x0, box + h - 3, x1 - x0, 3), QBrush(c, Qt::Dense4Pattern));
        continue;
      }
      p.fillRect(QRectF(x0, box, x1 - x0, 2), c);
      p.fillRect(QRectF(x0, box + h - 2, x1 - x0, 2), c);
      p.fillRect(QRectF(x0, box, 2, h), c);
      p.fillRect(QRectF(x1 - 2, box, 2, h), c);
    }
  }

  // A collective: its ranks joined at their arrivals, each rank's wait drawn up to the last
  // arrival, the last one ringed.
  if (o.collective) {
    std::vector<QPointF> points;
    for (const CollectiveEnd& e : o.collective->ends) {
      if (!e.at) continue;
      const double y = rowCentre(model, g, e.at->lane);
      if (y < 0) continue;
      const double xa = x(e.arrival);
      points.emplace_back(xa, y);
      if (e.waited_ns > 0) {
        p.setPen(QPen(palette::kExposed, 3));
        p.drawLine(QPointF(xa, y + 5), QPointF(x(e.arrival + e.waited_ns), y + 5));
      }
      if (e.last) {
        p.setPen(QPen(palette::kExposed, 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QPointF(xa, y), 7, 7);
      }
    }
    std::sort(points.begin(), points.end(), [](const QPointF& a, const QPointF& b) { return a.y() < b.y(); });
    p.setPen(QPen(palette::kCollectiveLink, 2));
    for (std::size_t i = 1; i < points.size(); ++i) p.drawLine(points[i - 1], points[i]);
    p.setBrush(palette::kCollectiveLink);
    for (const QPointF& pt : points) p.drawEllipse(pt, 3, 3);
    p.setBrush(Qt::NoBrush);
  }

  // Launch flows: from the start of the API call to the start of the GPU op.
  p.setPen(QPen(palette::kLaunchFlow, 1.5));
  for (const auto& [call, op] : o.flows) {
    const double y0 = rowCentre(model, g, call.lane), y1 = rowCentre(model, g, op.lane);
    if (y0 < 0 || y1 < 0) continue;
    const QPointF a(x(model.displayStart(call)), y0);
    const QPointF b(x(model.displayStart(op)), y1);
    p.drawLine(a, b);
    const double dir = b.y() >= a.y() ? -1 : 1;
    p.drawLine(b, b + QPointF(-4, 6 * dir));
    p.drawLine(b, b + QPointF(4, 6 * dir));
  }

  p.setBrush(Qt::NoBrush);
  if (o.selected) {
    if (auto r = itemRect(model, axis, g, *o.selected)) {
      p.setPen(QPen(palette::kSelection, 2));
      p.drawRect(r->adjusted(-1, -1, 1, 1));
    }
  }
  if (o.selected_block && o.selected_block->found()) {
    const double y = rowCentre(model, g, o.selected_block->lane);
    if (y >= 0) {
      const double x0 = x(o.selected_block->start);
      const double x1 = std::max(x(o.selected_block->end), x0 + 1);
      p.setPen(QPen(palette::kSelection, 2, Qt::DotLine));
      p.drawRect(QRectF(x0 - 1, y - TimelineModel::kLaneHeight / 2, x1 - x0 + 2, TimelineModel::kLaneHeight));
    }
  }
}

}  // namespace

std::optional<QRectF> itemRect(const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g,
                               const LanePosition& at) {
  const int row = model.rowOfLane(at.lane);
  if (row < 0) return std::nullopt;
  const LayoutRow& r = model.rows()[static_cast<std::size_t>(row)];
  const double x0 = g.canvasLeft() + axis.toPixel(model.displayStart(at));
  const double x1 = g.canvasLeft() + axis.toPixel(model.displayEnd(at));
  return QRectF(x0, g.rowTop(r) + kItemMargin, std::max(1.0, x1 - x0), r.height - 2 * kItemMargin);
}

void paintTimeline(QPainter& p, const TimelineModel& model, const TimeAxis& axis, const TimelineGeometry& g,
                   const TimelineOverlays& overlays, TextCache& text) {
  p.fillRect(QRect(QPoint(0, 0), g.size), palette::kBackground);
  const auto& rows = model.rows();
  // Rows intersecting the visible content band.
  const double view_top = g.scroll_y, view_bottom = g.scroll_y + g.size.height() - g.ruler_height;
  auto first = std::upper_bound(rows.begin(), rows.end(), view_top,
                                [](double y, const LayoutRow& r) { return y < r.y + r.height; });
  auto last = std::lower_bound(first, rows.end(), view_bottom, [](const LayoutRow& r, double y) { return r.y < y; });
  const auto first_row = static_cast<std::size_t>(first - rows.begin());
  const auto last_row = static_cast<std::size_t>(last - rows.begin());

  p.save();
  p.setClipRect(QRectF(g.canvasLeft(), g.ruler_height, g.canvasWidth(), g.size.height() - g.ruler_height));
  for (std::size_t i = first_row; i < last_row; ++i) {
    const LayoutRow& row = rows[i];
    const double top = g.rowTop(row);
    switch (row.kind) {
      case LayoutRow::Kind::Group:
        p.fillRect(QRectF(g.canvasLeft(), top, g.canvasWidth(), row.height),
                   model.group(row.index).kind == GroupKind::Rank ? palette::kGroupBackground : palette::kRunBackground);
        break;
      case LayoutRow::Kind::RankStrip:
        paintRankStrip(p, model, axis, g, model.group(row.index), top, row.height);
        break;
      case LayoutRow::Kind::Lane:
        if (i % 2 == 1) p.fillRect(QRectF(g.canvasLeft(), top, g.canvasWidth(), row.height), palette::kLaneStripe);
        paintLane(p, text, model, axis, g, row.index, top, row.height);
        break;
    }
  }
  paintIterationStarts(p, model, axis, g);
  paintOverlays(p, model, axis, g, overlays);
  p.restore();
  paintLabels(p, text, model, g, first_row, last_row);
  paintRuler(p, text, model, axis, g);
}

}  // namespace syncopate::gui
