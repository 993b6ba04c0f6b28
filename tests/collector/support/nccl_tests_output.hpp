// NVIDIA's nccl-tests as the collector's tests run them: the size sweep given on their command
// line, how many NCCL calls it makes (from their source, src/common.cu), and the result rows they
// print.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collector_test {

// -b, -e, -f, -w, -n, -c of nccl-tests.
struct NcclTestsSweep {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64 * 1024;
  std::uint64_t factor = 8;
  int warmup = 1;
  int iterations = 3;
  int checks = 1;

  std::vector<std::string> arguments() const;
  // The NCCL calls each device (rank) issues for one test over the sweep, `calls_per_run` per
  // run of the test's collective (sendrecv: a send and a receive). TimeTest warms up with
  // `warmup` runs per size from min to max doubling (whatever the factor), then, per size of
  // the sweep, BenchTime runs out-of-place then in-place, each once to synchronise, then
  // `iterations` times timed, then `checks` times to check the data.
  int callsPerDevice(int calls_per_run) const;
  // Of those, the in-place ones (BenchTime's second half, per size).
  int inPlaceCallsPerDevice(int calls_per_run) const;
  // How many result rows it prints: one per size of the sweep.
  int sizes() const;
};

// A result row: the columns that describe the call, and which of the out-of-place and in-place
// halves it has (not the timings, nor "#wrong": simgpu does not run nccl-tests' check kernels).
struct NcclTestsRow {
  std::string size, count, type, redop, root;
  bool out_of_place = false;
  bool in_place = false;
  bool operator==(const NcclTestsRow&) const = default;
};

// The result rows of nccl-tests' output (lines that are not comments).
std::vector<NcclTestsRow> resultRows(const std::string& output);

}  // namespace collector_test
