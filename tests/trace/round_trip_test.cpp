// Every table, written through records (the collector's path) and through rows (the
// importers' path), read back field by field.
#include <gtest/gtest.h>

#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "read_all.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::readAll;
using testing::TempDir;

class RecordRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    thread = catalog.registerThread({100, catalog.intern("main")});
    catalog.registerDevice({0, catalog.intern("simgpu H100"), catalog.intern("GPU-1234"),
                            catalog.intern("0000:3b:00.0"), 132, std::int64_t{80} << 30});
    compute = catalog.registerStream({0, 0x10, 1u, -1, catalog.intern("compute")});
    legacy = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
    comm = catalog.registerCommunicator({0xFEDCBA9876543210ULL, 1, 4, 0, 0x5000, 1234, std::nullopt});
    gemm = catalog.internShape({catalog.intern("gemm_kernel"), {64, 2, 1}, {256, 1, 1}});
    nccl = catalog.internShape({catalog.intern("ncclDevKernel_AllReduce"), {}, {}});
    event = catalog.eventId(0x9000);
  }

  Catalog catalog;
  ThreadId thread{};
  StreamId compute{}, legacy{};
  CommId comm{};
  ShapeId gemm{}, nccl{};
  EventId event{};
};

TEST_F(RecordRoundTrip, EveryRecordBecomesItsRow) {
  TempDir dir;
  auto writer = StoreWriter::create(dir.path(), {"host-a", 4321, 1, "record"}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();

  ApiCallRecord launch;
  launch.domain = ApiDomain::CudaRuntime;
  launch.name_id = catalog.intern("cudaLaunchKernel");
  launch.correlation_id = 1;
  launch.result = 0;
  launch.start_ns = 1000;
  launch.end_ns = 1500;
  ApiCallRecord no_gpu_work = launch;
  no_gpu_work.name_id = catalog.intern("cudaGetDevice");
  no_gpu_work.correlation_id = 0;
  no_gpu_work.result = 101;

  CollectiveRecord allreduce;
  allreduce.coll_type = CollType::AllReduce;
  allreduce.dtype = DataType::Float32;
  allreduce.red_op = RedOp::Sum;
  allreduce.correlation_id = 9;
  allreduce.comm = comm;
  allreduce.seq = 17;
  allreduce.group_id = 3;
  allreduce.count = 1000;
  CollectiveRecord send;
  send.coll_type = CollType::Send;
  send.dtype = DataType::Unknown;
  send.correlation_id = 10;
  send.comm = comm;
  send.root_or_peer = 2;
  send.seq = 18;
  send.count = 64;

  OpArgsRecord args;
  args.count = 2;
  args.index[0] = 0;
  args.index[1] = 3;
  args.correlation_id = 1;
  args.address[0] = 0xA000;
  args.address[1] = 0xFFFF'8000'0000'0000ULL;  // above INT64_MAX: stored by its bits
  OpArgsRecord one_arg;
  one_arg.count = 1;
  one_arg.index[0] = 1;
  one_arg.correlation_id = 9;
  one_arg.address[0] = 0xD000;

  NvtxRecord step;
  step.depth = 0;
  step.name_id = catalog.intern("ProfilerStep#1");
  step.start_ns = 500;
  step.end_ns = 9000;
  NvtxRecord mark;
  mark.flags = NvtxRecord::kMark | NvtxRecord::kHasColor;
  mark.name_id = catalog.intern("checkpoint");
  mark.color = 0xFF00FF00;
  mark.start_ns = mark.end_ns = 700;
  NvtxRecord ranged;
  ranged.name_id = catalog.intern("load");
  ranged.domain_id = catalog.intern("mydomain");
  ranged.start_ns = 800;
  ranged.end_ns = 900;

  AllocRecord device_alloc;
  device_alloc.kind = AllocKind::Device;
  device_alloc.device = 0;
  device_alloc.address = 0xC000;
  device_alloc.bytes = 4096;
  device_alloc.time_ns = 100;
  FreeRecord device_free;
  device_free.address = 0xC000;
  device_free.time_ns = 200;
  AllocRecord pinned;
  pinned.kind = AllocKind::Pinned;
  pinned.device = -1;
  pinned.address = 0xE000;
  pinned.bytes = 8192;
  pinned.time_ns = 150;

  const std::uint64_t five_gib = std::uint64_t{5} << 30;
  const std::vector<Record> records = {
      launch,
      no_gpu_work,
      OpRecord::launch(OpKind::Kernel, compute, 1, gemm, 2000, 3000),
      OpRecord::memcpy(MemcpyKind::HostToDevice, legacy, 2, five_gib, 3000, 4000),
      OpRecord::memset(compute, 3, 1024, 4000, 4100),
      OpRecord::event(OpKind::EventRecord, compute, 4, event, 4100, 4100),
      OpRecord::event(OpKind::StreamWait, legacy, 5, event, 4200, 4300),
      OpRecord::syncStream(compute, 6, 4300, 4400),
      OpRecord::syncEvent(event, kNoStream, 7, 4400, 4500),
      OpRecord::syncDevice(SyncKind::Device, 0, 8, 4500, 4600),
      OpRecord::launch(OpKind::Collective, compute, 9, nccl, 5000, 6000),
      allreduce,
      OpRecord::launch(OpKind::P2P, compute, 10, nccl, 6000, 6500),
      send,
      args,
      one_arg,
      step,
      mark,
      ranged,
      device_alloc,
      pinned,
      device_free,
  };
  ASSERT_TRUE((*writer)->append(thread, records).ok());
  ASSERT_TRUE((*writer)->close().ok());

  auto reader = StoreReader::open(dir / "rank-1.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  const StoreReader& r = *reader;
  EXPECT_EQ(r.rank(), 1);
  EXPECT_EQ(r.pid(), 4321);
  EXPECT_EQ(r.metaValue("host"), "host-a");

  const auto threads = readAll(r, &StoreReader::forEachThread);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0], (ThreadRow{thread, 100, "main"}));

  const auto devices = readAll(r, &StoreReader::forEachDevice);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0], (DeviceRow{0, "simgpu H100", "GPU-1234", "0000:3b:00.0", 132, std::int64_t{80} << 30}));

  const auto streams = readAll(r, &StoreReader::forEachStream);
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_EQ(streams[0], (StreamRow{compute, 0, 0x10u, 1u, -1, "compute"}));
  EXPECT_EQ(streams[1], (StreamRow{legacy, 0, 0u, std::nullopt, std::nullopt, ""}));

  const auto comms = readAll(r, &StoreReader::forEachCommunicator);
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0], (CommunicatorRow{0xFEDCBA9876543210ULL, 1, 4, 0, 0x5000u, 1234, std::nullopt}));

  const auto calls = readAll(r, &StoreReader::forEachApiCall);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (ApiCallRow{1, thread, ApiDomain::CudaRuntime, launch.name_id, 1000, 1500, 1, 0}));
  EXPECT_EQ(calls[1], (ApiCallRow{2, thread, ApiDomain::CudaRuntime, no_gpu_work.name_id, 1000, 1500, std::nullopt, 101}));
  EXPECT_EQ(r.string(calls[0].name_id), "cudaLaunchKernel");

  const auto ops = readAll(r, &StoreReader::forEachOp);
  ASSERT_EQ(ops.size(), 10u);
  const auto name = [&](const OpRow& op) { return std::string(r.string(op.name_id)); };
  // Kernel: name, grid and block from the shape; device from the stream.
  EXPECT_EQ(ops[0].kind, OpKind::Kernel);
  EXPECT_EQ(name(ops[0]), "gemm_kernel");
  EXPECT_EQ(ops[0].device_id, 0);
  EXPECT_EQ(ops[0].stream_id, compute);
  EXPECT_EQ(ops[0].grid, (Dim3{64, 2, 1}));
  EXPECT_EQ(ops[0].block, (Dim3{256, 1, 1}));
  EXPECT_EQ(ops[0].correlation_id, 1);
  EXPECT_EQ(ops[0].start_ns, 2000);
  EXPECT_EQ(ops[0].end_ns, 3000);
  EXPECT_FALSE(ops[0].bytes.has_value());
  // Memcpy of 5 GiB (above 32 bits).
  EXPECT_EQ(name(ops[1]), "Memcpy HtoD");
  EXPECT_EQ(ops[1].bytes, static_cast<std::int64_t>(five_gib));
  EXPECT_EQ(ops[1].memcpy_kind, MemcpyKind::HostToDevice);
  EXPECT_EQ(ops[1].stream_id, legacy);
  EXPECT_FALSE(ops[1].grid.has_value());
  EXPECT_EQ(name(ops[2]), "Memset");
  EXPECT_EQ(ops[2].bytes, 1024);
  EXPECT_EQ(name(ops[3]), "Event record");
  EXPECT_EQ(ops[3].event_id, event);
  EXPECT_EQ(name(ops[4]), "Stream wait event");
  EXPECT_EQ(ops[4].event_id, event);
  EXPECT_EQ(ops[4].stream_id, legacy);
  EXPECT_EQ(ops[5].kind, OpKind::HostSync);
  EXPECT_EQ(ops[5].sync_kind, SyncKind::Stream);
  EXPECT_EQ(ops[5].device_id, 0);
  EXPECT_EQ(ops[6].sync_kind, SyncKind::Event);
  EXPECT_EQ(ops[6].event_id, event);
  EXPECT_FALSE(ops[6].stream_id.has_value());
  EXPECT_FALSE(ops[6].device_id.has_value());  // an event sync whose stream is unknown
  EXPECT_EQ(ops[7].sync_kind, SyncKind::Device);
  EXPECT_EQ(ops[7].device_id, 0);
  EXPECT_FALSE(ops[7].stream_id.has_value());
  EXPECT_EQ(name(ops[7]), "Device synchronize");
  EXPECT_EQ(ops[8].kind, OpKind::Collective);
  EXPECT_EQ(name(ops[8]), "ncclDevKernel_AllReduce");
  EXPECT_FALSE(ops[8].grid.has_value());  // unknown dims stay NULL
  EXPECT_EQ(ops[9].kind, OpKind::P2P);

  const auto collectives = readAll(r, &StoreReader::forEachCollective);
  ASSERT_EQ(collectives.size(), 2u);
  EXPECT_EQ(collectives[0], (CollectiveRow{9, 0xFEDCBA9876543210ULL, 1, 4, 17, CollType::AllReduce, DataType::Float32,
                                           RedOp::Sum, 1000u, 4000u, std::nullopt, 3u}));
  EXPECT_EQ(collectives[1], (CollectiveRow{10, 0xFEDCBA9876543210ULL, 1, 4, 18, CollType::Send, std::nullopt,
                                           std::nullopt, 64u, std::nullopt, 2, std::nullopt}));

  const auto op_args = readAll(r, &StoreReader::forEachOpArg);
  ASSERT_EQ(op_args.size(), 3u);
  EXPECT_EQ(op_args[0], (OpArgRow{1, 0, 0xA000}));
  EXPECT_EQ(op_args[1], (OpArgRow{1, 3, 0xFFFF'8000'0000'0000ULL}));
  EXPECT_EQ(op_args[2], (OpArgRow{9, 1, 0xD000}));

  const auto nvtx = readAll(r, &StoreReader::forEachNvtxRange);
  ASSERT_EQ(nvtx.size(), 3u);
  EXPECT_EQ(nvtx[0], (NvtxRangeRow{1, thread, std::nullopt, step.name_id, 500, 9000, 0u, std::nullopt, std::nullopt}));
  EXPECT_EQ(nvtx[1], (NvtxRangeRow{2, thread, std::nullopt, mark.name_id, 700, 700, std::nullopt, 0xFF00FF00u,
                                   std::nullopt}));
  EXPECT_EQ(nvtx[2], (NvtxRangeRow{3, thread, ranged.domain_id, ranged.name_id, 800, 900, std::nullopt, std::nullopt,
                                   std::nullopt}));
  EXPECT_EQ(r.string(*nvtx[2].domain_id), "mydomain");

  const auto allocations = readAll(r, &StoreReader::forEachAllocation);
  ASSERT_EQ(allocations.size(), 2u);  // written in time order: the device alloc (100), then pinned (150)
  EXPECT_EQ(allocations[0], (AllocationRow{1, 0, 0xC000, 4096, AllocKind::Device, 100, 200}));
  EXPECT_EQ(allocations[1], (AllocationRow{2, std::nullopt, 0xE000, 8192, AllocKind::Pinned, 150, std::nullopt}));

  EXPECT_EQ(*r.rowCount(Table::Ops), 10);
  EXPECT_EQ(*r.rowCount(Table::ApiCalls), 2);
  const auto counters = readAll(r, &StoreReader::forEachCounter);
  EXPECT_TRUE(counters.empty()) << counters.size() << " counters";
  EXPECT_TRUE(readAll(r, &StoreReader::forEachDiagnostic).empty());
}

TEST(RowRoundTrip, ImporterRowsComeBackUnchanged) {
  TempDir dir;
  Catalog catalog;
  const ThreadId thread = catalog.registerThread({7, catalog.intern("python")});
  const StreamId stream = catalog.registerStream({3, 42, std::nullopt, std::nullopt, catalog.intern("stream 7")});
  const StringId kernel = catalog.intern("void at::native::vectorized_elementwise_kernel<4>");
  auto writer = StoreWriter::createFile(dir / "rank-0.sqlite", {"h", 1, 0, "import-kineto"}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();
  StoreWriter& w = **writer;

  const ApiCallRow call{1, thread, ApiDomain::CudaRuntime, catalog.intern("cudaLaunchKernel"), 10, 5, 77, std::nullopt};
  OpRow op;
  op.id = 1;
  op.kind = OpKind::Kernel;
  op.device_id = 3;
  op.stream_id = stream;
  op.name_id = kernel;
  op.start_ns = 20;
  op.end_ns = 30;
  op.correlation_id = 77;
  op.grid = Dim3{1, 1, 1};
  op.block = Dim3{128, 1, 1};
  const CollectiveRow coll{78, 99, 0, 2, 5, CollType::AllGather, DataType::Bfloat16, std::nullopt, 10u, 20u,
                           std::nullopt, std::nullopt};
  const OpArgRow arg{77, 2, 0xBEEF};
  const NvtxRangeRow range{1, std::nullopt, std::nullopt, catalog.intern("forward"), 1, 2, 1u, 0xFFu, 5u};
  const AllocationRow alloc{1, 3, 0x1000, 64, AllocKind::Managed, 1, 9};

  ASSERT_TRUE(w.writeApiCall(call).ok());
  ASSERT_TRUE(w.writeOp(op).ok());
  ASSERT_TRUE(w.writeCollective(coll).ok());
  ASSERT_TRUE(w.writeOpArg(arg).ok());
  ASSERT_TRUE(w.writeNvtxRange(range).ok());
  ASSERT_TRUE(w.writeAllocation(alloc).ok());
  ASSERT_TRUE(w.close().ok());

  auto reader = StoreReader::open(dir / "rank-0.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(reader->metaValue("source"), "import-kineto");
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachApiCall), std::vector<ApiCallRow>{call});
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachOp), std::vector<OpRow>{op});
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachCollective), std::vector<CollectiveRow>{coll});
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachOpArg), std::vector<OpArgRow>{arg});
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachNvtxRange), std::vector<NvtxRangeRow>{range});
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachAllocation), std::vector<AllocationRow>{alloc});
  EXPECT_EQ(reader->string(kernel), "void at::native::vectorized_elementwise_kernel<4>");
  // A negative duration is kept as given, and said.
  const auto diagnostics = readAll(*reader, &StoreReader::forEachDiagnostic);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].message, "rows end before they start");
  EXPECT_EQ(diagnostics[0].count, 1);
  const auto counters = readAll(*reader, &StoreReader::forEachCounter);
  EXPECT_EQ(counters, (std::vector<CounterRow>{{"negative_durations", 1}}));
}

