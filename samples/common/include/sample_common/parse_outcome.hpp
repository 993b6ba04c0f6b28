// What parsing a sample trainer's command line comes to: options to run with, or a reason to
// end at once (--help and --list-configs: text for stdout, exit 0; a bad command line: a message
// for stderr, exit 2). Parsing prints nothing itself, so that tests read what it would print.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace sample_common {

// Why the program ends without running.
struct ParseStop {
  int exit_code = 0;
  std::string out;  // for stdout
  std::string err;  // for stderr, starting "<program>: "
};

template <class Options>
struct ParseOutcome : ParseStop {
  std::optional<Options> options;

  // Implicit, so that a parser returns its options, or a stop, as they are.
  ParseOutcome(ParseStop stop) : ParseStop(std::move(stop)) {}
  ParseOutcome(Options run) : options(std::move(run)) {}
};

// For main() when parsing gave no options: prints the stop's text and returns its exit code.
inline int reportStop(const ParseStop& stop) {
  std::fputs(stop.out.c_str(), stdout);
  std::fputs(stop.err.c_str(), stderr);
  return stop.exit_code;
}

}  // namespace sample_common
