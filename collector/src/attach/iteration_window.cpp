#include "attach/iteration_window.hpp"

#include "recorder/recorder.hpp"
#include "syncopate/collector/control_files.hpp"

namespace syncopate::preload {

void IterationWindow::onRangeStart(std::string_view name, std::int64_t now_ns, Recorder& recorder) noexcept {
  auto iteration = collector::iterationOfMarker(marker_, name, counted_.load(std::memory_order_relaxed));
  if (!iteration) return;
  counted_.fetch_add(1, std::memory_order_relaxed);
  if (current_.load(std::memory_order_relaxed) < 0) {
    first_marker_ns_.store(now_ns, std::memory_order_relaxed);
    first_marker_iteration_.store(*iteration, std::memory_order_relaxed);
  }
  last_marker_ns_.store(now_ns, std::memory_order_relaxed);
  current_.store(*iteration, std::memory_order_release);

  WindowState state = state_.load(std::memory_order_acquire);
  if (state == WindowState::Waiting && *iteration >= first_.load(std::memory_order_acquire)) {
    if (*iteration == first_.load(std::memory_order_acquire)) {
      begin(now_ns, recorder);
      state = WindowState::Recording;
    } else {
      finish(WindowState::Missed, recorder);  // jumped past the planned start (never records part)
      return;
    }
  }
  if (state == WindowState::Recording) {
    std::int64_t stop = stop_.load(std::memory_order_acquire);
    if (stop >= 0 && *iteration >= stop) {
      finish(WindowState::Done, recorder);
    } else if (stop >= 0) {
      recorded_.store(*iteration - first_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
  }
}

void IterationWindow::plan(std::uint64_t request, std::int64_t first, std::int64_t count, double seconds,
                           std::int64_t now_ns, Recorder& recorder) noexcept {
  if (state_.load(std::memory_order_acquire) == WindowState::Recording) finish(WindowState::Done, recorder);
  recorded_.store(0, std::memory_order_relaxed);
  stop_ns_.store(0, std::memory_order_relaxed);
  seconds_.store(seconds, std::memory_order_relaxed);
  first_.store(first, std::memory_order_relaxed);
  stop_.store(count > 0 ? first + count : -1, std::memory_order_relaxed);
  request_.store(request, std::memory_order_release);
  if (first < 0) {  // a seconds plan in a program without markers: now
    begin(now_ns, recorder);
    return;
  }
  if (currentIteration() >= first) {
    state_.store(WindowState::Missed, std::memory_order_release);
    return;
  }
  state_.store(WindowState::Waiting, std::memory_order_release);
}

void IterationWindow::tick(std::int64_t now_ns, Recorder& recorder) noexcept {
  if (state_.load(std::memory_order_acquire) != WindowState::Recording) return;
  std::int64_t stop_ns = stop_ns_.load(std::memory_order_acquire);
  if (stop_ns != 0 && now_ns >= stop_ns) finish(WindowState::Done, recorder);
}

double IterationWindow::iterationsPerSecond() const noexcept {
  std::int64_t first_ns = first_marker_ns_.load(std::memory_order_relaxed);
  std::int64_t last_ns = last_marker_ns_.load(std::memory_order_relaxed);
  std::int64_t iterations = current_.load(std::memory_order_relaxed) - first_marker_iteration_.load(std::memory_order_relaxed);
  if (iterations <= 0 || last_ns <= first_ns) return 0.0;
  return static_cast<double>(iterations) * 1e9 / static_cast<double>(last_ns - first_ns);
}

void IterationWindow::begin(std::int64_t now_ns, Recorder& recorder) noexcept {
  double seconds = seconds_.load(std::memory_order_relaxed);
  if (seconds > 0) stop_ns_.store(now_ns + static_cast<std::int64_t>(seconds * 1e9), std::memory_order_relaxed);
  recorder.setRecording(true, now_ns);
  state_.store(WindowState::Recording, std::memory_order_release);
}

void IterationWindow::finish(WindowState state, Recorder& recorder) noexcept {
  recorder.setRecording(false);
  if (state == WindowState::Done && stop_.load(std::memory_order_relaxed) >= 0) {
    recorded_.store(stop_.load(std::memory_order_relaxed) - first_.load(std::memory_order_relaxed),
                    std::memory_order_release);
  }
  state_.store(state, std::memory_order_release);
}

}  // namespace syncopate::preload
