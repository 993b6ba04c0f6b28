// Steps of RunModelBuilder::finish() that relate ops across streams and ranks.
#pragma once

#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

// EventWait flows: each stream-wait op waits for the latest record of the same event on its
// rank that was issued before it (issue order = launch call start, else the op's own start).
// Host syncs on an event with no such record are counted in a diagnostic (event_syncs_unmatched).
void addEventWaitFlows(RunModel& model, const UnmatchedEvents& elsewhere = {});

// Fills model.matches and collectives.match, and adds the Collective and SendRecv flows.
// Collectives match by (communicator, sequence number); a send matches the receive of the
// same communicator, sender and receiver that comes in the same position.
void matchCollectives(RunModel& model);

}  // namespace syncopate::analyzer
