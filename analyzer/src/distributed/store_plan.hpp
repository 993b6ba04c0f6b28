// What every process of a distributed analysis agrees on before it reads a store: the run's
// stores, as the processes see them, and which process reads each (docs/analyzer.md,
// "Distributed analysis"); and the waits and exchanges the distributed steps share.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/mpi_session.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {

// Tags of the message that carries a store's rows, and of the one that says why it has none.
inline constexpr int kRowsTag = 1, kFailureTag = 2;

// The union of the processes' listings, in listStores' order (by rank, then by pid), and who
// sees each store.
struct RunStores {
  std::vector<trace::StoreFile> files;
  std::vector<std::vector<bool>> sees;
};

struct StorePlan {
  RunStores run;               // sees: empty (only the root needs it, to decide)
  std::vector<int> owner;      // by store: the process that reads it, -1 for none
  std::uint64_t bytes_sent = 0;  // by this process: its listing, or the root's plan to the others
};

// Every process lists `run_dir`; the root decides and every process learns the same plan, or the
// same failure (no store any process sees, more processes than stores), so none waits for another
// that gave up.
trace::Result<StorePlan> planStores(const MpiSession& mpi, const std::filesystem::path& run_dir);

// Every process's text, gathered on the root (the others get nothing back); nothing, on every
// process, when the texts add up to more than MPI's int counts can say.
std::optional<std::vector<std::string>> gatherOnRoot(const std::string& mine, const MpiSession& mpi);

// The root's text for each process (`parts`, by process, on the root), each on its process;
// nothing, on every process, when the texts add up to more than MPI's int counts can say.
std::optional<std::string> scatterFromRoot(std::vector<std::string> parts, const MpiSession& mpi);

// The root's text, on every process (in pieces MPI's int counts can say).
std::string broadcastFromRoot(std::string text, const MpiSession& mpi);

// Whether every process got this far: the root's sentence says what each one that did not said,
// and every process returns it, so that none waits for another that gave up.
trace::Status everyProcessOk(const MpiSession& mpi, const trace::Status& mine);

// Every process's bytes on the root (counted in `sent` where they left another process), or a
// failure every process shares.
trace::Result<std::vector<std::string>> gatherParts(const MpiSession& mpi, const std::string& mine, std::uint64_t& sent);

// Open MPI's blocking calls spin while they wait, taking a core from the threads that read
// stores (and, where processes outnumber cores, from the other processes): waits poll instead,
// sleeping between polls, which costs a message at most a poll's delay.
inline constexpr auto kPollDelay = std::chrono::microseconds(200);
void waitPolling(MPI_Request& request);

// The next store process `from` sent this one: its bytes (kRowsTag), or, for kFailureTag, the
// sentence of why it has none, as the failure.
trace::Result<std::vector<std::byte>> receiveStore(int from);

// "process P of N on HOST", for sentences that say where something failed.
std::string processName(const MpiSession& mpi);

}  // namespace syncopate::analyzer
