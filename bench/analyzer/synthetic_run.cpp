// Writes a synthetic run (tests/analyzer/synthetic_run.hpp) for the analyzer's scale benchmarks:
// by default 10 million GPU ops over 64 ranks on 8 hosts.
//
// Usage: syncopate_synthetic_run OUT_DIR [OPS [RANKS [RANKS_PER_HOST]]]
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "synthetic_run.hpp"

int main(int argc, char** argv) {
  namespace t = syncopate::synthetic;
  if (argc < 2) {
    std::fprintf(stderr, "usage: syncopate_synthetic_run OUT_DIR [OPS [RANKS [RANKS_PER_HOST]]]\n");
    return 2;
  }
  t::SyntheticRunShape shape;
  if (argc > 2) shape.ops = std::atoll(argv[2]);
  if (argc > 3) shape.ranks = std::atoi(argv[3]);
  if (argc > 4) shape.ranks_per_host = std::atoi(argv[4]);
  const syncopate::trace::Status written = t::writeSyntheticRun(
      argv[1], shape, [&](int ranks) { std::fprintf(stderr, "\rsyncopate_synthetic_run: rank %d/%d", ranks, shape.ranks); });
  if (!written) {
    std::fprintf(stderr, "\nsyncopate_synthetic_run: %s\n", written.message().c_str());
    return 2;
  }
  const std::int64_t iterations = t::syntheticIterations(shape);
  std::fprintf(stderr, "\nwrote %lld ops (%lld iterations x %d ops x %d ranks) to %s\n",
               static_cast<long long>(iterations * t::kOpsPerIteration * shape.ranks), static_cast<long long>(iterations),
               t::kOpsPerIteration, shape.ranks, argv[1]);
  return 0;
}
