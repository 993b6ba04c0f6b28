// Details of the selected op, API call, range or merged block, with links that navigate the
// timeline: from a GPU op to the call that launched it and back, and between the ranks of a
// collective (arrival, wait, who was late).
#pragma once

#include <QTextBrowser>

#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

class DetailsPanel : public QTextBrowser {
  Q_OBJECT
 public:
  explicit DetailsPanel(const TimelineModel* model, QWidget* parent = nullptr);
  void showItem(const ItemRef& item);
  void showBlock(const Hit& block);
  void showNothing();

 signals:
  void navigate(const syncopate::gui::ItemRef& item);

 private:
  const TimelineModel* model_;
};

// Anchors of the panels' links: "item:<run>:<table>:<index>".
QString itemAnchor(const ItemRef& item);
std::optional<ItemRef> parseItemAnchor(const QString& anchor);

}  // namespace syncopate::gui
