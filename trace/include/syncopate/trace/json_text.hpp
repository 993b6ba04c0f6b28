#pragma once
// The text of a JSON document whose strings come from files and programs Syncopate did not write:
// kernel and range names from a store, a job's command line, an imported trace. Such strings
// need not be UTF-8 (a damaged store, a binary argument), and nlohmann::json refuses to write
// them by throwing; every JSON Syncopate writes goes through here instead, which writes each
// invalid byte as U+FFFD and keeps the rest of the document as it is.
#include <nlohmann/json.hpp>

#include <string>

namespace syncopate::trace {

// indent as nlohmann::json::dump: -1 for one line, N for N spaces per level.
inline std::string jsonText(const nlohmann::json& document, int indent = -1) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace syncopate::trace
