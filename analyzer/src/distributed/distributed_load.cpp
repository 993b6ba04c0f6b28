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
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include <fmt/format.h>

namespace syncopate::analyzer {

namespace {

constexpr int kRowsTag = 1, kFailureTag = 2;

// A store as the words of the texts the processes exchange: "<r|p|-> <number> <file name>".
std::string storeWords(const trace::StoreFile& f) {
  const char kind = f.rank ? 'r' : f.pid ? 'p' : '-';
  const std::int64_t number = f.rank ? *f.rank : f.pid.value_or(0);
  return fmt::format("{} {} {}", kind, number, f.path.filename().string());
}

// The store those words name, in `dir`.
trace::StoreFile storeFile(const std::filesystem::path& dir, char kind, std::int64_t number, const std::string& name) {
  trace::StoreFile f{dir / name, std::nullopt, std::nullopt};
  if (kind == 'r') f.rank = static_cast<std::int32_t>(number);
  if (kind == 'p') f.pid = number;
  return f;
}

// A store listing as text, one line of storeWords per store.
std::string listingText(const std::vector<trace::StoreFile>& files) {
  std::string out;
  for (const trace::StoreFile& f : files) out += storeWords(f) + "\n";
  return out;
}

// Every process's text, gathered on the root (the others get nothing back); nothing, on every
// process, when the texts add up to more than MPI's int counts can say.
std::optional<std::vector<std::string>> gatherOnRoot(const std::string& mine, const MpiSession& mpi) {
  constexpr std::int64_t kMaxTotal = std::numeric_limits<int>::max();
  const auto size = static_cast<std::size_t>(mpi.size());
  const int length = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(mine.size()), kMaxTotal));
  std::vector<int> lengths(mpi.root() ? size : 0), offsets(mpi.root() ? size : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::int64_t sum = 0;
  for (int l : lengths) sum += l;
  int fits = sum < kMaxTotal ? 1 : 0;
  MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (fits == 0) return std::nullopt;
  int total = 0;
  for (std::size_t p = 0; p < lengths.size(); ++p) offsets[p] = total, total += lengths[p];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t p = 0; p < lengths.size(); ++p)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[p]), static_cast<std::size_t>(lengths[p])));
  return out;
}

// The root's text, on every process (in pieces MPI's int counts can say).
std::string broadcastFromRoot(std::string text, const MpiSession& mpi) {
  unsigned long long length = text.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (!mpi.root()) text.assign(static_cast<std::size_t>(length), '\0');
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < text.size(); at += kPiece) {
    const int count = static_cast<int>(std::min(kPiece, text.size() - at));
    MPI_Bcast(text.data() + at, count, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  return text;
}

// The union of the processes' listings, in listStores' order (by rank, then by pid), and who
// sees each store.
struct RunStores {
  std::vector<trace::StoreFile> files;
  std::vector<std::vector<bool>> sees;
};

RunStores unionOf(const std::vector<std::string>& listings, const std::filesystem::path& dir) {
  std::map<std::tuple<int, std::int64_t, std::string>, std::vector<bool>> seen;
  for (std::size_t p = 0; p < listings.size(); ++p) {
    std::istringstream lines(listings[p]);
    char kind = 0;
    std::int64_t number = 0;
    std::string name;
    while (lines >> kind >> number >> name) {
      const int order = kind == 'r' ? 0 : kind == 'p' ? 1 : 2;
      auto& who = seen[{order, number, name}];
      who.resize(listings.size());
      who[p] = true;
    }
  }
  RunStores out;
  for (auto& [key, who] : seen) {
    const auto& [order, number, name] = key;
    out.files.push_back(storeFile(dir, "rp-"[order], number, name));
    out.sees.push_back(std::move(who));
  }
  return out;
}

// The root's decision, as every process reads it: why the run cannot be analysed ("!" and the
// sentence), or each store of the run, in order, with the process that reads it.
std::string planText(const RunStores& run, const std::vector<int>& owner) {
  std::string out;
  for (std::size_t i = 0; i < run.files.size(); ++i) out += fmt::format("{} {}\n", storeWords(run.files[i]), owner[i]);
  return out;
}

trace::Status readPlan(const std::string& text, const std::filesystem::path& dir, RunStores& run,
                       std::vector<int>& owner) {
  if (!text.empty() && text.front() == '!') return trace::failure(text.substr(1));
  std::istringstream lines(text);
  char kind = 0;
  std::int64_t number = 0;
  std::string name;
  int process = -1;
  while (lines >> kind >> number >> name >> process) {
    run.files.push_back(storeFile(dir, kind, number, name));
    owner.push_back(process);
  }
  return trace::Status();
}

// Open MPI's blocking calls spin while they wait, taking a core from the threads that read
// stores (and, where processes outnumber cores, from the other processes): waits poll instead,
// sleeping between polls, which costs a store's message at most a poll's delay.
constexpr auto kPollDelay = std::chrono::microseconds(200);

void waitPolling(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(kPollDelay);
  }
}

