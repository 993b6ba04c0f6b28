// A framework setting's values predicted side by side (DDP's bucket caps, a sharded optimizer's
// bucket sizes, FSDP's settings): each value's run as a rewrite of the recorded calls models it,
// replayed on the machine's cores; a value that cannot be predicted keeps why, so that a report
// can say it.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "syncopate/analyzer/parallel_for.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// Each of `count` values of a bucket setting, its run as `rewrite(k)` models it, replayed side by
// side. A value whose model cannot be built, replayed or held in memory stays unpredicted (the
// others stand), with the reason in `why_not[k]`.
struct ValuePredictions {
  std::vector<std::optional<Prediction>> predicted;
  std::vector<std::string> why_not;

  bool ok(std::size_t k) const { return predicted[k] && predicted[k]->ok; }
  // "NAME=VALUE: why" for each value left unpredicted.
  std::vector<std::string> notPredicted(const std::string& name, const std::vector<std::string>& values) const {
    std::vector<std::string> out;
    for (std::size_t k = 0; k < why_not.size(); ++k)
      if (!ok(k)) out.push_back(fmt::format("{}={}: {}", name, values[k], why_not[k]));
    return out;
  }
};

// `rewrite(k)` returns the k-th value's model (a trace::Result<WhatIfModel>); it may run on
// several threads at once. `progress(what, done, count)`, when set, is called under a lock.
using ValueProgress = std::function<void(std::string_view what, std::size_t done, std::size_t count)>;
template <class Rewrite>
ValuePredictions predictEachValue(std::size_t count, const char* what, const ValueProgress& progress, Rewrite&& rewrite) {
  ValuePredictions out{std::vector<std::optional<Prediction>>(count), std::vector<std::string>(count)};
  std::mutex progress_lock;
  std::size_t done = 0;
  analyzer::parallelFor(count, [&](std::size_t k) {
    try {
      auto rebucketed = rewrite(k);
      if (rebucketed.ok()) {
        out.predicted[k] = rebucketed->predict(nullptr);
        if (!out.predicted[k]->ok) out.why_not[k] = "the replay failed: " + out.predicted[k]->error;
      } else {
        out.why_not[k] = rebucketed.message();
      }
    } catch (const std::exception& e) {
      out.why_not[k] = fmt::format("the prediction failed: {}", e.what());
    }
    const std::lock_guard<std::mutex> hold(progress_lock);
    if (progress) progress(what, ++done, count);
  });
  return out;
}

}  // namespace syncopate::tuner
