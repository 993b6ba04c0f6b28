// The calls a sharded optimizer whose collectives were waited for at once (Placement::
// WaitedAtOnce, sharded_overlap.hpp: PyTorch's synchronous collectives) would make with its
// framework's overlap settings on (docs/tuner.md, "Sharded optimizers: overlapping reduction and
// gathering"). Each such collective is issued as torch.distributed issues one:
//   an event on the compute stream S, the process group's stream C waiting for it, the
//   collective on C, an event on C, and S waiting for that event at once.
// With the settings on, Megatron-LM issues the same calls elsewhere and waits later:
//   overlap_grad_reduce: each gradient bucket's reduce-scatter block right after the call that
//     last wrote the bucket (backward's kernel; buckets in order, a bucket ready before an
//     earlier one waiting for that one's launch), and S's wait for it just before the first
//     call on S that touches its buffers (the step);
//   overlap_param_gather: every parameter bucket's all-gather block where the first one was
//     (after the step; one whose parameters are written later fails), in the order S's calls
//     first touch the buckets (the next forward), and S's wait for each just before that first
//     touch.
// Each moved collective keeps its arguments, buffers and cross-rank sequence number; the events
// are new, one per block. The moved and written calls take no host time (the calls they replace
// kept theirs in the gaps they leave), and everything else keeps its recorded times.
#pragma once

#include "syncopate/trace/status.hpp"
#include "syncopate/tuner/recorded_calls.hpp"
#include "syncopate/tuner/sharded_overlap.hpp"
#include "syncopate/tuner/what_if.hpp"

namespace syncopate::tuner {

// The model's calls rewritten so (above) in its modelled iterations. Fails, in a sentence, where
// a collective's calls around it are not that pattern on some rank.
trace::Result<RecordedRun> overlapWaitedCollectives(const WhatIfModel& model, const ShardedOptimizerRun& optimizer,
                                                    bool grad_reduce, bool param_gather);

}  // namespace syncopate::tuner
