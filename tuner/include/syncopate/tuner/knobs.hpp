// The knobs of a gradient synchronisation schedule: what the search varies and what a plan
// records (docs/tuner.md, "The search").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace syncopate::tuner {

// The order of a group's buckets on the communication stream: as the program issued them, as
// their producers finish (ready), or as the program first reads their results (need: what an
// all-gather of parameters is for, whose every bucket is ready at once after the update).
enum class Order : std::uint8_t { Program = 0, Ready = 1, Need = 2 };
std::string_view toString(Order o);
std::optional<Order> orderNamed(std::string_view name);  // nullopt: no such order

struct Knobs {
  bool communication_stream = true;  // buckets start at their producers (else at their calls)
  std::uint64_t bucket_bytes = 0;   // fuse consecutive all-reduces up to this many bytes; 0: never
  Order order = Order::Ready;
  std::uint32_t priority_tail = 0;  // the last k buckets to be ready go first layers first
  std::uint64_t split_bytes = 0;    // split buckets larger than this into parts; 0: never
  bool per_bucket_waits = true;     // each consumer waits only for its own bucket
  bool delayed = false;             // one-step-delayed synchronisation (changes the mathematics)
  std::uint32_t keep_comms = 0;     // communicators (bit i: index i) whose groups keep their place
  friend bool operator==(const Knobs&, const Knobs&) = default;
};
// "comm stream, ready order, buckets <= 25 MiB, ..." for tables.
std::string describe(const Knobs& k);

// A size as the reports print it: "25 MiB", "1.5 GiB", "512 B".
std::string bytesText(std::uint64_t bytes);

}  // namespace syncopate::tuner
