// A store's facts and rows (store_rows.hpp) as bytes and back: what distributed analysis sends
// from the process that read a store to the one that builds the model. Both ends run the same
// build, so the layout is this build's own (no version, no byte order); unpacking still checks
// every length, so a short or damaged buffer is a failure, never a read past its end.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "store_rows.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {

std::vector<std::byte> packStore(const StoreFacts& facts, const StoreRows& rows);

// Fills `facts` and `rows` (replacing what they held).
trace::Status unpackStore(std::span<const std::byte> bytes, StoreFacts& facts, StoreRows& rows);

}  // namespace syncopate::analyzer
