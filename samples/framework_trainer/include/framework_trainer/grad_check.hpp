// Keeping the gradients checkable (docs/framework_trainer.md, "Checking the gradients"):
// every gradient element is written by a rule the host can recompute (kernel_args.hpp,
// GradRule), with coefficients that depend on the rank, the iteration and the tensor. Every
// iteration the program hashes all synchronised gradients on the device (one FNV-1a hash per
// chunk, folded here into the iteration's checksum) and copies each tensor's first and last
// element back; the host checks those against the average over all ranks of the rule, applied
// to its mirror of the same weights, which it steps with the same SGD as the device. A sharded
// optimizer (zero1) or sharded parameters (fsdp) leave no rank the whole synchronised gradients:
// there the updated parameters are hashed and probed instead, and checked against the mirror
// stepped with that average.
#pragma once

#include "framework_trainer/kernel_args.hpp"
#include "framework_trainer/model_config.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace framework_trainer {

// The rule for gradient contribution `contribution` (0; the tied token embedding has a second,
// 1, from its use as the embedding) of `tensor` on `rank` at `iteration`.
GradRule gradRule(std::uint64_t seed, int rank, int iteration, int tensor, int contribution);

// The checksum of one iteration's gradients from its chunk hashes, in tensor then chunk order.
std::uint64_t foldChunkHashes(std::span<const std::uint64_t> chunk_hashes);

// What the check hashes and probes: the synchronised gradients, or the parameters the step
// updated with them.
enum class Probed { Gradients, UpdatedParameters };

// The host's mirror of the probed weights (each tensor's first and last element) and the check
// of each iteration's probes.
class ProbeCheck {
 public:
  ProbeCheck(const ParamLayout& layout, std::uint64_t seed, int world_size, float lr, Probed probed);

  // Checks iteration `iteration`'s probes (2 per tensor, as the checksum kernel writes them)
  // against the all-rank average of the rule (or the mirror stepped with it), then takes the
  // step into the mirror. Returns an empty string, or what differs.
  std::string check(int iteration, std::span<const float> probes);

 private:
  const ParamLayout& layout_;
  Probed probed_;
  std::uint64_t seed_;
  int world_size_;
  float lr_;
  std::vector<float> mirror_;  // 2 per tensor
};

}  // namespace framework_trainer
