#include "channels.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace simgpu::nccl {
namespace {

// A positive integer from the environment, or 0 (unset; anything else is said and ignored).
int ctasFromEnvironment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > INT_MAX) {
    std::fprintf(stderr, "simgpu NCCL: %s=%s is not a positive integer; ignored\n", name, text);
    return 0;
  }
  return static_cast<int>(value);
}

struct CtaBounds {
  int min = 0;  // 0: unset
  int max = 0;
};

const CtaBounds& ctaBounds() {
  static const CtaBounds bounds{ctasFromEnvironment("NCCL_MIN_CTAS"), ctasFromEnvironment("NCCL_MAX_CTAS")};
  return bounds;
}

}  // namespace

ChannelPlan channelPlan(const std::optional<simgpu::Profile::Channels>& channels) {
  if (!channels) return {};
  ChannelPlan plan;
  plan.max_count = channels->max_count;
  plan.profile_default = channels->default_count;
  // Each bound within what the communicator has; a minimum above the maximum yields to it, as
  // NCCL's minCTAs does to maxCTAs.
  const CtaBounds& env = ctaBounds();
  const int most = env.max > 0 ? std::clamp(env.max, 1, plan.max_count) : plan.max_count;
  const int least = env.min > 0 ? std::clamp(env.min, 1, most) : 1;
  plan.default_count = std::clamp(channels->default_count, least, most);
  return plan;
}

int chosenChannels(const ChannelPlan& plan, int tuner_choice) {
  if (plan.default_count == 0) return 0;
  // As NCCL: the tuner's count replaces the default, within the communicator's channels.
  return tuner_choice > 0 ? std::min(tuner_choice, plan.max_count) : plan.default_count;
}

double interferenceWeight(const ChannelPlan& plan, int channels) {
  if (plan.profile_default == 0 || channels <= 0) return 1.0;
  return static_cast<double>(channels) / plan.profile_default;
}

}  // namespace simgpu::nccl
