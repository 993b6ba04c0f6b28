// An Executor that writes down what the scheduler asked for, one line per action, so that
// tests can compare the exact sequence with the one they expect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncopate/tuner/executor.hpp"

namespace syncopate::tuner::testing {

inline constexpr StreamHandle kComm = 0xC0;
inline constexpr StreamHandle kJoin = 0xD0;

class ActionLog : public Executor {
 public:
  std::vector<std::string> lines;
  std::vector<UnitIssue> units;                 // copies (members point into the scheduler)
  std::vector<std::vector<HeldCollective>> unit_members;
  std::vector<Fallback> fallbacks;
  std::vector<std::uint64_t> digests;
  bool agree_result = true;
  bool events_available = true;  // false: creating the event slots fails
  std::uint32_t event_slots = 0;

  bool prepareEvents(std::uint32_t count) override {
    event_slots = count;
    return events_available;
  }
  StreamHandle communicationStream() override { return kComm; }
  StreamHandle joinStream() override { return kJoin; }

  void passthrough(const Call& c) override { add("call " + std::to_string(c.id)); }
  void recordApplicationEvent(const Call& c, StreamHandle s) override {
    add("call " + std::to_string(c.id) + " on " + name(s));
  }
  void issueHeld(const HeldCollective& h) override { add("held " + std::to_string(h.call_id) + " on " + name(h.stream)); }
  void recordEvent(EventSlot e, StreamHandle s) override { add("record " + std::to_string(e) + " on " + name(s)); }
  void waitEvent(StreamHandle s, EventSlot e) override { add("wait " + name(s) + " " + std::to_string(e)); }
  void hostWait(EventSlot e) override { add("host wait " + std::to_string(e)); }
  void queryWith(const Call& c, EventSlot also) override {
    add("query " + std::to_string(c.id) + " with " + std::to_string(also));
  }
  void issueUnit(const UnitIssue& u) override {
    std::string ids;
    for (const HeldCollective& m : u.members) ids += (ids.empty() ? "" : ",") + std::to_string(m.call_id);
    add("unit " + ids + " [" + std::to_string(u.offset) + "+" + std::to_string(u.count) + "]" +
        (u.contiguous ? " contiguous" : " copied") + " on " + name(u.stream));
    units.push_back(u);
    unit_members.emplace_back(u.members.begin(), u.members.end());
  }
  bool agree(std::uint64_t digest, std::span<const HeldCollective>, bool across_ranks) override {
    if (!across_ranks) {
      add("flush");
      return true;
    }
    digests.push_back(digest);
    add(agree_result ? "agree" : "disagree");
    return agree_result;
  }
  void fallback(Fallback why, const Call& c) override {
    fallbacks.push_back(why);
    add("fallback " + std::string(toString(why)) + " at " + std::to_string(c.id));
  }

  // Lines from index `from` on.
  std::vector<std::string> since(std::size_t from) const {
    return {lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end()};
  }

 private:
  static std::string name(StreamHandle s) {
    if (s == kComm) return "comm";
    if (s == kJoin) return "join";
    return "s" + std::to_string(s);
  }
  void add(std::string line) { lines.push_back(std::move(line)); }
};

}  // namespace syncopate::tuner::testing
