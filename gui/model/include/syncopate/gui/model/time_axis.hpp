// The mapping between time and pixels of the timeline: the view state (which window of time is
// shown on how many pixels), kept apart from the data (what is shown) as Tracy and Perfetto do.
// Times are "display" nanoseconds: a run's aligned time plus its compare offset
// (TimelineModel::displayOffset).
//
// Aligned times are CLOCK_REALTIME nanoseconds (about 1.8e18), where a double's resolution is
// 256 ns, coarser than a pixel when zoomed in. So the window is kept as doubles relative to an
// integer origin (the start of the data), and times cross this interface as int64.
#pragma once

#include <cstdint>
#include <vector>

namespace syncopate::gui {

class TimeAxis {
 public:
  // The narrowest window zooming in may reach, whatever the width.
  static constexpr std::int64_t kMinSpanNs = 100;

  // Pixels available to the time axis (> 0).
  void setWidth(double pixels);
  double width() const { return width_; }

  // The data's extent: zooming out stops at a little more than it, panning keeps part of it in
  // view. Also the origin of the window's doubles.
  void setBounds(std::int64_t begin, std::int64_t end);
  std::int64_t boundsBegin() const { return origin_; }
  std::int64_t boundsEnd() const { return origin_ + bounds_length_; }

  // The visible window [start, end), clamped to the zoom limits.
  void setWindow(std::int64_t start, std::int64_t end);
  std::int64_t startNs() const;  // rounded down
  std::int64_t endNs() const;    // rounded up
  double span() const { return end_ - start_; }

  double nsPerPixel() const { return span() / width_; }
  double toPixel(std::int64_t t) const { return (static_cast<double>(t - origin_) - start_) / span() * width_; }
  // The time at pixel x, rounded down to a nanosecond.
  std::int64_t toTime(double x) const;

  // Zooms by `factor` (> 1 in, < 1 out) keeping the time under pixel `x` where it is.
  void zoomAt(double x, double factor);
  // Moves the window by `pixels` (positive: later times come into view).
  void panPixels(double pixels);
  // Shows [a, b) with `margin` of its length on each side.
  void fit(std::int64_t a, std::int64_t b, double margin = 0.02);
  void fitBounds() { fit(boundsBegin(), boundsEnd()); }

 private:
  void clamp();
  double width_ = 1000;
  std::int64_t origin_ = 0;            // bounds begin
  std::int64_t bounds_length_ = 1'000'000;
  double start_ = 0, end_ = 1'000'000; // relative to origin_
};

// A tick of the time ruler.
struct RulerTick {
  std::int64_t time = 0;  // display ns
  bool major = false;     // labelled
};

// Ticks for the visible window: majors on a 1-2-5 x 10^k ns grid (relative to `origin`) at
// least `min_major_px` apart, with 5 (or 4 for a 2-step) minor ticks between majors.
struct Ruler {
  std::int64_t major_step_ns = 1;
  std::int64_t origin = 0;
  std::vector<RulerTick> ticks;
};
Ruler makeRuler(const TimeAxis& axis, std::int64_t origin, double min_major_px = 90);

}  // namespace syncopate::gui
