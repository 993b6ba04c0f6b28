// Profile parsing and validation: the built-in default equals simgpu/profiles/default.json,
// fields override it one by one, and every bad input names the file and the field.
#include <simgpu/core/profile.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace simgpu {
namespace {

using ::testing::HasSubstr;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string errorOf(const std::string& json) {
  ProfileResult r = parseProfile(json, "test.json");
  EXPECT_FALSE(r.profile) << json;
  return r.error;
}

TEST(Profile, BuiltInDefaultIsTheShippedDefaultJson) {
  const std::string path = std::string(SYNCOPATE_SOURCE_DIR) + "/simgpu/profiles/default.json";
  EXPECT_EQ(builtinProfileJson(), readFile(path));
  ProfileResult shipped = loadProfileFile(path);
  ASSERT_TRUE(shipped.profile) << shipped.error;
  const Profile& b = builtinProfile();
  const Profile& s = *shipped.profile;
  EXPECT_EQ(b.name, s.name);
  EXPECT_EQ(b.devices_per_process, 1);
  EXPECT_EQ(b.device.sm_count, 132);
  EXPECT_EQ(b.device.memory_bytes, 85899345920u);
  EXPECT_DOUBLE_EQ(b.device.flops, 4.0e14);
  EXPECT_EQ(b.device.launch_latency_ns, 3000);
  EXPECT_EQ(b.device.compute_capability_major, 9);
  EXPECT_DOUBLE_EQ(b.copy.h2d_bandwidth, 2.5e10);
  EXPECT_EQ(b.links.inter_host.latency_ns, 20000);
  EXPECT_EQ(b.collectives.algorithm, "ring");
  EXPECT_DOUBLE_EQ(b.interference.communication_slowdown, 0.15);
  EXPECT_EQ(b.default_kernel_ns, 5000);
}

TEST(Profile, FieldsOverrideTheDefaultOneByOne) {
  ProfileResult r = parseProfile(R"({"devices_per_process": 4, "device": {"flops": 1e15},
    "kernels": [{"name": "linear_fwd", "flops": {"coef": 2.0, "params": [6, 7, 8]},
                 "bytes": {"params": [6, 8]}, "efficiency": 0.7}]})",
                                 "mine.json");
  ASSERT_TRUE(r.profile) << r.error;
  const Profile& p = *r.profile;
  EXPECT_EQ(p.source, "mine.json");
  EXPECT_EQ(p.devices_per_process, 4);
  EXPECT_DOUBLE_EQ(p.device.flops, 1e15);
  EXPECT_DOUBLE_EQ(p.device.memory_bandwidth, builtinProfile().device.memory_bandwidth);
  const KernelCostSpec* k = p.findKernel("linear_fwd");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->flops);
  EXPECT_EQ(k->flops->params, (std::vector<int>{6, 7, 8}));
  EXPECT_DOUBLE_EQ(k->bytes->coef, 1.0);
  EXPECT_DOUBLE_EQ(k->efficiency, 0.7);
  EXPECT_EQ(p.findKernel("other"), nullptr);
}

