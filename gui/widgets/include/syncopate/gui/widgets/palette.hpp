// The timeline's colours, in one place: compute, communication, memory and sync apart at a
// glance (the screenshot test checks these exact colours where ops are).
#pragma once

#include <QColor>

#include <string_view>

#include "syncopate/analyzer/critical_path.hpp"
#include "syncopate/gui/model/visual_kind.hpp"

namespace syncopate::gui::palette {

QColor kindColor(VisualKind kind);
// A merged LOD block of `kind` that is busy `occupancy` (0..1) of its extent.
QColor mergedColor(VisualKind kind, double occupancy);
// NVTX ranges: a light colour derived from the name, so one name keeps one colour.
QColor rangeColor(std::string_view name);
QColor pathColor(analyzer::PathCategory category);

inline const QColor kBackground{255, 255, 255};
inline const QColor kLaneStripe{246, 247, 249};
inline const QColor kLabelBackground{238, 240, 243};
inline const QColor kGroupBackground{225, 229, 235};
inline const QColor kRunBackground{200, 208, 220};
inline const QColor kGridLine{226, 228, 232};
inline const QColor kText{30, 34, 40};
inline const QColor kExposed{214, 39, 40};    // exposed communication in the rank strip
inline const QColor kIdle{150, 150, 150};     // idle GPU in the rank strip
inline const QColor kSelection{20, 20, 20};
inline const QColor kRangeFill{66, 133, 244, 40};
inline const QColor kRangeEdge{66, 133, 244};
inline const QColor kCriticalPath{230, 0, 126};
inline const QColor kCollectiveLink{120, 60, 200};
inline const QColor kLaunchFlow{0, 120, 90};
inline const QColor kIteration{150, 150, 160, 110};  // translucent: items stay readable under it

}  // namespace syncopate::gui::palette
