#include "written_run.hpp"

#include <fstream>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/writer.hpp"

namespace syncopate::gui::testing {

using namespace syncopate::trace;

std::string writeTwoRankRun(const std::filesystem::path& dir) {
  constexpr std::int64_t kBase = 1'000'000'000;
  auto t = [](std::int64_t micro) { return kBase + micro * 1000; };
  for (int r = 0; r < 2; ++r) {
    Catalog c;
    StoreIdentity id;
    id.host = r == 0 ? "node-a" : "node-b";
    id.pid = 1000 + r;
    id.rank = r;
    id.source = "synthetic";
    auto w = StoreWriter::create(dir, id, c);
    if (!w.ok()) return w.message();
    StoreWriter& writer = **w;
    const ThreadId thread = c.registerThread({100 + r, c.intern("main")});
    const StreamId compute = c.registerStream({0, 7, std::nullopt, std::nullopt, c.intern("compute")});
    const StreamId nccl = c.registerStream({0, 8, std::nullopt, std::nullopt, c.intern("nccl")});
    const CommId comm = c.registerCommunicator({42, r, 2, 0, 0x900 + static_cast<std::uint64_t>(r), 0, std::nullopt});
    const ShapeId gemm = c.internShape({c.intern("gemm"), {64, 1, 1}, {256, 1, 1}});
    const ShapeId allreduce = c.internShape({c.intern("AllReduce"), {}, {}});
    std::vector<Record> records;
    auto range = [&](const char* name, std::uint16_t depth, std::int64_t s, std::int64_t e) {
      NvtxRecord n;
      n.depth = depth;
      n.name_id = c.intern(name);
      n.start_ns = t(s);
      n.end_ns = t(e);
      records.push_back(n);
    };
    range("ProfilerStep#1", 0, 0, 100);
    range("forward", 1, 0, 40);
    range("ProfilerStep#2", 0, 100, 200);
    std::uint32_t corr = 0;
    for (int k = 0; k < 2; ++k) {
      const std::int64_t o = 100 * k;
      ApiCallRecord launch;
      launch.name_id = c.intern("cudaLaunchKernel");
      launch.correlation_id = ++corr;
      launch.start_ns = t(o + 1);
      launch.end_ns = t(o + 3);
      records.push_back(launch);
      records.push_back(OpRecord::launch(OpKind::Kernel, compute, corr, gemm, t(o + 5), t(o + 45)));
      ApiCallRecord call;
      call.domain = ApiDomain::Nccl;
      call.name_id = c.intern("ncclAllReduce");
      call.correlation_id = ++corr;
      call.start_ns = t(o + 46);
      call.end_ns = t(o + 48);
      records.push_back(call);
      records.push_back(OpRecord::launch(OpKind::Collective, nccl, corr, allreduce, t(o + (r == 0 ? 50 : 60)), t(o + 90)));
      CollectiveRecord coll;
      coll.coll_type = CollType::AllReduce;
      coll.dtype = DataType::Float32;
      coll.red_op = RedOp::Sum;
      coll.correlation_id = corr;
      coll.comm = comm;
      coll.seq = static_cast<std::uint32_t>(k);
      coll.count = 1024;
      records.push_back(coll);
    }
    if (Status s = writer.append(thread, records); !s.ok()) return s.message();
    if (Status s = writer.close(); !s.ok()) return s.message();
  }
  RunMeta meta;
  meta.command = {"sample"};
  meta.hosts = {"node-a", "node-b"};
  meta.source = "synthetic";
  if (Status s = writeRunMeta(dir, meta); !s.ok()) return s.message();
  return {};
}

void writeGarbageStore(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "rank-0.sqlite") << "this is not a SQLite database, just some bytes that end early";
}

}  // namespace syncopate::gui::testing
