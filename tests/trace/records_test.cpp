#include "syncopate/trace/records.hpp"

#include <gtest/gtest.h>

namespace syncopate::trace {
namespace {

TEST(Records, EveryRecordIsThirtyTwoBytesAndStartsWithItsType) {
  EXPECT_EQ(sizeof(Record), 32u);
  EXPECT_EQ(Record(ApiCallRecord{}).type(), RecordType::ApiCall);
  EXPECT_EQ(Record(OpRecord{}).type(), RecordType::Op);
  EXPECT_EQ(Record(CollectiveRecord{}).type(), RecordType::Collective);
  EXPECT_EQ(Record(OpArgsRecord{}).type(), RecordType::OpArgs);
  EXPECT_EQ(Record(NvtxRecord{}).type(), RecordType::Nvtx);
  EXPECT_EQ(Record(AllocRecord{}).type(), RecordType::Alloc);
  EXPECT_EQ(Record(FreeRecord{}).type(), RecordType::Free);
}

TEST(Records, RecordRoundTripsItsPayload) {
  ApiCallRecord call;
  call.domain = ApiDomain::Nccl;
  call.name_id = 7;
  call.correlation_id = 0xDEADBEEF;
  call.result = -3;
  call.start_ns = 1'000'000'000'123;
  call.end_ns = 1'000'000'000'456;
  const Record record(call);
  const auto back = record.as<ApiCallRecord>();
  EXPECT_EQ(back.domain, ApiDomain::Nccl);
  EXPECT_EQ(back.name_id, 7u);
  EXPECT_EQ(back.correlation_id, 0xDEADBEEFu);
  EXPECT_EQ(back.result, -3);
  EXPECT_EQ(back.start_ns, 1'000'000'000'123);
  EXPECT_EQ(back.end_ns, 1'000'000'000'456);
}

TEST(Records, MemcpyBytesUseFortyBitsExactly) {
  const std::uint64_t bytes = (std::uint64_t{0xAB} << 32) | 0x12345678u;
  const OpRecord op = OpRecord::memcpy(MemcpyKind::DeviceToHost, 3, 9, bytes, 10, 20);
  EXPECT_EQ(op.kind, OpKind::Memcpy);
  EXPECT_EQ(op.bytes(), bytes);
  EXPECT_FALSE(op.bytesClamped());
  EXPECT_EQ(op.memcpyKind(), MemcpyKind::DeviceToHost);
  EXPECT_EQ(op.stream_id, 3u);
  EXPECT_EQ(op.correlation_id, 9u);

  const OpRecord largest = OpRecord::memset(1, 2, OpRecord::kMaxBytes, 0, 1);
  EXPECT_EQ(largest.bytes(), OpRecord::kMaxBytes);
  EXPECT_FALSE(largest.bytesClamped());
}

TEST(Records, OversizedByteCountsAreClampedAndFlagged) {
  const OpRecord op = OpRecord::memcpy(MemcpyKind::HostToDevice, 1, 1, OpRecord::kMaxBytes + 1, 0, 1);
  EXPECT_TRUE(op.bytesClamped());
  EXPECT_EQ(op.bytes(), OpRecord::kMaxBytes);
  EXPECT_EQ(op.memcpyKind(), MemcpyKind::HostToDevice);  // the flag does not disturb the kind
}

TEST(Records, SyncFactoriesPlaceDeviceEventAndStream) {
  const OpRecord device = OpRecord::syncDevice(SyncKind::Device, 2, 5, 100, 200);
  EXPECT_EQ(device.kind, OpKind::HostSync);
  EXPECT_EQ(device.syncKind(), SyncKind::Device);
  EXPECT_EQ(device.detail, 2u);
  EXPECT_EQ(device.stream_id, kNoStream);

  const OpRecord event = OpRecord::syncEvent(44, 6, 5, 100, 200);
  EXPECT_EQ(event.syncKind(), SyncKind::Event);
  EXPECT_EQ(event.detail, 44u);
  EXPECT_EQ(event.stream_id, 6u);

  const OpRecord stream = OpRecord::syncStream(6, 5, 100, 200);
  EXPECT_EQ(stream.syncKind(), SyncKind::Stream);
  EXPECT_EQ(stream.stream_id, 6u);
}

}  // namespace
}  // namespace syncopate::trace
