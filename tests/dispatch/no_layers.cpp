// A process with the dispatch layer and no layer on it, for test programs that link the
// dispatch library without the preload library (preload/ assembles the real layers).
#include "syncopate/dispatch/layer.hpp"

namespace syncopate::preload {

const LayerList& activeLayers() noexcept {
  static const LayerList none;
  return none;
}

}  // namespace syncopate::preload
