#include "sample_common/bootstrap.hpp"

#include "sample_common/id_exchange.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace sample_common {
namespace {

void checkNccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw std::runtime_error(fmt::format("{} failed: {}", what, ncclGetErrorString(result)));
}

void checkMpi(int result, const char* what) {
  if (result != MPI_SUCCESS) throw std::runtime_error(fmt::format("{} failed (MPI error {})", what, result));
}

Membership joinWithMpi() {
  Membership m;
  m.kind = BootstrapKind::Mpi;
  checkMpi(MPI_Init(nullptr, nullptr), "MPI_Init");
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &m.rank), "MPI_Comm_rank");
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &m.world_size), "MPI_Comm_size");
  // Ranks sharing this host, numbered from 0: the local rank that picks the device.
  MPI_Comm host{};
  checkMpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m.rank, MPI_INFO_NULL, &host),
           "MPI_Comm_split_type");
  checkMpi(MPI_Comm_rank(host, &m.local_rank), "MPI_Comm_rank");
  MPI_Comm_free(&host);
  if (m.rank == 0) checkNccl(ncclGetUniqueId(&m.id), "ncclGetUniqueId");
  checkMpi(MPI_Bcast(&m.id, sizeof m.id, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast of the NCCL unique id");
  return m;
}

Membership joinWithEnvironment(double timeout_s) {
  const EnvLaunch launch = readEnvLaunch([](const char* name) { return std::getenv(name); });
  Membership m;
  m.kind = BootstrapKind::Env;
  m.rank = launch.rank;
  m.world_size = launch.world_size;
  m.local_rank = launch.local_rank;
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000.0));
  if (m.rank == 0) {
    checkNccl(ncclGetUniqueId(&m.id), "ncclGetUniqueId");
    if (m.world_size > 1) {
      serveUniqueId(launch.exchange_port, m.world_size,
                    std::as_bytes(std::span<const char>(m.id.internal, sizeof m.id.internal)), timeout);
    }
  } else {
    const std::vector<std::byte> id = fetchUniqueId(launch.master_addr, launch.exchange_port, m.rank, m.world_size,
                                                    sizeof m.id.internal, timeout);
    std::memcpy(m.id.internal, id.data(), sizeof m.id.internal);
  }
  return m;
}

}  // namespace

Membership joinJob(BootstrapKind requested, double timeout_s) {
  switch (resolveBootstrap(requested, [](const char* name) { return std::getenv(name); })) {
    case BootstrapKind::Mpi: return joinWithMpi();
    case BootstrapKind::Env: return joinWithEnvironment(timeout_s);
    case BootstrapKind::Auto:
    case BootstrapKind::Single: break;
  }
  Membership m;
  checkNccl(ncclGetUniqueId(&m.id), "ncclGetUniqueId");
  return m;
}

void leaveJob(const Membership& membership) {
  if (membership.kind == BootstrapKind::Mpi) MPI_Finalize();
}

void abortJob(int exit_code) {
  int initialized = 0;
  if (MPI_Initialized(&initialized) == MPI_SUCCESS && initialized != 0) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  exitNow(exit_code);
}

void exitNow(int exit_code) {
  // Other threads (the CUDA runtime's, the watchdog) may still run: skip static destructors.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(exit_code);
}

}  // namespace sample_common
