#include "syncopate/gui/model/visual_kind.hpp"

namespace syncopate::gui {

std::string_view toString(VisualKind k) {
  switch (k) {
    case VisualKind::Compute: return "compute";
    case VisualKind::Communication: return "communication";
    case VisualKind::Memory: return "memory";
    case VisualKind::Marker: return "marker";
    case VisualKind::Sync: return "sync";
    case VisualKind::HostCall: return "API call";
    case VisualKind::NcclCall: return "NCCL call";
    case VisualKind::Range: return "range";
  }
  return "?";
}

VisualKind visualKindOf(analyzer::OpClass c) {
  switch (c) {
    case analyzer::OpClass::Compute: return VisualKind::Compute;
    case analyzer::OpClass::Communication: return VisualKind::Communication;
    case analyzer::OpClass::Memory: return VisualKind::Memory;
    case analyzer::OpClass::Marker: return VisualKind::Marker;
  }
  return VisualKind::Compute;
}

}  // namespace syncopate::gui
