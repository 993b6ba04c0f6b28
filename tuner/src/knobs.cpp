#include "syncopate/tuner/knobs.hpp"

#include <fmt/format.h>

#include <optional>

namespace syncopate::tuner {

std::string bytesText(std::uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.3g} GiB", static_cast<double>(b) / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.3g} MiB", static_cast<double>(b) / (1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.3g} KiB", static_cast<double>(b) / (1ull << 10));
  return fmt::format("{} B", b);
}

std::string_view toString(Order o) {
  switch (o) {
    case Order::Program: return "program";
    case Order::Ready: return "ready";
    case Order::Need: return "need";
  }
  return "?";
}

std::optional<Order> orderNamed(std::string_view name) {
  for (Order o : {Order::Program, Order::Ready, Order::Need})
    if (toString(o) == name) return o;
  return std::nullopt;
}

std::string describe(const Knobs& k) {
  std::string s = k.communication_stream ? "start at producers" : "start at original positions";
  s += k.bucket_bytes == 0 ? ", no fusion" : ", buckets <= " + bytesText(k.bucket_bytes);
  if (k.communication_stream) s += fmt::format(", {} order", toString(k.order));
  if (k.priority_tail > 0) s += fmt::format(", last {} first layers first", k.priority_tail);
  if (k.split_bytes > 0) s += ", parts <= " + bytesText(k.split_bytes);
  if (!k.per_bucket_waits) s += ", updates wait for all";
  for (std::uint32_t c = 0; c < 32; ++c)
    if ((k.keep_comms >> c & 1u) != 0) s += fmt::format(", communicator {} in place", c);
  if (k.delayed) s += ", ONE-STEP DELAYED (changes the training mathematics)";
  return s;
}

}  // namespace syncopate::tuner
