#include "syncopate/trace/json_text.hpp"
#include "syncopate/tuner/plan.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncopate/trace/hash.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::tuner {

namespace {

using nlohmann::json;

std::string hex(std::uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

json knobsJson(const Knobs& k) {
  return {{"communication_stream", k.communication_stream},
          {"bucket_bytes", k.bucket_bytes},
          {"order", toString(k.order)},
          {"priority_tail", k.priority_tail},
          {"split_bytes", k.split_bytes},
          {"per_bucket_waits", k.per_bucket_waits},
          {"delayed", k.delayed},
          {"keep_comms", k.keep_comms}};
}

namespace {

json toJson(const Plan& p) {
  json j;
  j["format"] = kPlanFormat;
  j["version"] = fmt::format("{}.{}", kPlanMajor, kPlanMinor);
  j["created_by"] = p.created_by;
  j["source"] = {{"run", p.source_run}, {"ranks", p.ranks}, {"predicted_iterations", p.predicted_iterations}};
  j["knobs"] = knobsJson(p.knobs);
  j["description"] = describe(p.knobs);
  j["changes_training_mathematics"] = p.changesTrainingMathematics();
  const PlanPrediction& q = p.prediction;
  j["prediction"] = {{"baseline_measured_ms", q.baseline_measured_ms},
                     {"baseline_replay_ms", q.baseline_replay_ms},
                     {"replay_error", q.replay_error},
                     {"iteration_ms", q.iteration_ms},
                     {"speedup", q.speedup},
                     {"ideal_ms", q.ideal_ms},
                     {"compute_ms", q.compute_ms},
                     {"communication_ms", q.communication_ms}};
  j["why"] = p.why;
  j["model"] = {{"compute_slowdown", p.compute_slowdown},
                {"communication_slowdown", p.communication_slowdown},
                {"interference_measured", p.interference_measured}};
  json groups = json::array();
  for (const GroupPlan& g : p.groups) {
    json order = json::array();
    for (const UnitRef& u : g.order) order.push_back({u.bucket, u.part});
    json group = {{"signature", hex(g.signature)},
                  {"members", g.members},
                  {"bucket_first", g.bucket_first},
                  {"parts", g.parts},
                  {"order", order}};
    if (g.keep) group["keep"] = true;
    groups.push_back(std::move(group));
  }
  j["groups"] = groups;
  json channels = json::array();
  for (const ChannelRule& rule : p.channels) {
    channels.push_back({{"collective", trace::toString(rule.collective)},
                        {"min_bytes", rule.min_bytes},
                        {"max_bytes", rule.max_bytes},
                        {"channels", rule.channels}});
  }
  j["channels"] = channels;
  return j;
}


std::uint64_t checksumOf(const json& without_checksum) { return trace::fnv1a(trace::jsonText(without_checksum)); }

// Reads field `key` of `j` as T, with a sentence naming the field when it is missing or wrong.
template <class T>
T field(const json& j, const char* key, const char* where) {
  if (!j.contains(key)) throw std::runtime_error(fmt::format("{} has no \"{}\"", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(fmt::format("\"{}\" in {} has the wrong type", key, where));
  }
}

// A channel rule of the plan, checked: a collective whose channels NCCL's tuner interface sets,
// sizes in order, a count NCCL can take (it caps counts at its channels, 64 at most).
ChannelRule channelRule(const json& c) {
  ChannelRule rule;
  const std::string name = field<std::string>(c, "collective", "a channel rule");
  bool named = false;
  for (trace::CollType t : {trace::CollType::AllReduce, trace::CollType::AllGather, trace::CollType::ReduceScatter,
                            trace::CollType::Broadcast, trace::CollType::Reduce}) {
    if (trace::toString(t) == name) {
      rule.collective = t;
      named = true;
    }
  }
  if (!named) {
    throw std::runtime_error(fmt::format("a channel rule names \"{}\"; NCCL's tuner interface sets the channels of "
                                         "AllReduce, AllGather, ReduceScatter, Broadcast and Reduce only",
                                         name));
  }
  rule.min_bytes = field<std::uint64_t>(c, "min_bytes", "a channel rule");
  rule.max_bytes = field<std::uint64_t>(c, "max_bytes", "a channel rule");
  rule.channels = field<std::uint32_t>(c, "channels", "a channel rule");
  if (rule.min_bytes > rule.max_bytes) throw std::runtime_error("a channel rule's min_bytes is above its max_bytes");
  if (rule.channels < 1 || rule.channels > kMaxNcclChannels) {
    throw std::runtime_error(fmt::format("a channel rule asks for {} channels; NCCL takes 1 to {}", rule.channels,
                                         kMaxNcclChannels));
  }
  return rule;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> knobSettings(const Knobs& knobs) {
  std::vector<std::pair<std::string, std::string>> out;
  const json settings = knobsJson(knobs);
  for (const auto& [name, value] : settings.items()) {
    out.emplace_back(name, value.is_boolean() ? (value.get<bool>() ? "yes" : "no")
                           : value.is_string() ? value.get<std::string>()
                                               : trace::jsonText(value));
  }
  return out;
}

ScheduleRules Plan::rules() const {
  ScheduleRules r;
  r.communication_stream = knobs.communication_stream;
  r.per_bucket_waits = knobs.per_bucket_waits;
  r.plan_checksum = checksum;
  r.groups = groups;
  std::sort(r.groups.begin(), r.groups.end(), [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  return r;
}

std::string planJson(Plan& plan) {
  json j = toJson(plan);
  plan.checksum = checksumOf(j);
  j["checksum"] = "fnv1a64:" + hex(plan.checksum);
  return trace::jsonText(j, 2) + "\n";
}

trace::Result<Plan> parsePlan(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return trace::failure(fmt::format("the plan is not valid JSON ({}); make it again with `syncopate tune`", e.what()));
  }
  try {
    if (!j.is_object() || !j.contains("format") || j.at("format") != kPlanFormat) {
      return trace::failure("this is not a Syncopate plan (its \"format\" is not \"syncopate-plan\")");
    }
    int major = 0, minor = 0;
    const json* version_field = j.contains("version") ? &j.at("version") : nullptr;
    const std::string version = version_field != nullptr && version_field->is_string() ? version_field->get<std::string>() : "";
    if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) {
      return trace::failure("the plan has no \"version\" of the form \"MAJOR.MINOR\"; make it again with `syncopate tune`");
    }
    if (major != kPlanMajor) {
      return trace::failure(fmt::format("the plan has version {}, this build reads version {}.x; make it again with "
                                        "this build's `syncopate tune`",
                                        version, kPlanMajor));
    }
    const std::string sum = field<std::string>(j, "checksum", "the plan");
    json body = j;
    body.erase("checksum");
    const std::uint64_t actual = checksumOf(body);
    if (sum != "fnv1a64:" + hex(actual)) {
      return trace::failure("the plan's checksum does not match its content (it was edited or damaged); make it "
                            "again with `syncopate tune`");
    }
    Plan p;
    p.version = version;
    p.checksum = actual;
    p.created_by = field<std::string>(j, "created_by", "the plan");
    const json& src = j.at("source");
    p.source_run = field<std::string>(src, "run", "\"source\"");
    p.ranks = field<std::int32_t>(src, "ranks", "\"source\"");
    p.predicted_iterations = field<std::vector<std::int64_t>>(src, "predicted_iterations", "\"source\"");
    const json& k = j.at("knobs");
    p.knobs.communication_stream = field<bool>(k, "communication_stream", "\"knobs\"");
    p.knobs.bucket_bytes = field<std::uint64_t>(k, "bucket_bytes", "\"knobs\"");
    const std::string order = field<std::string>(k, "order", "\"knobs\"");
    const std::optional<Order> named = orderNamed(order);
    // "need" came with version 1.1: a 1.0 plan names one of the others.
    if (!named || (minor < 1 && *named == Order::Need)) {
      return trace::failure(minor < 1 ? "the plan's order must be \"ready\" or \"program\""
                                      : "the plan's order must be \"ready\", \"program\" or \"need\"");
    }
    p.knobs.order = *named;
    p.knobs.priority_tail = field<std::uint32_t>(k, "priority_tail", "\"knobs\"");
    p.knobs.split_bytes = field<std::uint64_t>(k, "split_bytes", "\"knobs\"");
    p.knobs.per_bucket_waits = field<bool>(k, "per_bucket_waits", "\"knobs\"");
    p.knobs.delayed = field<bool>(k, "delayed", "\"knobs\"");
    // Version 1.1 added groups kept in place; a 1.0 plan has neither key.
    if (k.contains("keep_comms")) p.knobs.keep_comms = field<std::uint32_t>(k, "keep_comms", "\"knobs\"");
    const json& q = j.at("prediction");
    p.prediction.baseline_measured_ms = field<double>(q, "baseline_measured_ms", "\"prediction\"");
    p.prediction.baseline_replay_ms = field<double>(q, "baseline_replay_ms", "\"prediction\"");
    p.prediction.replay_error = field<double>(q, "replay_error", "\"prediction\"");
    p.prediction.iteration_ms = field<double>(q, "iteration_ms", "\"prediction\"");
    p.prediction.speedup = field<double>(q, "speedup", "\"prediction\"");
    p.prediction.ideal_ms = field<double>(q, "ideal_ms", "\"prediction\"");
    p.prediction.compute_ms = field<double>(q, "compute_ms", "\"prediction\"");
    p.prediction.communication_ms = field<double>(q, "communication_ms", "\"prediction\"");
    p.why = field<std::string>(j, "why", "the plan");
    const json& m = j.at("model");
    p.compute_slowdown = field<double>(m, "compute_slowdown", "\"model\"");
    p.communication_slowdown = field<double>(m, "communication_slowdown", "\"model\"");
    p.interference_measured = field<bool>(m, "interference_measured", "\"model\"");
    for (const json& g : j.at("groups")) {
      GroupPlan gp;
      gp.signature = std::stoull(field<std::string>(g, "signature", "a group"), nullptr, 16);
      gp.members = field<std::uint32_t>(g, "members", "a group");
      gp.bucket_first = field<std::vector<std::uint32_t>>(g, "bucket_first", "a group");
      gp.parts = field<std::vector<std::uint16_t>>(g, "parts", "a group");
      if (g.contains("keep")) gp.keep = field<bool>(g, "keep", "a group");
      for (const json& u : g.at("order")) {
        if (!u.is_array() || u.size() != 2) return trace::failure("a group's order must list [bucket, part] pairs");
        gp.order.push_back({u[0].get<std::uint16_t>(), u[1].get<std::uint16_t>()});
      }
      if (const std::string problem = validateGroupPlan(gp); !problem.empty()) {
        return trace::failure("the plan has a malformed group: " + problem);
      }
      p.groups.push_back(std::move(gp));
    }
    // Version 1.3 added channel counts; an older plan leaves NCCL's choice alone.
    if (j.contains("channels")) {
      for (const json& c : j.at("channels")) p.channels.push_back(channelRule(c));
    }
    return p;
  } catch (const std::exception& e) {
    return trace::failure(fmt::format("the plan is incomplete: {}; make it again with `syncopate tune`", e.what()));
  }
}

trace::Result<Plan> readPlan(const std::filesystem::path& file) {
  std::error_code missing;
  if (!std::filesystem::exists(file, missing)) {
    return trace::failure(fmt::format("cannot read the plan {}: it does not exist; run `syncopate tune DIR` to make one",
                                      file.string()),
                          trace::StatusCode::NotFound);
  }
  std::ifstream in(file);
  if (!in) return trace::failure(fmt::format("cannot read the plan {}: check its permissions", file.string()));
  std::stringstream text;
  text << in.rdbuf();
  auto plan = parsePlan(text.str());
  if (!plan.ok()) return trace::failure(fmt::format("{}: {}", file.string(), plan.message()));
  return plan;
}

trace::Status writePlan(Plan& plan, const std::filesystem::path& file) {
  const std::string text = planJson(plan);
  const std::filesystem::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) {
      return trace::failure(fmt::format("cannot write the plan to {}: check that the directory is writable", file.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return trace::failure(fmt::format("cannot write the plan to {}: {}", file.string(), ec.message()));
  return {};
}

}  // namespace syncopate::tuner
