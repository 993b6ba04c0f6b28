// What a trainer throws when its own check of the synchronised gradients fails (each trainer
// says what it checks); main() ends the job with kExitVerification for it (trainer_main.hpp).
#pragma once

#include <stdexcept>

namespace sample_common {

class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sample_common
