#include "framework_trainer/report.hpp"

#include "sample_common/run_lines.hpp"

#include <fmt/format.h>

namespace framework_trainer {

std::string configLine(const RunSummary& run) {
  const Options& o = run.options;
  const ModelConfig& c = o.config;
  return fmt::format(
      "config name={} layers={} hidden={} heads={} vocab={} seq_len={} micro_batch={} params={} param_tensors={} "
      "mode={} bucket_mb={:g} first_bucket_bytes={} gradient_as_bucket_view={:d} bucket_size={} overlap_grad_reduce={:d} overlap_param_gather={:d} process_group_stream={:d} "
      "fsdp_streams={:d} backward_prefetch={} forward_prefetch={:d} limit_all_gathers={:d} buckets={} "
      "ranks={} bootstrap={} lr={:g} seed={} iterations={} warmup={}",
      c.name, c.layers, c.hidden, c.heads, c.vocab, c.seq_len, c.micro_batch, run.params, run.param_tensors,
      toString(o.mode), o.bucket_mb, o.first_bucket_bytes, o.gradient_as_bucket_view ? 1 : 0, o.bucket_size, o.overlap_grad_reduce ? 1 : 0, o.overlap_param_gather ? 1 : 0,
      o.process_group_stream ? 1 : 0, o.fsdp_streams ? 1 : 0, toString(o.backward_prefetch), o.forward_prefetch ? 1 : 0,
      o.limit_all_gathers ? 1 : 0, run.buckets, run.ranks, toString(run.bootstrap), o.lr, o.seed, o.iterations,
      o.warmup);
}

std::string iterationLine(const IterationRecord& r) {
  return sample_common::iterationLine(r.iteration, r.warmup, r.time_ms);
}

std::string countsLine(int rank, const char* scope, const OpCounts& c) {
  return fmt::format("op_counts rank={} scope={} kernels={} memcpys={} memsets={} collectives={}", rank, scope,
                     c.kernels, c.memcpys, c.memsets, c.collectives);
}

std::string memoryLine(int rank, const CachingAllocator::Stats& s) {
  return fmt::format("memory rank={} segments={} segment_mib={:.1f} peak_allocated_mib={:.1f}", rank, s.segments,
                     static_cast<double>(s.segment_bytes) / (1 << 20),
                     static_cast<double>(s.peak_allocated_bytes) / (1 << 20));
}

std::string summaryLine(const RunSummary& run) {
  return sample_common::summaryLine(toString(run.options.mode), run.ranks, run.options.iterations,
                                    sample_common::measuredTimes(run.iterations));
}

}  // namespace framework_trainer
