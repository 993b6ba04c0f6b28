#include "support/nccl_tests_output.hpp"

#include <sstream>

namespace collector_test {
namespace {

int sizesBetween(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor) {
  int count = 0;
  for (std::uint64_t size = min_bytes; size <= max_bytes; size *= factor) ++count;
  return count;
}

}  // namespace

std::vector<std::string> NcclTestsSweep::arguments() const {
  return {"-b", std::to_string(min_bytes), "-e", std::to_string(max_bytes), "-f", std::to_string(factor),
          "-w", std::to_string(warmup),   "-n", std::to_string(iterations), "-c", std::to_string(checks)};
}

int NcclTestsSweep::sizes() const { return sizesBetween(min_bytes, max_bytes, factor); }

int NcclTestsSweep::callsPerDevice(int calls_per_run) const {
  const int warmups = warmup * sizesBetween(min_bytes, max_bytes, 2);
  const int timed = sizes() * 2 * (1 + iterations + checks);
  return (warmups + timed) * calls_per_run;
}

int NcclTestsSweep::inPlaceCallsPerDevice(int calls_per_run) const {
  return sizes() * (1 + iterations + checks) * calls_per_run;
}

std::vector<NcclTestsRow> resultRows(const std::string& output) {
  std::vector<NcclTestsRow> rows;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string word; words >> word;) fields.push_back(word);
    // size count type redop root, then time algbw busbw #wrong per half; anything else (comments,
    // a launcher's or the recorder's lines) does not start with a size.
    if (fields.size() < 5 || fields[0].find_first_not_of("0123456789") != std::string::npos) continue;
    NcclTestsRow row{fields[0], fields[1], fields[2], fields[3], fields[4]};
    row.out_of_place = fields.size() >= 9;
    row.in_place = fields.size() >= 13;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace collector_test
