#include "syncopate/analyzer/sync_calls.hpp"

#include <array>
#include <utility>

namespace syncopate::analyzer {

std::optional<SyncCall> syncCallNamed(std::string_view name) {
  using C = SyncCallClass;
  using K = trace::SyncKind;
  static constexpr std::array<std::pair<std::string_view, SyncCall>, 13> kCalls{{
      {"cudaDeviceSynchronize", {C::Blocks, K::Device}},
      {"cudaThreadSynchronize", {C::Blocks, K::Device}},
      {"cuCtxSynchronize", {C::Blocks, K::Context}},
      {"cudaStreamSynchronize", {C::Blocks, K::Stream}},
      {"cuStreamSynchronize", {C::Blocks, K::Stream}},
      {"cudaEventSynchronize", {C::Blocks, K::Event}},
      {"cuEventSynchronize", {C::Blocks, K::Event}},
      {"cudaEventQuery", {C::Polls, K::Event}},
      {"cuEventQuery", {C::Polls, K::Event}},
      {"cudaStreamQuery", {C::Polls, K::Stream}},
      {"cuStreamQuery", {C::Polls, K::Stream}},
      {"cudaStreamWaitEvent", {C::StreamWait, K::Event}},
      {"cuStreamWaitEvent", {C::StreamWait, K::Event}},
  }};
  for (const auto& [call, what] : kCalls)
    if (call == name) return what;
  return std::nullopt;
}

}  // namespace syncopate::analyzer