MPI_Status probePolling(int source) {
  MPI_Status status;
  for (int found = 0;;) {
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &status);
    if (found) return status;
    std::this_thread::sleep_for(kPollDelay);
  }
}

std::string processName(const MpiSession& mpi) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  return fmt::format("process {} of {} on {}", mpi.rank(), mpi.size(), std::string(host, static_cast<std::size_t>(length)));
}

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
    const MPI_Status status = probePolling(owner_[i]);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    PackedStore bytes(static_cast<std::size_t>(count));
    MPI_Recv(bytes.data(), count, MPI_BYTE, owner_[i], status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kFailureTag) return trace::failure(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return bytes;
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

std::vector<int> assignStores(const std::vector<std::vector<bool>>& sees, int processes) {
  const std::size_t n = sees.size();
  std::vector<int> owner(n, -1), load(static_cast<std::size_t>(processes), 0);
  // Blocks of up to a node's 8 ranks, dealt to the processes in turn: the root takes stores in
  // the run's order, so each process's next block is read while the root takes the blocks
  // before it (halves of the run, one per process, left the second half's reader idle while
  // the root took the first).
  const std::size_t block = std::clamp<std::size_t>(n / static_cast<std::size_t>(processes), 1, kStoresPerBlock);
  for (std::size_t i = 0; i < n; ++i) {
    int pick = static_cast<int>((i / block) % static_cast<std::size_t>(processes));
    if (!sees[i][static_cast<std::size_t>(pick)]) {
      pick = -1;
      for (int p = 0; p < processes; ++p)
        if (sees[i][static_cast<std::size_t>(p)] && (pick < 0 || load[static_cast<std::size_t>(p)] < load[static_cast<std::size_t>(pick)]))
          pick = p;
    }
    owner[i] = pick;
    if (pick >= 0) ++load[static_cast<std::size_t>(pick)];
  }
  return owner;
}

trace::Result<DistributedLoad> loadRunDistributed(const MpiSession& mpi, const std::filesystem::path& run_dir,
                                                  const LoadOptions& options) {
  PhaseScope phase(options.timings, "list and assign stores");
  // A process that cannot list the directory (not mounted on its node) reads none of it. The
  // listings go to the root alone, which decides and tells every process the same: the run's
  // stores and who reads each, or why there is nothing to analyse (all fail together).
  auto listed = trace::listStores(run_dir);
  const std::string listing = listed.ok() ? listingText(*listed) : std::string();
  const std::optional<std::vector<std::string>> gathered = gatherOnRoot(listing, mpi);
  if (!gathered)
    return trace::failure(fmt::format("the {} processes' listings of {} add up to 2 GiB or more, more than one exchange "
                                      "can carry: start fewer processes",
                                      mpi.size(), run_dir.string()));
  std::string plan;
  if (mpi.root()) {
    const RunStores seen = unionOf(*gathered, run_dir);
    if (seen.files.empty())
      plan = "!" + run_dir.string() + " holds no run store (rank-<R>.sqlite or pid-<P>.sqlite) that any of the " +
             std::to_string(mpi.size()) + " processes can see" + (listed.ok() ? "" : " (" + listed.message() + ")");
    else if (static_cast<std::size_t>(mpi.size()) > seen.files.size())
      plan = fmt::format("!{} processes were started for the {} stores of {}: start at most one process per store "
                         "(mpirun -n {} syncopate analyze {})",
                         mpi.size(), seen.files.size(), run_dir.string(), seen.files.size(), run_dir.string());
    else
      plan = planText(seen, assignStores(seen.sees, mpi.size()));
  }
  plan = broadcastFromRoot(std::move(plan), mpi);
  std::uint64_t sent = mpi.root() ? plan.size() * static_cast<std::uint64_t>(mpi.size() - 1) : listing.size();
  RunStores run;
  std::vector<int> owner;
  if (trace::Status decided = readPlan(plan, run_dir, run, owner); !decided) return decided;
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
