// The scan of a launch's parameters: pointers by their type, by-value aggregates word by word
// against the device memory the process holds, the driver's packed buffers, and every case in
// which a launch must count as touching anything.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/dispatch/device_memory.hpp"
#include "syncopate/dispatch/launch_touches.hpp"
#include "syncopate/trace/records.hpp"

namespace syncopate::preload {
namespace {

constexpr std::uint64_t kSegment = 0x7f0000000000;  // a caching allocator's segment
constexpr std::uint64_t kSegmentBytes = 1 << 20;

class LaunchTouches : public ::testing::Test {
 protected:
  void SetUp() override { deviceMemory().add(kSegment, kSegmentBytes); }
  void TearDown() override { deviceMemory().remove(kSegment); }

  // A layout as the registry learns one (kernel_layout.cpp), over `slots`.
  ParamLayout layoutOf(const std::vector<ParamSlot>& slots) {
    ParamLayout layout;
    layout.readable = true;
    layout.count = static_cast<std::uint32_t>(slots.size());
    layout.slots = slots.data();
    std::vector<std::uint16_t>& pointers = pointer_indices_.emplace_back();
    for (std::size_t i = 0; i < slots.size(); ++i) {
      layout.buffer_bytes = std::max(layout.buffer_bytes, slots[i].offset + slots[i].size);
      layout.scans = layout.scans || slots[i].kind == ParamKind::Scanned;
      if (slots[i].kind == ParamKind::Pointer) pointers.push_back(static_cast<std::uint16_t>(i));
    }
    layout.pointer_count = static_cast<std::uint32_t>(pointers.size());
    layout.pointers = pointers.data();
    return layout;
  }
  LaunchTouch out[kMaxLaunchTouches];

 private:
  std::deque<std::vector<std::uint16_t>> pointer_indices_;  // every layout's, alive as long as the test
};

TEST_F(LaunchTouches, PointerParametersAreTouchesWhereverTheyPoint) {
  // k(float* out, int n, const float* in, float* unused_null)
  const std::vector<ParamSlot> slots = {
      {0, 8, ParamKind::Pointer}, {8, 4, ParamKind::Scalar}, {16, 8, ParamKind::Pointer}, {24, 8, ParamKind::Pointer}};
  std::uint64_t out_ptr = kSegment + 64, in_ptr = 0x1234000, null_ptr = 0;
  int n = 0x7f00;
  void* args[] = {&out_ptr, &n, &in_ptr, &null_ptr};
  ASSERT_EQ(touchesOf(layoutOf(slots), args, nullptr, out), 2);
  EXPECT_EQ(out[0].address, kSegment + 64);
  EXPECT_EQ(out[0].parameter, 0);
  EXPECT_EQ(out[1].address, 0x1234000u) << "a pointer's type says it is one, known memory or not";
  EXPECT_EQ(out[1].parameter, 2);

  // The same launch through the driver's packed buffer reads the same touches (the argument
  // array's path reads only the pointers; the buffer's goes over every parameter).
  unsigned char packed[32] = {};
  std::memcpy(packed + 0, &out_ptr, 8);
  std::memcpy(packed + 8, &n, 4);
  std::memcpy(packed + 16, &in_ptr, 8);
  std::memcpy(packed + 24, &null_ptr, 8);
  std::size_t size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  LaunchTouch from_buffer[kMaxLaunchTouches];
  ASSERT_EQ(touchesOf(layoutOf(slots), nullptr, extra, from_buffer), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(from_buffer[i].address, out[i].address);
    EXPECT_EQ(from_buffer[i].parameter, out[i].parameter);
  }
}

TEST_F(LaunchTouches, MorePointersThanTheBoundTouchAnything) {
  // k(float* p0, ..., float* pN): kMaxLaunchTouches non-null pointers are all reported; one more
  // and the launch counts as touching anything. A null pointer is no touch and does not count.
  for (const int pointers : {kMaxLaunchTouches, kMaxLaunchTouches + 1}) {
    std::vector<ParamSlot> slots;
    std::vector<std::uint64_t> values;
    for (int i = 0; i <= pointers; ++i) {
      slots.push_back({static_cast<std::uint32_t>(8 * i), 8, ParamKind::Pointer});
      values.push_back(i == 0 ? 0 : kSegment + 8u * static_cast<std::uint64_t>(i));  // parameter 0 is null
    }
    std::vector<void*> args;
    for (std::uint64_t& value : values) args.push_back(&value);
    const int touched = touchesOf(layoutOf(slots), args.data(), nullptr, out);
    if (pointers > kMaxLaunchTouches) {
      EXPECT_EQ(touched, -1);
      continue;
    }
    ASSERT_EQ(touched, kMaxLaunchTouches);
    EXPECT_EQ(out[0].parameter, 1);
    EXPECT_EQ(out[kMaxLaunchTouches - 1].address, kSegment + 8u * static_cast<std::uint64_t>(kMaxLaunchTouches));
  }
}

TEST_F(LaunchTouches, AFourKilobyteStructIsScannedWordByWord) {
  // k(int n, Lists lists): a multi-tensor-apply struct at offset 8, 4 KB, whose words are
  // tensor pointers into the segment, sizes, and a pointer to memory nobody allocated.
  struct Lists {
    std::uint64_t words[512];
  } lists{};
  for (int i = 0; i < 100; ++i) lists.words[i] = kSegment + 4096u * static_cast<std::uint64_t>(i);
  for (int i = 100; i < 200; ++i) lists.words[i] = 4096;  // sizes
  lists.words[200] = 0xdead0000;
  const std::vector<ParamSlot> slots = {{0, 4, ParamKind::Scalar}, {8, sizeof lists, ParamKind::Scanned}};
  int n = 3;
  void* args[] = {&n, &lists};
  ASSERT_EQ(touchesOf(layoutOf(slots), args, nullptr, out), 100);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(out[i].address, kSegment + 4096u * static_cast<std::uint64_t>(i));
    EXPECT_EQ(out[i].parameter, 1);
  }
}

TEST_F(LaunchTouches, OnlyWordsAlignedInTheParameterBufferCount) {
  // k(char c, Packed p): p lies at offset 4, so its bytes 4..11 are the buffer's aligned word.
  unsigned char packed[16] = {};
  const std::uint64_t inside = kSegment + 8;
  std::memcpy(packed + 4, &inside, sizeof inside);
  std::memcpy(packed + 0, &inside, 4);  // half of a word at an unaligned place
  const std::vector<ParamSlot> slots = {{0, 1, ParamKind::Scalar}, {4, sizeof packed, ParamKind::Scanned}};
  char c = 0;
  void* args[] = {&c, packed};
  ASSERT_EQ(touchesOf(layoutOf(slots), args, nullptr, out), 1);
  EXPECT_EQ(out[0].address, inside);
}

TEST_F(LaunchTouches, DriverPackedBuffers) {
  struct Buffer {
    std::uint64_t pointer;
    std::int32_t n;
    std::int32_t pad;
    std::uint64_t inside_struct;
  } buffer{kSegment + 16, 5, 0, kSegment + 32};
  std::size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  const std::vector<ParamSlot> slots = {{0, 8, ParamKind::Pointer}, {8, 4, ParamKind::Scalar}, {16, 8, ParamKind::Scanned}};
  ASSERT_EQ(touchesOf(layoutOf(slots), nullptr, extra, out), 2);
  EXPECT_EQ(out[1].address, kSegment + 32);
  EXPECT_EQ(out[1].parameter, 2);

  // Without a layout the whole buffer is scanned, by word.
  const ParamLayout unreadable;
  ASSERT_EQ(touchesOf(unreadable, nullptr, extra, out), 2);
  EXPECT_EQ(out[0].parameter, trace::kPackedWordArgIndex + 0);
  EXPECT_EQ(out[1].parameter, trace::kPackedWordArgIndex + 2);

  std::size_t short_size = 16;
  void* too_short[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_size,
                       CU_LAUNCH_PARAM_END};
  EXPECT_EQ(touchesOf(layoutOf(slots), nullptr, too_short, out), -1) << "shorter than the layout";
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_END};
  EXPECT_EQ(touchesOf(unreadable, nullptr, no_size, out), -1) << "no size known: cannot be read at all";
  void* unknown_entry[] = {reinterpret_cast<void*>(0x7), &buffer, CU_LAUNCH_PARAM_END};
  EXPECT_EQ(touchesOf(layoutOf(slots), nullptr, unknown_entry, out), -1);
}

