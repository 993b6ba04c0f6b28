// Process-shared futexes on 32-bit atomics that live in shared memory (no FUTEX_PRIVATE_FLAG,
// so waiters in different processes that map the same segment meet on the same word).
#pragma once

#include <atomic>
#include <cstdint>

namespace simgpu::nccl {

static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

// Sleeps while `word` holds `expected`, at most timeout_ns; returns early on a wake, a
// changed value or a signal. The caller re-checks its condition in every case.
void futexWait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns);
void futexWakeAll(std::atomic<std::uint32_t>& word);

std::int64_t monotonicNowNs();  // CLOCK_MONOTONIC, the clock of every simgpu time

}  // namespace simgpu::nccl