TEST(Profile, BadInputsNameTheFileAndTheField) {
  EXPECT_THAT(errorOf("{"), HasSubstr("profile test.json: not valid JSON"));
  EXPECT_THAT(errorOf("[]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(errorOf(R"({"copy": {"h2d_bandwidth": -1}})"),
              HasSubstr("field \"copy.h2d_bandwidth\" must be a positive number, got -1"));
  EXPECT_THAT(errorOf(R"({"device": {"flops": "fast"}})"),
              HasSubstr("field \"device.flops\" must be a number, got \"fast\""));
  EXPECT_THAT(errorOf(R"({"devices_per_process": 0})"), HasSubstr("field \"devices_per_process\""));
  EXPECT_THAT(errorOf(R"({"devices_per_process": 2.5})"), HasSubstr("must be an integer"));
  EXPECT_THAT(errorOf(R"({"device": {"launch_latency_ns": -5}})"),
              HasSubstr("field \"device.launch_latency_ns\""));
  EXPECT_THAT(errorOf(R"({"links": {"intra_host": {"bandwidth": 0}}})"),
              HasSubstr("field \"links.intra_host.bandwidth\""));
  EXPECT_THAT(errorOf(R"({"collectives": {"algorithm": "butterfly"}})"),
              HasSubstr("field \"collectives.algorithm\" must be \"ring\" or \"tree\""));
  EXPECT_THAT(errorOf(R"({"interference": {"compute_slowdown": -0.1}})"),
              HasSubstr("field \"interference.compute_slowdown\" must not be negative"));
  EXPECT_THAT(errorOf(R"({"devise": {}})"), HasSubstr("field \"devise\" is not a profile field"));
  EXPECT_THAT(errorOf(R"({"device": {"compute_capability": [9]}})"),
              HasSubstr("field \"device.compute_capability\""));
  EXPECT_THAT(errorOf(R"({"kernels": {}})"), HasSubstr("field \"kernels\" must be an array"));
  EXPECT_THAT(errorOf(R"({"kernels": [{"flops": {"params": [1]}}]})"),
              HasSubstr("field \"kernels[0].name\" is required"));
  EXPECT_THAT(errorOf(R"({"kernels": [{"name": "k", "flops": {"params": [-1]}}]})"),
              HasSubstr("field \"kernels[0].flops.params[0]\""));
  EXPECT_THAT(errorOf(R"({"kernels": [{"name": "k", "flops": {"coef": 1}}]})"),
              HasSubstr("field \"kernels[0].flops.params\" is required"));
  EXPECT_THAT(errorOf(R"({"kernels": [{"name": "k", "efficiency": 1.5}]})"),
              HasSubstr("field \"kernels[0].efficiency\" must be at most 1"));
  EXPECT_THAT(errorOf(R"({"kernels": [{"name": "k"}, {"name": "k"}]})"),
              HasSubstr("field \"kernels[1].name\" \"k\" appears twice"));
}

TEST(Profile, ChannelsAreOptionalAndValidated) {
  EXPECT_FALSE(builtinProfile().channels);
  ProfileResult r = parseProfile(R"({"channels": {"default": 16, "max": 32, "per_channel_bandwidth": 12.5e9}})", "c.json");
  ASSERT_TRUE(r.profile) << r.error;
  ASSERT_TRUE(r.profile->channels);
  EXPECT_EQ(r.profile->channels->default_count, 16);
  EXPECT_EQ(r.profile->channels->max_count, 32);
  EXPECT_DOUBLE_EQ(r.profile->channels->per_channel_bandwidth, 12.5e9);
  EXPECT_THAT(errorOf(R"({"channels": {"default": 0, "max": 4, "per_channel_bandwidth": 1e9}})"),
              HasSubstr("field \"channels.default\" must be between 1"));
  EXPECT_THAT(errorOf(R"({"channels": {"default": 8, "max": 4, "per_channel_bandwidth": 1e9}})"),
              HasSubstr("field \"channels.max\" must be at least channels.default (8), got 4"));
  EXPECT_THAT(errorOf(R"({"channels": {"default": 8, "max": 8, "per_channel_bandwidth": 0}})"),
              HasSubstr("field \"channels.per_channel_bandwidth\" must be a positive number"));
  EXPECT_THAT(errorOf(R"({"channels": {"default": 8, "max": 8}})"),
              HasSubstr("field \"channels.per_channel_bandwidth\" is required"));
  EXPECT_THAT(errorOf(R"({"channels": {"default": 8, "max": 8, "per_channel_bandwidth": 1e9, "min": 1}})"),
              HasSubstr("field \"channels.min\" is not a profile field"));
}

TEST(Profile, MissingFileIsReported) {
  ProfileResult r = loadProfileFile("/nonexistent/simgpu.json");
  EXPECT_FALSE(r.profile);
  EXPECT_THAT(r.error, HasSubstr("profile /nonexistent/simgpu.json: cannot open the file"));
}

}  // namespace
}  // namespace simgpu
