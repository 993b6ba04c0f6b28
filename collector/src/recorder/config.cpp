#include "syncopate/collector/recorder_config.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace syncopate::preload {
namespace {

// An unsigned value within [low, high]; `fallback` (and a sentence in `problem`) otherwise.
std::uint32_t boundedNumber(const char* name, const char* text, std::uint32_t fallback, std::uint32_t low,
                            std::uint32_t high, std::string& problem) {
  if (text == nullptr || *text == '\0') return fallback;
  std::uint32_t value = 0;
  std::string_view view(text);
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc{} || end != view.data() + view.size() || value < low || value > high) {
    problem += std::string(name) + "=" + text + " is not a number in [" + std::to_string(low) + ", " +
               std::to_string(high) + "]; using " + std::to_string(fallback) + ". ";
    return fallback;
  }
  return value;
}

}  // namespace

RecorderConfig parseRecorderConfig(const char* (*lookup)(const char* name)) {
  RecorderConfig config;
  const char* dir = lookup("SYNCOPATE_OUTPUT_DIR");
  if (dir == nullptr || *dir == '\0') return config;
  config.enabled = true;
  config.output_dir = dir;
  const char* armed = lookup("SYNCOPATE_ARMED");
  config.armed = armed != nullptr && std::strcmp(armed, "1") == 0;
  if (const char* backend = lookup("SYNCOPATE_BACKEND"); backend != nullptr && *backend != '\0') {
    if (std::strcmp(backend, "cupti") == 0) {
      config.backend = BackendChoice::Cupti;
    } else if (std::strcmp(backend, "events") == 0) {
      config.backend = BackendChoice::Events;
    } else if (std::strcmp(backend, "auto") != 0) {
      config.problem += std::string("SYNCOPATE_BACKEND=") + backend + " is not auto, cupti or events; using auto. ";
    }
  }
  if (const char* clock = lookup("SYNCOPATE_HOST_CLOCK"); clock != nullptr && *clock != '\0') {
    if (std::strcmp(clock, "system") == 0) {
      config.host_clock = HostClockChoice::System;
    } else if (std::strcmp(clock, "tsc") == 0) {
      config.host_clock = HostClockChoice::Tsc;
    } else if (std::strcmp(clock, "auto") != 0) {
      config.problem += std::string("SYNCOPATE_HOST_CLOCK=") + clock + " is not auto, system or tsc; using auto. ";
    }
  }
  if (const char* marker = lookup("SYNCOPATE_ITERATION_MARKER"); marker != nullptr && *marker != '\0') {
    config.iteration_marker = marker;
  }
  // At least a few thousand records per thread: below that a burst of launches drops.
  config.ring_records = boundedNumber("SYNCOPATE_BUFFER_RECORDS", lookup("SYNCOPATE_BUFFER_RECORDS"),
                                      config.ring_records, 1u << 10, 1u << 24, config.problem);
  config.flush_interval_ms = boundedNumber("SYNCOPATE_FLUSH_MS", lookup("SYNCOPATE_FLUSH_MS"),
                                           config.flush_interval_ms, 1, 100, config.problem);
  config.event_pairs_per_device = boundedNumber("SYNCOPATE_EVENT_PAIRS", lookup("SYNCOPATE_EVENT_PAIRS"),
                                                config.event_pairs_per_device, 64, 1u << 20, config.problem);
  return config;
}

const RecorderConfig& recorderConfig() noexcept {
  // Parsed lazily: the first intercepted call can come from another library's constructor,
  // before this library's own static initialisers have run.
  static const RecorderConfig config = [] {
    try {
      return parseRecorderConfig([](const char* name) -> const char* { return std::getenv(name); });
    } catch (...) {
      return RecorderConfig{};  // out of memory while parsing: behave as if not asked to record
    }
  }();
  return config;
}

const char* toString(BackendChoice choice) noexcept {
  switch (choice) {
    case BackendChoice::Auto: return "auto";
    case BackendChoice::Cupti: return "cupti";
    case BackendChoice::Events: return "events";
  }
  return "auto";
}

}  // namespace syncopate::preload
