#include "syncopate/gui/widgets/range_stats_panel.hpp"

#include "syncopate/gui/model/units.hpp"

namespace syncopate::gui {

namespace {

QString dur(std::int64_t ns) {
  return QString::fromStdString(formatDuration(ns));
}

QString pct(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? QString::number(100.0 * static_cast<double>(part) / static_cast<double>(whole), 'f', 1) + QLatin1String(" %")
                   : QStringLiteral("–");
}

}  // namespace

RangeStatsPanel::RangeStatsPanel(QWidget* parent) : QTextBrowser(parent) {
  showNothing();
}

void RangeStatsPanel::showNothing() {
  setHtml(QStringLiteral("<p><i>Shift+drag on the timeline, or drag on the ruler, to select a range.</i></p>"));
}

void RangeStatsPanel::showPending(std::int64_t start, std::int64_t end) {
  setHtml(QStringLiteral("<p>Measuring %1 …</p>").arg(dur(end - start)));
}

void RangeStatsPanel::showStatistics(const RangeStatistics& stats) {
  QString out = QStringLiteral("<h3>Range of %1</h3>").arg(dur(stats.end - stats.start));
  for (const RunRangeStats& run : stats.runs) {
    if (stats.runs.size() > 1) out += QStringLiteral("<h4>%1</h4>").arg(QString::fromStdString(run.label).toHtmlEscaped());
    out += QStringLiteral(
        "<table cellspacing=4><tr><th>rank</th><th>ops</th><th>compute</th><th>comm</th><th>exposed comm</th>"
        "<th>overlap</th><th>memory</th><th>idle</th></tr>");
    for (const RankRangeStats& r : run.ranks) {
      out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td>%7</td><td>%8</td></tr>")
                 .arg(r.rank_number)
                 .arg(r.ops)
                 .arg(dur(r.time.compute_ns), dur(r.time.communication_ns), dur(r.time.exposed_communication_ns),
                      pct(r.time.overlapped_communication_ns, r.time.communication_ns), dur(r.time.memory_ns),
                      dur(r.time.idle_ns));
    }
    out += QStringLiteral("</table><p><b>Ops by kind</b> (starting in the range)</p><table cellspacing=4>");
    for (std::size_t k = 0; k < run.by_kind.size(); ++k) {
      if (run.by_kind[k].count == 0) continue;
      out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                 .arg(QString::fromUtf8(trace::toString(static_cast<trace::OpKind>(k)).data()))
                 .arg(run.by_kind[k].count)
                 .arg(dur(run.by_kind[k].time_ns));
    }
    out += QStringLiteral("</table><p><b>Top kernels</b></p><table cellspacing=4><tr><th>name</th><th>count</th>"
                          "<th>total</th><th>mean</th><th>ranks</th></tr>");
    for (const TopKernel& k : run.top_kernels) {
      out += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>")
                 .arg(QString::fromStdString(k.name).toHtmlEscaped())
                 .arg(k.count)
                 .arg(dur(k.total_ns), dur(static_cast<std::int64_t>(k.mean_ns)))
                 .arg(k.ranks);
    }
    out += QStringLiteral("</table>");
  }
  setHtml(out);
}

}  // namespace syncopate::gui
