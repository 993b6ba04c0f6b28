#include "syncopate/analyzer/distributed_load.hpp"

#include <mpi.h>
#include <sys/resource.h>

#include <chrono>
#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <string>

#include <fmt/format.h>

#include "store_plan.hpp"

namespace syncopate::analyzer {

namespace {

// Stores sent but not yet taken by the root may hold this many bytes: the root takes stores in
// the run's order, so a process whose stores come later reads ahead into them meanwhile, as
// far as this allows.
constexpr std::size_t kSendWindowBytes = std::size_t{64} << 20;

// Reads this process's stores in order, one ahead of the one being sent, and sends each to the
// root: its rows, or why it could not be read. Returns the bytes sent.
std::uint64_t sendStores(const MpiSession& mpi, const RunStores& run, const std::vector<int>& owner) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < owner.size(); ++i)
    if (owner[i] == mpi.rank()) mine.push_back(i);
  struct InFlight {
    MPI_Request request;
    PackedStore bytes;  // rows, or the sentence of why there are none
  };
  std::deque<InFlight> in_flight;  // a deque never moves its elements: their buffers stay put
  std::size_t in_flight_bytes = 0;
  auto retire = [&](std::size_t keep_bytes) {
    while (!in_flight.empty() && in_flight_bytes > keep_bytes) {
      waitPolling(in_flight.front().request);
      in_flight_bytes -= in_flight.front().bytes.size();
      in_flight.pop_front();
    }
  };
  std::uint64_t sent = 0;
  PackedStoreReader reader;  // one read in flight at a time
  const auto readAhead = [&](std::size_t k) {
    return std::async(std::launch::async, [&reader, path = run.files[mine[k]].path] { return reader.read(path); });
  };
  std::future<trace::Result<PackedStore>> ahead;
  if (!mine.empty()) ahead = readAhead(0);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    // While the next store is read, the sends in flight move only when this process calls into
    // MPI (over TCP, a large message goes once both sides have).
    while (ahead.wait_for(kPollDelay) != std::future_status::ready) {
      for (InFlight& f : in_flight) {
        int done = 0;
        MPI_Test(&f.request, &done, MPI_STATUS_IGNORE);
      }
    }
    trace::Result<PackedStore> store = ahead.get();
    if (k + 1 < mine.size()) ahead = readAhead(k + 1);
    if (store.ok() && store->size() > static_cast<std::size_t>(INT_MAX))
      store = trace::failure(fmt::format("its rows take {} bytes, more than one MPI message carries", store->size()));
    int tag = kRowsTag;
    PackedStore bytes;
    if (store.ok()) {
      bytes = std::move(store).value();
    } else {
      const std::string why = processName(mpi) + ": " + store.message();
      bytes.resize(why.size());
      std::memcpy(bytes.data(), why.data(), why.size());
      tag = kFailureTag;
    }
    InFlight& f = in_flight.emplace_back(InFlight{MPI_REQUEST_NULL, std::move(bytes)});
    MPI_Isend(f.bytes.data(), static_cast<int>(f.bytes.size()), MPI_BYTE, 0, tag, MPI_COMM_WORLD, &f.request);
    in_flight_bytes += f.bytes.size();
    sent += f.bytes.size();
    retire(kSendWindowBytes);
  }
  retire(0);
  return sent;
}

// Store i from the process that read it (the root reads its own, one ahead).
class StoreReceiver {
 public:
  StoreReceiver(const RunStores& run, const std::vector<int>& owner) : run_(run), owner_(owner) { readAheadFrom(0); }

  trace::Result<PackedStore> operator()(std::size_t i) {
    if (owner_[i] == 0) {
      trace::Result<PackedStore> store = ahead_.get();
      readAheadFrom(i + 1);
      return store;
    }
    return receiveStore(owner_[i]);
  }

  // Wall time of the root's own reads, once every store was taken.
  double readSeconds() const { return read_s_; }

 private:
  void readAheadFrom(std::size_t i) {
    while (i < owner_.size() && owner_[i] != 0) ++i;
    if (i >= owner_.size()) return;
    ahead_ = std::async(std::launch::async, [this, path = run_.files[i].path] {
      const auto start = std::chrono::steady_clock::now();
      trace::Result<PackedStore> store = reader_.read(path);
      read_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return store;
    });
  }
  const RunStores& run_;
  const std::vector<int>& owner_;
  PackedStoreReader reader_;  // the read ahead is one store at a time
  std::future<trace::Result<PackedStore>> ahead_;
  double read_s_ = 0;  // written by one read-ahead task at a time, each after the last was taken
};

}  // namespace

trace::Result<DistributedLoad> loadRunDistributed(const MpiSession& mpi, const std::filesystem::path& run_dir,
                                                  const LoadOptions& options) {
  PhaseScope phase(options.timings, "list and assign stores");
  auto plan = planStores(mpi, run_dir);
  if (!plan) return plan.status();
  const RunStores& run = plan->run;
  const std::vector<int>& owner = plan->owner;
  std::uint64_t sent = plan->bytes_sent;
  DistributedLoad out;
  out.stores_per_process.assign(static_cast<std::size_t>(mpi.size()), 0);
  for (int o : owner)
    if (o >= 0) ++out.stores_per_process[static_cast<std::size_t>(o)];

  trace::Status status;
  if (mpi.root()) {
    StoreReceiver receive(run, owner);
    auto model = loadPackedRun(run.files, std::ref(receive), options);
    out.root_read_s = receive.readSeconds();
    if (model.ok()) out.model = std::move(model).value();
    else status = model.status();
  } else {
    sent += sendStores(mpi, run, owner);
  }
  unsigned long long mine = sent, total = 0;
  MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  out.bytes_exchanged = total;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  long peak_kb = usage.ru_maxrss;
  out.peak_rss_kb.resize(static_cast<std::size_t>(mpi.size()));
  MPI_Gather(&peak_kb, 1, MPI_LONG, out.peak_rss_kb.data(), 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (!status) return status;
  return out;
}

}  // namespace syncopate::analyzer
