// The exit codes both sample trainers document (docs/dp_trainer.md, docs/framework_trainer.md):
// mpirun passes a rank's on, and the tests and the tuner's soaks tell failures apart by them.
#pragma once

namespace sample_common {

inline constexpr int kExitError = 1;         // CUDA, NCCL or the launch failed
inline constexpr int kExitUsage = 2;         // a bad command line
inline constexpr int kExitVerification = 3;  // the synchronised gradients are not what they must be
inline constexpr int kExitHung = 4;          // no progress within --watchdog seconds

}  // namespace sample_common
