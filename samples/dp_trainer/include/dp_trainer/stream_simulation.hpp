// A small fluid simulation of ops on streams of one device, for the step prediction: each
// stream runs its ops in order; an op may also wait for an op of another stream (an event);
// while a Compute and a Communication op are active together, each progresses at
// 1 / (1 + its slowdown) of full speed (the profile's interference).
#pragma once

#include <vector>

namespace dp_trainer::simulation {

enum class Work { Compute, Communication, Copy };

struct Op {
  Work work = Work::Compute;
  double ns = 0.0;        // duration at full speed
  int wait_stream = -1;   // when >= 0, start only after op wait_op of stream wait_stream ends
  int wait_op = -1;
};

// Returns when the last op of every stream has ended (ns from 0). Throws std::logic_error if
// the waits can never be satisfied.
double runStreams(const std::vector<std::vector<Op>>& streams, double compute_slowdown, double communication_slowdown);

}  // namespace dp_trainer::simulation
