#include "dp_trainer/report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dp_trainer {

TimeStats measuredTimes(const std::vector<IterationRecord>& iterations) {
  return sample_common::measuredTimes(iterations);
}

std::string configLine(const RunSummary& run) {
  const Options& o = run.options;
  const LlmConfig& c = o.config;
  return fmt::format(
      "config name={} layers={} hidden={} seq_len={} micro_batch={} mode={} bucket_mb={:g} collectives_per_iteration={} "
      "ranks={} bootstrap={} width={} batch={} lr={:g} seed={} iterations={} warmup={}",
      c.name, c.layers, c.hidden, c.seq_len, c.micro_batch, toString(o.mode), o.bucket_mb, run.buckets, run.ranks,
      toString(run.bootstrap), o.shape.width, o.shape.batch, o.lr, o.seed, o.iterations, o.warmup);
}

std::string iterationLine(const IterationRecord& r) {
  return sample_common::iterationLine(r.iteration, r.warmup, r.time_ms) + fmt::format(" loss={:.6f}", r.loss);
}

std::string checksumLine(const IterationRecord& r) { return sample_common::checksumLine(r.iteration, r.checksum); }

std::string countsLine(int rank, const char* scope, const OpCounts& c) {
  return fmt::format("op_counts rank={} scope={} kernels={} memcpys={} memsets={} collectives={}", rank, scope,
                     c.kernels, c.memcpys, c.memsets, c.collectives);
}

std::string summaryLine(const RunSummary& run) {
  const double loss_first = run.iterations.empty() ? 0.0 : run.iterations.front().loss;
  const double loss_last = run.iterations.empty() ? 0.0 : run.iterations.back().loss;
  return sample_common::summaryLine(toString(run.options.mode), run.ranks, run.options.iterations,
                                    measuredTimes(run.iterations),
                                    fmt::format("loss_first={:.6f} loss_last={:.6f}", loss_first, loss_last));
}

nlohmann::json summaryJson(const RunSummary& run) {
  const Options& o = run.options;
  const auto counts = [](const OpCounts& c) {
    return nlohmann::json{{"kernels", c.kernels}, {"memcpys", c.memcpys}, {"memsets", c.memsets},
                          {"collectives", c.collectives}};
  };
  nlohmann::json iterations = nlohmann::json::array();
  for (const IterationRecord& r : run.iterations) {
    iterations.push_back({{"iteration", r.iteration},
                          {"warmup", r.warmup},
                          {"time_ms", r.time_ms},
                          {"loss", r.loss},
                          {"grad_checksum", fmt::format("{:016x}", r.checksum)}});
  }
  const TimeStats t = measuredTimes(run.iterations);
  return {
      {"config",
       {{"name", o.config.name},
        {"layers", o.config.layers},
        {"hidden", o.config.hidden},
        {"seq_len", o.config.seq_len},
        {"micro_batch", o.config.micro_batch}}},
      {"mode", toString(o.mode)},
      {"bucket_mb", o.bucket_mb},
      {"collectives_per_iteration", run.buckets},
      {"ranks", run.ranks},
      {"bootstrap", toString(run.bootstrap)},
      {"model", {{"width", o.shape.width}, {"batch", o.shape.batch}, {"lr", o.lr}, {"seed", o.seed}}},
      {"iterations", iterations},
      {"measured", {{"mean_ms", t.mean_ms}, {"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms}}},
      {"op_counts",
       {{"rank", run.rank},
        {"setup", counts(run.setup)},
        {"iteration", counts(run.per_iteration)},
        {"total", counts(run.total)}}},
      {"gradients", "verified"},
  };
}

}  // namespace dp_trainer
