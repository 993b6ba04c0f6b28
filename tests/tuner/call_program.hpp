// Builds Calls for scheduler tests: each call gets the next id, and pointer lists live as long
// as the builder.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <vector>

#include "syncopate/tuner/calls.hpp"

namespace syncopate::tuner::testing {

inline constexpr std::uint64_t kComm0 = 0x5000;

class CallProgram {
 public:
  std::uint32_t next_id = 1;

  Call kernel(StreamHandle s, std::initializer_list<std::uint64_t> pointers) {
    auto& t = touches_.emplace_back();
    for (std::uint64_t p : pointers) t.push_back({p, 0});
    Call c = make(CallKind::Kernel, s);
    c.touches = t;
    return c;
  }
  Call unknownKernel(StreamHandle s) {
    Call c = make(CallKind::Kernel, s);
    c.unknown_pointers = true;
    return c;
  }
  Call memset(StreamHandle s, std::uint64_t address, std::uint64_t bytes) {
    auto& t = touches_.emplace_back(std::vector<Touch>{{address, bytes}});
    Call c = make(CallKind::Memset, s);
    c.touches = t;
    return c;
  }
  Call memcpy(StreamHandle s, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
    auto& t = touches_.emplace_back(std::vector<Touch>{{dst, bytes}, {src, bytes}});
    Call c = make(CallKind::Memcpy, s);
    c.touches = t;
    return c;
  }
  // An in-place float all-reduce (sum) on communicator 0 of 4 ranks.
  Call allReduce(StreamHandle s, std::uint64_t address, std::uint64_t count, std::uint64_t recv = 0) {
    Call c = make(CallKind::Collective, s);
    c.collective.comm = kComm0;
    c.collective.comm_size = 4;
    c.collective.type = trace::CollType::AllReduce;
    c.collective.dtype = trace::DataType::Float32;
    c.collective.op = trace::RedOp::Sum;
    c.collective.count = count;
    c.collective.send = address;
    c.collective.recv = recv == 0 ? address : recv;
    return c;
  }
  // A float reduce-scatter (sum) on communicator 0 of 4 ranks: `count` elements to each rank,
  // from send[0, 4 * count) into recv[0, count). In place: recv is the rank's slice of send.
  Call reduceScatter(StreamHandle s, std::uint64_t send, std::uint64_t count, std::uint64_t recv) {
    Call c = allReduce(s, send, count, recv);
    c.collective.type = trace::CollType::ReduceScatter;
    return c;
  }
  // A float all-gather on communicator 0 of 4 ranks: `count` elements from each rank, from
  // send[0, count) into recv[0, 4 * count). In place: send is the rank's slice of recv.
  Call allGather(StreamHandle s, std::uint64_t send, std::uint64_t count, std::uint64_t recv) {
    Call c = allReduce(s, send, count, recv);
    c.collective.type = trace::CollType::AllGather;
    c.collective.op = trace::RedOp::None;
    return c;
  }
  Call broadcast(StreamHandle s, std::uint64_t address, std::uint64_t count) {
    Call c = allReduce(s, address, count);
    c.collective.type = trace::CollType::Broadcast;
    c.collective.op = trace::RedOp::None;
    c.collective.root_or_peer = 0;
    return c;
  }
  Call record(StreamHandle s, std::uint64_t event) {
    Call c = make(CallKind::EventRecord, s);
    c.event = event;
    return c;
  }
  Call wait(StreamHandle s, std::uint64_t event) {
    Call c = make(CallKind::StreamWait, s);
    c.event = event;
    return c;
  }
  Call eventSync(std::uint64_t event) {
    Call c = make(CallKind::EventSync, kLegacyStream);
    c.event = event;
    return c;
  }
  Call eventQuery(std::uint64_t event) {
    Call c = make(CallKind::EventQuery, kLegacyStream);
    c.event = event;
    return c;
  }
  Call of(CallKind kind, StreamHandle s = kLegacyStream) { return make(kind, s); }

 private:
  Call make(CallKind kind, StreamHandle s) {
    Call c;
    c.kind = kind;
    c.id = next_id++;
    c.stream = s;
    return c;
  }
  std::deque<std::vector<Touch>> touches_;
};

}  // namespace syncopate::tuner::testing