// More rows than one multi-row INSERT holds, with every nullable column both set and NULL
// across them, come back in order and unchanged.
TEST(RowRoundTrip, ManyRowsThroughMultiRowInserts) {
  TempDir dir;
  Catalog catalog;
  const StringId name = catalog.intern("k");
  auto writer = StoreWriter::createFile(dir / "many.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  std::vector<OpRow> ops;
  std::vector<NvtxRangeRow> ranges;
  for (int i = 0; i < 101; ++i) {
    OpRow op;
    op.id = i + 1;
    op.kind = static_cast<OpKind>(1 + i % 8);
    if (i % 2 == 0) op.device_id = i % 4;
    if (i % 3 != 0) op.stream_id = static_cast<StreamId>(i);
    op.name_id = name;
    op.start_ns = i * 1000;
    op.end_ns = i * 1000 + i;
    if (i % 5 != 0) op.correlation_id = i;
    if (i % 7 == 0) op.bytes = std::int64_t{i} << 33;
    if (i % 7 == 1) op.memcpy_kind = MemcpyKind::PeerToPeer;
    if (i % 4 == 1) op.grid = Dim3{static_cast<std::uint32_t>(i), 2, 3};
    if (i % 4 == 2) op.block = Dim3{4, 5, static_cast<std::uint32_t>(i)};
    if (i % 6 == 0) op.event_id = static_cast<EventId>(i + 9);
    if (i % 9 == 0) op.sync_kind = SyncKind::Context;
    ops.push_back(op);
    ASSERT_TRUE((*writer)->writeOp(op).ok());
    NvtxRangeRow range{i + 1, std::nullopt, std::nullopt, name, i, i + 1, std::nullopt, std::nullopt, std::nullopt};
    if (i % 2 == 1) range.thread_id = static_cast<ThreadId>(i);
    if (i % 3 == 1) range.depth = static_cast<std::uint32_t>(i % 5);
    if (i % 4 == 1) range.color = 0xFF000000u + static_cast<std::uint32_t>(i);
    ranges.push_back(range);
    ASSERT_TRUE((*writer)->writeNvtxRange(range).ok());
  }
  ASSERT_TRUE((*writer)->close().ok());
  auto reader = StoreReader::open(dir / "many.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachOp), ops);
  EXPECT_EQ(readAll(*reader, &StoreReader::forEachNvtxRange), ranges);
}

TEST(RowRoundTrip, RowsWithoutANameAreRefused) {
  TempDir dir;
  Catalog catalog;
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok());
  const Status s = (*writer)->writeOp(OpRow{});
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("no name"), std::string::npos);
}

}  // namespace
}  // namespace syncopate::trace
