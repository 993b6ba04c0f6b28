#include "own_calls.hpp"

#include <ctime>

namespace syncopate::preload {
namespace {

thread_local int t_depth = 0;

}  // namespace

bool insideOwnCall() noexcept { return t_depth > 0; }

OwnCall::OwnCall() noexcept { ++t_depth; }
OwnCall::~OwnCall() { --t_depth; }

std::int64_t monotonicNowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace syncopate::preload
