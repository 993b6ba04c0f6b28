#include "store_plan.hpp"

#include <chrono>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "syncopate/analyzer/distributed_analysis.hpp"

namespace syncopate::analyzer {

namespace {

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

}  // namespace

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

std::optional<std::string> scatterFromRoot(std::vector<std::string> parts, const MpiSession& mpi) {
  constexpr std::int64_t kMaxTotal = std::numeric_limits<int>::max();
  std::vector<int> lengths, offsets;
  std::string all;
  int fits = 1;
  if (mpi.root()) {
    std::int64_t sum = 0;
    for (const std::string& p : parts) sum += static_cast<std::int64_t>(p.size());
    fits = sum < kMaxTotal ? 1 : 0;
    if (fits) all.reserve(static_cast<std::size_t>(sum));
    for (std::string& p : parts) {
      lengths.push_back(fits ? static_cast<int>(p.size()) : 0);
      offsets.push_back(static_cast<int>(all.size()));
      if (fits) all += p;
      std::string().swap(p);  // one copy of the parts at a time
    }
  }
  MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (fits == 0) return std::nullopt;
  int length = 0;
  MPI_Scatter(lengths.data(), 1, MPI_INT, &length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string mine(static_cast<std::size_t>(length), '\0');
  MPI_Scatterv(all.data(), lengths.data(), offsets.data(), MPI_CHAR, mine.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return mine;
}

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

trace::Status everyProcessOk(const MpiSession& mpi, const trace::Status& mine) {
  const auto said = gatherOnRoot(mine ? std::string() : processName(mpi) + ": " + mine.message(), mpi);
  std::string verdict;
  if (mpi.root()) {
    if (!said) verdict = "the processes' failures add up to more than one exchange can carry";
    else
      for (const std::string& s : *said)
        if (!s.empty()) verdict += (verdict.empty() ? "" : "; ") + s;
  }
  verdict = broadcastFromRoot(std::move(verdict), mpi);
  if (verdict.empty()) return trace::Status();
  return trace::failure(verdict);
}

trace::Result<std::vector<std::string>> gatherParts(const MpiSession& mpi, const std::string& mine, std::uint64_t& sent) {
  sent += mpi.root() ? 0 : mine.size();
  auto all = gatherOnRoot(mine, mpi);
  if (!all) return trace::failure(fmt::format("the {} processes' results add up to 2 GiB or more, more than one exchange "
                                              "can carry: start fewer processes",
                                              mpi.size()));
  return std::move(all).value();
}

void waitPolling(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(kPollDelay);
  }
}

trace::Result<std::vector<std::byte>> receiveStore(int from) {
  MPI_Status status;
  for (int found = 0;;) {
    MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &status);
    if (found) break;
    std::this_thread::sleep_for(kPollDelay);
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<std::byte> bytes(static_cast<std::size_t>(count));
  MPI_Recv(bytes.data(), count, MPI_BYTE, from, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (status.MPI_TAG == kFailureTag) return trace::failure(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return bytes;
}

std::string processName(const MpiSession& mpi) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  return fmt::format("process {} of {} on {}", mpi.rank(), mpi.size(), std::string(host, static_cast<std::size_t>(length)));
}

std::vector<int> assignStores(const std::vector<std::vector<bool>>& sees, int processes) {
  const std::size_t n = sees.size();
  std::vector<int> owner(n, -1), load(static_cast<std::size_t>(processes), 0);
  // Blocks of up to a node's 8 ranks, dealt to the processes in turn: the root takes the
  // stores' summaries in the run's order, so each process's next block is read while the root
  // takes the blocks before it (halves of the run, one per process, left the second half's
  // reader idle while the root took the first).
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

trace::Result<StorePlan> planStores(const MpiSession& mpi, const std::filesystem::path& run_dir) {
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
  StorePlan out;
  out.bytes_sent = mpi.root() ? plan.size() * static_cast<std::uint64_t>(mpi.size() - 1) : listing.size();
  if (trace::Status decided = readPlan(plan, run_dir, out.run, out.owner); !decided) return decided;
  return out;
}

}  // namespace syncopate::analyzer
