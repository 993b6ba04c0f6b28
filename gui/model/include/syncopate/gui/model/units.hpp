// Human-readable durations and time labels, shared by the ruler, the panels and the tables:
// one place decides that 1234567 ns reads "1.235 ms".
#pragma once

#include <cstdint>
#include <string>

namespace syncopate::gui {

// A duration with the unit that keeps 1..999 before the point ("850 ns", "12.4 µs", "3.21 ms",
// "1.50 s"), with `significant` significant digits (at least 1).
std::string formatDuration(std::int64_t ns, int significant = 3);

// A point on the ruler, `ns` after the origin, printed in the unit of `step_ns` (the ruler's
// tick spacing) with just enough decimals to tell neighbouring ticks apart ("12.5 ms").
std::string formatTimeLabel(std::int64_t ns, std::int64_t step_ns);

// Bytes as "512 B", "4.00 KiB", "1.50 MiB", "2.00 GiB".
std::string formatBytes(std::int64_t bytes);

}  // namespace syncopate::gui
