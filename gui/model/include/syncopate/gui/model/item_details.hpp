// The details panel's content for one item, as (field, value) pairs, so what it says is
// tested without a window.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "syncopate/gui/model/timeline_model.hpp"

namespace syncopate::gui {

struct ItemDetails {
  std::string title;
  std::vector<std::pair<std::string, std::string>> fields;
  // The value of `field`, or empty.
  std::string value(std::string_view field) const;
};

// Times are shown relative to the beginning of the item's run.
ItemDetails describeItem(const TimelineModel& timeline, const ItemRef& item);

}  // namespace syncopate::gui
