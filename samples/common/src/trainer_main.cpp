#include "sample_common/trainer_main.hpp"

#include "sample_common/exit_codes.hpp"
#include "sample_common/verification_error.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <exception>

namespace sample_common {
namespace {

[[noreturn]] void abortRank(const std::string& program, int rank, int exit_code, const std::string& message) {
  std::fputs(fmt::format("{}: rank {}: {}\n", program, rank, message).c_str(), stderr);
  abortJob(exit_code);
}

}  // namespace

Membership joinJobOrAbort(const std::string& program, BootstrapKind bootstrap, double timeout_s) {
  try {
    return joinJob(bootstrap, timeout_s);
  } catch (const std::exception& e) {
    std::fputs(fmt::format("{}: cannot join the job: {}\n", program, e.what()).c_str(), stderr);
    abortJob(kExitError);
  }
}

Watchdog rankWatchdog(const std::string& program, int rank, double timeout_s) {
  return Watchdog(std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000.0)),
                  [program, rank, timeout_s](const std::string& waiting_for) {
                    std::fputs(fmt::format("{}: rank {}: no progress for {:g} s while waiting for {}; stopping (a rank "
                                           "may have failed or a collective never completed)\n",
                                           program, rank, timeout_s, waiting_for)
                                   .c_str(),
                               stderr);
                    exitNow(kExitHung);
                  });
}

void trainOrAbort(const std::string& program, int rank, const std::function<void()>& train) {
  try {
    train();
  } catch (const VerificationError& e) {
    abortRank(program, rank, kExitVerification, e.what());
  } catch (const std::exception& e) {
    abortRank(program, rank, kExitError, e.what());
  }
}

}  // namespace sample_common
