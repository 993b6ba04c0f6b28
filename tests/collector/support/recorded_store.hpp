// A store read back whole, with names resolved, for assertions.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "syncopate/trace/rows.hpp"

namespace collector_test {

struct Op {
  syncopate::trace::OpRow row;
  std::string name;
};

struct NvtxRange {
  syncopate::trace::NvtxRangeRow row;
  std::string name;
};

struct ApiCall {
  syncopate::trace::ApiCallRow row;
  std::string name;
};

struct RecordedStore {
  std::filesystem::path path;
  std::map<std::string, std::string, std::less<>> meta;
  int rank = -1;
  std::vector<ApiCall> api_calls;
  std::vector<Op> ops;
  std::vector<syncopate::trace::CollectiveRow> collectives;
  std::vector<syncopate::trace::OpArgRow> op_args;
  std::vector<NvtxRange> nvtx;
  std::vector<syncopate::trace::StreamRow> streams;
  std::vector<syncopate::trace::DeviceRow> devices;
  std::vector<syncopate::trace::CommunicatorRow> communicators;
  std::vector<syncopate::trace::AllocationRow> allocations;
  // NCCL's profiler plugin: the function, algorithm and protocol names resolved.
  struct NcclOp {
    syncopate::trace::NcclOpRow row;
    std::string func, algorithm, protocol;
  };
  std::vector<NcclOp> nccl_ops;
  std::vector<syncopate::trace::NcclKernelChannelRow> nccl_kernel_channels;
  std::map<std::string, std::int64_t> counters;

  int count(syncopate::trace::OpKind kind) const;
  std::vector<const Op*> opsOf(syncopate::trace::OpKind kind) const;
  std::int64_t counter(const std::string& name) const;
};

// Throws with the reader's message when the store cannot be read.
RecordedStore readStore(const std::filesystem::path& file);
// Every store of a run directory, by rank then pid (trace::listStores' order).
std::vector<RecordedStore> readRun(const std::filesystem::path& directory);

// "key=value" pairs of the first line of `text` that starts with `prefix`.
std::map<std::string, std::string> keyValues(const std::string& text, const std::string& prefix);
// The number a program printed for `key` (keyValues), -1 when it printed none.
int countIn(const std::map<std::string, std::string>& values, const std::string& key);

}  // namespace collector_test
