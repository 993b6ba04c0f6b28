// Timed collectives per communicator, in the shape the tuner fits them: y = latency x ring
// steps + time per byte x bus bytes (fits.hpp's CommFit). fitCommunication fits every matched
// collective of a run; ddpBucketFits the buckets of DDP's all-reduces on communicators whose
// other ranks the run lacks.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "least_squares.hpp"
#include "syncopate/tuner/fits.hpp"

namespace syncopate::tuner {

using CommSamples = std::map<std::int64_t, std::vector<LinearSample>>;

// One call of `count` elements among `ranks` that took `ns`, under its communicator; a call
// whose size is not known (ncclTestsBytes) is left out.
void addCommSample(CommSamples& samples, std::int64_t comm_id, trace::CollType type, std::int64_t count,
                   trace::DataType dtype, std::int32_t ranks, double ns);

// The fit of each communicator whose samples determine one.
std::vector<CommFit> fitEachCommunicator(const CommSamples& samples);

}  // namespace syncopate::tuner
