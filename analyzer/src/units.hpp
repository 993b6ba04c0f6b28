// Nanoseconds as the reports print them.
#pragma once

#include <cstdint>

namespace syncopate::analyzer {

inline double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace syncopate::analyzer
