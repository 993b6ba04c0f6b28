// Which iterations an armed process records. The application's threads report iteration
// markers (NVTX ranges named by the marker rule) through onMarker(); the control channel
// (background thread) sets a plan from an attach request. Recording switches on exactly at the
// marker that starts the planned first iteration and off at the marker that starts the first
// iteration after the plan, so every armed process records the same iterations.
//
// Marker rule: syncopate/collector/control_files.hpp (iterationOfMarker), shared with the
// analyzer's definition of an iteration.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace syncopate::preload {

class Recorder;

enum class WindowState : std::uint8_t { Idle, Waiting, Recording, Done, Missed };

class IterationWindow {
 public:
  explicit IterationWindow(std::string marker) : marker_(std::move(marker)) {}

  const std::string& marker() const noexcept { return marker_; }

  // App thread, at the start of every NVTX range (cheap unless the name is a marker).
  void onRangeStart(std::string_view name, std::int64_t now_ns, Recorder& recorder) noexcept;

  // Background thread. An iterations plan: record [first, first + count). A seconds plan:
  // start at `first` (or at once when first < 0) and stop after `seconds` (checked by tick()).
  void plan(std::uint64_t request, std::int64_t first, std::int64_t count, double seconds, std::int64_t now_ns,
            Recorder& recorder) noexcept;
  void tick(std::int64_t now_ns, Recorder& recorder) noexcept;

  std::int64_t currentIteration() const noexcept { return current_.load(std::memory_order_acquire); }
  double iterationsPerSecond() const noexcept;
  WindowState state() const noexcept { return state_.load(std::memory_order_acquire); }
  std::uint64_t request() const noexcept { return request_.load(std::memory_order_acquire); }
  std::int64_t recordedIterations() const noexcept { return recorded_.load(std::memory_order_acquire); }

 private:
  void begin(std::int64_t now_ns, Recorder& recorder) noexcept;
  void finish(WindowState state, Recorder& recorder) noexcept;

  const std::string marker_;
  std::atomic<std::int64_t> counted_{0};
  std::atomic<std::int64_t> current_{-1};  // the latest iteration started; -1 before any
  std::atomic<std::int64_t> first_marker_ns_{0};
  std::atomic<std::int64_t> first_marker_iteration_{0};
  std::atomic<std::int64_t> last_marker_ns_{0};

  std::atomic<WindowState> state_{WindowState::Idle};
  std::atomic<std::uint64_t> request_{0};
  std::atomic<std::int64_t> first_{-1};
  std::atomic<std::int64_t> stop_{-1};         // iteration plans: first iteration not recorded
  std::atomic<std::int64_t> stop_ns_{0};       // seconds plans: when to stop (0 until started)
  std::atomic<double> seconds_{0.0};
  std::atomic<std::int64_t> recorded_{0};
};

}  // namespace syncopate::preload
