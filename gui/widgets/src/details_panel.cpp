#include "syncopate/gui/widgets/details_panel.hpp"

#include <QStringList>

#include "syncopate/gui/model/item_details.hpp"
#include "syncopate/gui/model/links.hpp"
#include "syncopate/gui/model/units.hpp"

namespace syncopate::gui {

namespace {

QString html(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

QString itemLink(const TimelineModel& model, const ItemRef& item) {
  const ItemDetails d = describeItem(model, item);
  return QStringLiteral("<a href=\"%1\">%2</a>").arg(itemAnchor(item), html(d.title.empty() ? "(unnamed)" : d.title));
}

QString collectiveHtml(const TimelineModel& model, const CollectiveLink& link) {
  QString out = QStringLiteral("<h4>%1 · communicator %2 · call %3</h4>")
                    .arg(html(std::string(trace::toString(link.type))))
                    .arg(link.comm_id)
                    .arg(link.seq);
  if (!link.complete) {
    out += QStringLiteral("<p>%1 of %2 ranks are in this recording.</p>").arg(link.ends.size()).arg(link.expected);
  }
  if (link.timing) {
    const auto& t = *link.timing;
    out += QStringLiteral("<p>arrival skew %1").arg(html(formatDuration(t.arrival_skew_ns)));
    if (t.straggler != kNone) {
      out += QStringLiteral(" · <b>rank %1 was last</b>, %2 after the one before it")
                 .arg(model.run(link.run).model.ranks[t.straggler].rank)
                 .arg(html(formatDuration(t.lateness_ns)));
    }
    if (t.busbw_gbps > 0) out += QStringLiteral(" · bus bandwidth %1 GB/s").arg(t.busbw_gbps, 0, 'f', 2);
    out += QStringLiteral("</p>");
  } else {
    out += QStringLiteral("<p><i>Arrival skew and the straggler appear once the analysis is ready.</i></p>");
  }
  out += QStringLiteral("<table cellspacing=4><tr><th>rank</th><th>arrived</th><th>waited</th><th></th></tr>");
  std::int64_t first = link.ends.empty() ? 0 : link.ends.front().arrival;
  for (const auto& e : link.ends) first = std::min(first, e.arrival);
  for (const auto& e : link.ends) {
    out += QStringLiteral("<tr><td><a href=\"%1\">%2</a></td><td>+%3</td><td>%4</td><td>%5</td></tr>")
               .arg(itemAnchor({link.run, ItemTable::Op, e.op}))
               .arg(model.run(link.run).model.ranks[e.rank].rank)
               .arg(html(formatDuration(e.arrival - first)), html(formatDuration(e.waited_ns)),
                    e.last ? QStringLiteral("<b>last</b>") : QString());
  }
  return out + QStringLiteral("</table>");
}

}  // namespace

QString itemAnchor(const ItemRef& item) {
  return QStringLiteral("item:%1:%2:%3").arg(item.run).arg(static_cast<int>(item.table)).arg(item.index);
}

std::optional<ItemRef> parseItemAnchor(const QString& anchor) {
  const QStringList parts = anchor.split(QLatin1Char(':'));
  if (parts.size() != 4 || parts[0] != QLatin1String("item")) return std::nullopt;
  bool ok1 = false, ok2 = false, ok3 = false;
  ItemRef r;
  r.run = parts[1].toUInt(&ok1);
  const int table = parts[2].toInt(&ok2);
  r.index = parts[3].toUInt(&ok3);
  if (!ok1 || !ok2 || !ok3 || table < 0 || table > static_cast<int>(ItemTable::HostSync)) return std::nullopt;
  r.table = static_cast<ItemTable>(table);
  return r;
}

DetailsPanel::DetailsPanel(const TimelineModel* model, QWidget* parent) : QTextBrowser(parent), model_(model) {
  setOpenLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (auto item = parseItemAnchor(url.toString())) emit navigate(*item);
  });
  showNothing();
}

void DetailsPanel::showNothing() {
  setHtml(QStringLiteral("<p><i>Click an op, an API call or a range on the timeline.</i></p>"));
}

void DetailsPanel::showItem(const ItemRef& item) {
  const ItemDetails d = describeItem(*model_, item);
  QString out = QStringLiteral("<h3>%1</h3><table cellspacing=3>").arg(html(d.title));
  for (const auto& [k, v] : d.fields)
    out += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(html(k), html(v));
  out += QStringLiteral("</table>");
  if (auto call = launchingCall(*model_, item)) {
    out += QStringLiteral("<p>Launched by %1</p>").arg(itemLink(*model_, *call));
  }
  const auto ops = launchedOps(*model_, item);
  if (!ops.empty()) {
    out += QStringLiteral("<p>Launched:</p><ul>");
    constexpr std::size_t kShown = 20;
    for (std::size_t i = 0; i < ops.size() && i < kShown; ++i) out += QStringLiteral("<li>%1</li>").arg(itemLink(*model_, ops[i]));
    if (ops.size() > kShown) out += QStringLiteral("<li>… and %1 more</li>").arg(ops.size() - kShown);
    out += QStringLiteral("</ul>");
  }
  if (item.table == ItemTable::Op) {
    if (auto link = collectiveLink(*model_, item.run, item.index)) out += collectiveHtml(*model_, *link);
  }
  setHtml(out);
}

void DetailsPanel::showBlock(const Hit& block) {
  setHtml(QStringLiteral("<h3>%1 merged items</h3><p>%2 to %3 (%4), mostly %5.</p>"
                         "<p><i>Zoom in (W, Ctrl+wheel or double-click) to see them one by one.</i></p>")
              .arg(block.count)
              .arg(html(formatDuration(block.start - model_->beginNs(), 6)), html(formatDuration(block.end - model_->beginNs(), 6)),
                   html(formatDuration(block.end - block.start)), html(std::string(toString(block.kind)))));
}

}  // namespace syncopate::gui
