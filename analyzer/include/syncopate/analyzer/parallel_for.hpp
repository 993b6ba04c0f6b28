// Spreading independent work (per rank, per iteration, per predicted schedule) over the
// machine's cores; the analyzer and the tuner both use it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace syncopate::analyzer {

// Calls fn(i) for every i in [0, n), on up to hardware_concurrency threads. fn must not throw.
// Where no more threads can be had, those started and the calling one do the rest.
template <class Fn>
void parallelFor(std::size_t n, Fn&& fn) {
  const std::size_t workers = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  } catch (const std::system_error&) {
  }
  work();
  for (auto& t : pool) t.join();
}

}  // namespace syncopate::analyzer
