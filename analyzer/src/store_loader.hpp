// Turning one store's rows (store_rows.hpp) into model rows, whichever process read them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "store_rows.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/analyzer/run_model_builder.hpp"

namespace syncopate::analyzer {

// Reports progress at most every 1% of the rows.
class LoadProgress {
 public:
  LoadProgress(const ProgressFn& fn, std::size_t total) : fn_(fn), total_(std::max<std::size_t>(total, 1)) {}
  void add(std::string_view what, std::size_t rows = 1) {
    done_ += rows;
    if (fn_ && (done_ >= next_ || done_ == total_)) {
      fn_(what, std::min(done_, total_), total_);
      next_ = done_ + total_ / 100 + 1;
    }
  }

 private:
  const ProgressFn& fn_;
  std::size_t total_, done_ = 0, next_ = 0;
};

// One store's rows into the builder. Store-local ids (strings, streams, threads, correlation)
// are translated here; rows that refer to ids the store does not have are counted, not kept.
void loadStoreRows(const StoreFacts& facts, const StoreRows& rows, RunModelBuilder& builder, LoadProgress& progress);

}  // namespace syncopate::analyzer
