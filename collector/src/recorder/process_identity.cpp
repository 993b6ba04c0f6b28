#include "syncopate/collector/process_identity.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string_view>

namespace syncopate::preload {
namespace {

std::optional<std::int32_t> integerVariable(const char* (*lookup)(const char*), const char* name) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::int32_t value = 0;
  std::string_view view(text);
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc{} || end != view.data() + view.size() || value < 0) return std::nullopt;
  return value;
}

// The first variable of `names` that holds a non-negative integer, with its name.
std::optional<std::int32_t> firstOf(const char* (*lookup)(const char*), std::initializer_list<const char*> names,
                                    std::string* source = nullptr) {
  for (const char* name : names) {
    if (auto value = integerVariable(lookup, name)) {
      if (source != nullptr) *source = name;
      return value;
    }
  }
  return std::nullopt;
}

std::string commandLine() {
  std::string raw;
  if (std::FILE* file = std::fopen("/proc/self/cmdline", "rb")) {
    char chunk[4096];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) raw.append(chunk, n);
    std::fclose(file);
  }
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return raw;
}

}  // namespace

ProcessIdentity readProcessIdentity(const char* (*lookup)(const char* name), bool trust_environment_rank) {
  ProcessIdentity identity;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) identity.host = host;
  identity.pid = getpid();
  identity.command = commandLine();
  if (const char* connections = lookup("CUDA_DEVICE_MAX_CONNECTIONS")) identity.cuda_device_max_connections = connections;
  if (!trust_environment_rank) return identity;
  // torchrun's RANK first: under srun or mpirun launching one torchrun per node, the
  // launcher's variable names the node, RANK the worker.
  identity.rank = firstOf(lookup, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"},
                          &identity.rank_source);
  identity.local_rank = firstOf(lookup, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  identity.world_size = firstOf(lookup, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  return identity;
}

}  // namespace syncopate::preload