TEST_F(LaunchTouches, WhatCannotBeReadTouchesAnything) {
  std::uint64_t pointer = kSegment;
  void* args[] = {&pointer};
  const ParamLayout unreadable;  // no size known: an extern "C" kernel without the query
  EXPECT_EQ(touchesOf(unreadable, args, nullptr, out), -1);
  const std::vector<ParamSlot> none;
  EXPECT_EQ(touchesOf(layoutOf(none), nullptr, nullptr, out), 0) << "no parameters, nothing to read";
  void* no_args[] = {nullptr};
  void* unknown_extra[] = {reinterpret_cast<void*>(0x7), nullptr, CU_LAUNCH_PARAM_END};
  EXPECT_EQ(touchesOf(layoutOf(none), no_args, nullptr, out), 0) << "whatever a launch without parameters passes";
  EXPECT_EQ(touchesOf(layoutOf(none), nullptr, unknown_extra, out), 0);
  const std::vector<ParamSlot> one = {{0, 8, ParamKind::Pointer}};
  EXPECT_EQ(touchesOf(layoutOf(one), nullptr, nullptr, out), -1) << "a parameter but no arguments";
  void* null_arg[] = {nullptr};
  EXPECT_EQ(touchesOf(layoutOf(one), null_arg, nullptr, out), -1);
}

TEST_F(LaunchTouches, MoreAddressesThanFollowedTouchAnything) {
  std::vector<std::uint64_t> words(kMaxLaunchTouches + 1, kSegment + 8);
  const std::vector<ParamSlot> slots = {{0, static_cast<std::uint32_t>(words.size() * 8), ParamKind::Scanned}};
  void* args[] = {words.data()};
  EXPECT_EQ(touchesOf(layoutOf(slots), args, nullptr, out), -1);
  words.pop_back();
  EXPECT_EQ(touchesOf(layoutOf({{0, static_cast<std::uint32_t>(words.size() * 8), ParamKind::Scanned}}), args,
                      nullptr, out),
            kMaxLaunchTouches);
}

}  // namespace
}  // namespace syncopate::preload
