#include "syncopate/gui/widgets/palette.hpp"

#include <algorithm>
#include <cstdint>

namespace syncopate::gui::palette {

QColor kindColor(VisualKind kind) {
  switch (kind) {
    case VisualKind::Compute: return {76, 120, 168};         // blue
    case VisualKind::Communication: return {245, 133, 24};   // orange
    case VisualKind::Memory: return {84, 162, 75};           // green
    case VisualKind::Marker: return {110, 110, 110};
    case VisualKind::Sync: return {178, 121, 162};           // purple
    case VisualKind::HostCall: return {157, 180, 192};       // grey-blue
    case VisualKind::NcclCall: return {255, 191, 121};       // light orange
    case VisualKind::Range: return {186, 176, 172};
  }
  return {0, 0, 0};
}

QColor mergedColor(VisualKind kind, double occupancy) {
  // Darker than single items (so a merged block reads as "many"), fading towards the
  // background where the block was mostly idle.
  const QColor base = kindColor(kind).darker(125);
  const double a = std::clamp(0.35 + 0.65 * occupancy, 0.0, 1.0);
  auto mix = [a](int c, int bg) { return static_cast<int>(c * a + bg * (1 - a)); };
  return {mix(base.red(), kBackground.red()), mix(base.green(), kBackground.green()),
          mix(base.blue(), kBackground.blue())};
}

QColor rangeColor(std::string_view name) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return QColor::fromHsv(static_cast<int>(h % 360), 60, 235);
}

QColor pathColor(analyzer::PathCategory category) {
  using analyzer::PathCategory;
  switch (category) {
    case PathCategory::Compute: return kindColor(VisualKind::Compute);
    case PathCategory::Memory: return kindColor(VisualKind::Memory);
    case PathCategory::Communication: return kindColor(VisualKind::Communication);
    case PathCategory::StragglerWait: return kExposed;
    case PathCategory::Launch: return kindColor(VisualKind::HostCall);
    case PathCategory::Host: return kindColor(VisualKind::HostCall);
    case PathCategory::Sync: return kindColor(VisualKind::Sync);
    case PathCategory::Idle: return kIdle;
  }
  return kIdle;
}

}  // namespace syncopate::gui::palette
