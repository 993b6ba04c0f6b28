#include "sample_common/launch_env.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>
#include <string_view>

namespace sample_common {
namespace {

bool isSet(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return value != nullptr && *value != '\0';
}

int integerVariable(const EnvLookup& env, const char* name, int min, int max) {
  const char* value = env(name);
  if (value == nullptr || *value == '\0') {
    throw std::runtime_error(fmt::format("the torchrun-style launch needs {} in the environment", name));
  }
  const std::string_view text(value);
  int parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc{} || end != text.data() + text.size() || parsed < min || parsed > max) {
    throw std::runtime_error(fmt::format("{}='{}' is not an integer in [{}, {}]", name, text, min, max));
  }
  return parsed;
}

}  // namespace

const char* toString(BootstrapKind kind) {
  switch (kind) {
    case BootstrapKind::Auto: return "auto";
    case BootstrapKind::Mpi: return "mpi";
    case BootstrapKind::Env: return "env";
    case BootstrapKind::Single: return "single";
  }
  return "?";
}

std::optional<BootstrapKind> parseBootstrapKind(std::string_view name) {
  for (const BootstrapKind kind : {BootstrapKind::Auto, BootstrapKind::Mpi, BootstrapKind::Env, BootstrapKind::Single}) {
    if (name == toString(kind)) return kind;
  }
  return std::nullopt;
}

BootstrapKind resolveBootstrap(BootstrapKind requested, const EnvLookup& env) {
  if (requested != BootstrapKind::Auto) return requested;
  if (isSet(env, "OMPI_COMM_WORLD_SIZE") || isSet(env, "PMIX_RANK") || isSet(env, "PMI_RANK")) {
    return BootstrapKind::Mpi;
  }
  if (isSet(env, "RANK") && isSet(env, "WORLD_SIZE")) return BootstrapKind::Env;
  return BootstrapKind::Single;
}

EnvLaunch readEnvLaunch(const EnvLookup& env) {
  EnvLaunch launch;
  launch.world_size = integerVariable(env, "WORLD_SIZE", 1, 1 << 20);
  launch.rank = integerVariable(env, "RANK", 0, launch.world_size - 1);
  launch.local_rank = isSet(env, "LOCAL_RANK") ? integerVariable(env, "LOCAL_RANK", 0, 1 << 20) : launch.rank;
  if (launch.world_size > 1) {
    if (!isSet(env, "MASTER_ADDR")) {
      throw std::runtime_error("the torchrun-style launch needs MASTER_ADDR (rank 0's host) in the environment");
    }
    launch.master_addr = env("MASTER_ADDR");
    const int port = integerVariable(env, "MASTER_PORT", 1, 65534);
    const char* agent_store = env("TORCHELASTIC_USE_AGENT_STORE");
    launch.exchange_port = agent_store != nullptr && std::string_view(agent_store) == "True" ? port + 1 : port;
  }
  return launch;
}

}  // namespace sample_common
