#include "support/recorded_store.hpp"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace collector_test {

using namespace syncopate::trace;

int RecordedStore::count(OpKind kind) const {
  int n = 0;
  for (const Op& op : ops) n += op.row.kind == kind ? 1 : 0;
  return n;
}

std::vector<const Op*> RecordedStore::opsOf(OpKind kind) const {
  std::vector<const Op*> found;
  for (const Op& op : ops) {
    if (op.row.kind == kind) found.push_back(&op);
  }
  return found;
}

std::int64_t RecordedStore::counter(const std::string& name) const {
  auto found = counters.find(name);
  return found == counters.end() ? 0 : found->second;
}

namespace {

void check(const Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

}  // namespace

RecordedStore readStore(const std::filesystem::path& file) {
  auto opened = StoreReader::open(file);
  if (!opened.ok()) throw std::runtime_error(opened.message());
  const StoreReader& reader = opened.value();
  RecordedStore store;
  store.path = file;
  store.meta = reader.meta();
  store.rank = reader.rank().value_or(-1);
  check(reader.forEachApiCall([&](const ApiCallRow& row) { store.api_calls.push_back({row, std::string(reader.string(row.name_id))}); }));
  check(reader.forEachOp([&](const OpRow& row) { store.ops.push_back({row, std::string(reader.string(row.name_id))}); }));
  check(reader.forEachCollective([&](const CollectiveRow& row) { store.collectives.push_back(row); }));
  check(reader.forEachOpArg([&](const OpArgRow& row) { store.op_args.push_back(row); }));
  check(reader.forEachNvtxRange([&](const NvtxRangeRow& row) { store.nvtx.push_back({row, std::string(reader.string(row.name_id))}); }));
  check(reader.forEachStream([&](const StreamRow& row) { store.streams.push_back(row); }));
  check(reader.forEachDevice([&](const DeviceRow& row) { store.devices.push_back(row); }));
  check(reader.forEachCommunicator([&](const CommunicatorRow& row) { store.communicators.push_back(row); }));
  check(reader.forEachAllocation([&](const AllocationRow& row) { store.allocations.push_back(row); }));
  check(reader.forEachNcclOp([&](const NcclOpRow& row) {
    store.nccl_ops.push_back({row, std::string(reader.string(row.func_id)),
                              std::string(reader.string(row.algorithm_id.value_or(0))),
                              std::string(reader.string(row.protocol_id.value_or(0)))});
  }));
  check(reader.forEachNcclKernelChannel([&](const NcclKernelChannelRow& row) { store.nccl_kernel_channels.push_back(row); }));
  check(reader.forEachCounter([&](const CounterRow& row) { store.counters[row.name] = row.value; }));
  return store;
}

std::vector<RecordedStore> readRun(const std::filesystem::path& directory) {
  auto files = listStores(directory);
  if (!files.ok()) throw std::runtime_error(files.message());
  std::vector<RecordedStore> stores;
  for (const StoreFile& file : files.value()) stores.push_back(readStore(file.path));
  return stores;
}

std::map<std::string, std::string> keyValues(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::string line;
  std::map<std::string, std::string> values;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    std::string word;
    while (words >> word) {
      auto equals = word.find('=');
      if (equals != std::string::npos) values[word.substr(0, equals)] = word.substr(equals + 1);
    }
    break;
  }
  return values;
}

int countIn(const std::map<std::string, std::string>& values, const std::string& key) {
  auto found = values.find(key);
  return found == values.end() ? -1 : std::atoi(found->second.c_str());
}

}  // namespace collector_test
