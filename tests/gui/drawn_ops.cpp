#include "drawn_ops.hpp"

#include <QApplication>

#include <algorithm>
#include <cmath>
#include <vector>

#include "syncopate/gui/widgets/palette.hpp"

namespace syncopate::gui::testing {

DrawnOps checkDrawnOps(MainWindow& w) {
  DrawnOps out;
  const TimelineModel& m = w.model();
  TimelineWidget* tl = w.timeline();
  const TimelineGeometry g0 = tl->geometry();
  std::vector<double> iteration_x;
  for (const IterationSpan& s : m.run(0).iteration_spans) iteration_x.push_back(g0.canvasLeft() + tl->axis().toPixel(s.start));
  for (analyzer::Index r = 0; r < m.run(0).model.ranks.size(); ++r) {
    std::vector<std::uint32_t> streams;
    for (std::uint32_t l : m.group(static_cast<std::uint32_t>(m.rankGroup(0, r))).lanes)
      if (m.lane(l).kind == LaneKind::Stream) streams.push_back(l);
    if (streams.empty()) continue;
    // Each rank's streams in turn (NVTX and thread lanes make the ranks taller than the window).
    tl->scrollToRow(m.rowOfLane(streams.back()));
    QApplication::processEvents();
    const QImage shot = w.grab().toImage();
    const TimelineGeometry g = tl->geometry();
    for (std::uint32_t l : streams) {
      const Lane& lane = m.lane(l);
      const LayoutRow& row = m.rows()[static_cast<std::size_t>(m.rowOfLane(l))];
      const double y = g.rowTop(row) + row.height / 2;
      if (y <= g.ruler_height || y >= g.size.height() - 2) {
        out.failure = "lane " + lane.label + " of rank " + std::to_string(r) + " is not on screen";
        return out;
      }
      for (std::size_t i = 0; i < lane.size(); ++i) {
        const double x0 = g.canvasLeft() + tl->axis().toPixel(lane.start[i]);
        const double x1 = g.canvasLeft() + tl->axis().toPixel(lane.end[i]);
        if (x1 - x0 < 4 || x0 < g.canvasLeft() || x1 > g.size.width()) continue;
        // Just inside the right end: clear of the op's label; not where an iteration line is.
        const double x = x1 - 1.5;
        if (std::any_of(iteration_x.begin(), iteration_x.end(), [&](double ix) { return std::abs(ix - x) < 2; })) continue;
        const QColor c = shot.pixelColor(tl->mapTo(&w, QPoint(static_cast<int>(x), static_cast<int>(y))));
        if (c == palette::kCriticalPath) continue;  // the path outlines this op
        if (c != palette::kindColor(lane.visual[i])) {
          out.failure = "op " + std::to_string(i) + " of lane " + lane.label + " is drawn " + c.name().toStdString() +
                        ", not in its kind's colour " + palette::kindColor(lane.visual[i]).name().toStdString();
          return out;
        }
        ++out.checked;
        out.communication += lane.visual[i] == VisualKind::Communication;
      }
    }
  }
  return out;
}

}  // namespace syncopate::gui::testing
