// The environment of a recorded job and the checks on its run directory.
#include <gtest/gtest.h>

#include <fstream>

#include "support/child_process.hpp"
#include "syncopate/collector/record.hpp"

namespace collector_test {
namespace {

namespace collector = syncopate::collector;

collector::RecordOptions options(const std::filesystem::path& dir) {
  collector::RecordOptions o;
  o.output_dir = dir;
  o.backend = "events";
  o.armed = true;
  o.iteration_marker = "step";
  o.preload_library = "/opt/syncopate/lib/libsyncopate_preload.so";
  return o;
}

TEST(RecordEnvironment, LoadsTheCollectorIntoEveryProcessOfTheJob) {
  std::vector<std::string> warnings;
  auto env = collector::recordEnvironment(options("out"), {{"LD_PRELOAD", "/usr/lib/libother.so"}}, warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(env.at("LD_PRELOAD"), "/opt/syncopate/lib/libsyncopate_preload.so:/usr/lib/libother.so");
  EXPECT_EQ(env.at("NVTX_INJECTION64_PATH"), "/opt/syncopate/lib/libsyncopate_preload.so");
  EXPECT_EQ(env.at("SYNCOPATE_OUTPUT_DIR"), std::filesystem::absolute("out").lexically_normal().string());
  EXPECT_EQ(env.at("SYNCOPATE_BACKEND"), "events");
  EXPECT_EQ(env.at("SYNCOPATE_ARMED"), "1");
  EXPECT_EQ(env.at("SYNCOPATE_ITERATION_MARKER"), "step");
  // Open MPI's forwarding list is only extended when the job already uses it (-x otherwise).
  EXPECT_EQ(env.count("OMPI_MCA_mca_base_env_list"), 0u);
  env = collector::recordEnvironment(options("out"), {{"OMPI_MCA_mca_base_env_list", "FOO;BAR=1"}}, warnings);
  const std::string& forwarded = env.at("OMPI_MCA_mca_base_env_list");
  EXPECT_TRUE(forwarded.ends_with(";FOO;BAR=1"));
  for (const char* name : {"LD_PRELOAD", "NVTX_INJECTION64_PATH", "SYNCOPATE_OUTPUT_DIR", "SYNCOPATE_BACKEND"}) {
    EXPECT_NE(forwarded.find(name), std::string::npos) << name;
  }
}

TEST(RecordEnvironment, OpenMpisMpirunForwardsTheVariablesToRemoteRanks) {
  const collector::Environment changes{{"LD_PRELOAD", "x"}, {"SYNCOPATE_OUTPUT_DIR", "y"}};
  auto command = collector::launcherCommand({COLLECTOR_TEST_MPIEXEC, "-np", "4", "-x", "FOO", "prog"}, changes, {});
  EXPECT_EQ(command, (std::vector<std::string>{COLLECTOR_TEST_MPIEXEC, "-x", "LD_PRELOAD", "-x", "SYNCOPATE_OUTPUT_DIR",
                                               "-np", "4", "-x", "FOO", "prog"}));
  // Jobs forwarding through Open MPI's list keep to it; other programs are left alone.
  EXPECT_EQ(collector::launcherCommand({COLLECTOR_TEST_MPIEXEC, "prog"}, changes, {{"OMPI_MCA_mca_base_env_list", "A"}}),
            (std::vector<std::string>{COLLECTOR_TEST_MPIEXEC, "prog"}));
  EXPECT_EQ(collector::launcherCommand({"torchrun", "--nproc-per-node", "4", "train.py"}, changes, {}),
            (std::vector<std::string>{"torchrun", "--nproc-per-node", "4", "train.py"}));
}

TEST(RecordEnvironment, LeavesAnotherToolsNvtxInjectionAlone) {
  std::vector<std::string> warnings;
  auto env = collector::recordEnvironment(options("out"), {{"NVTX_INJECTION64_PATH", "/opt/nsys/libinject.so"}}, warnings);
  EXPECT_EQ(env.count("NVTX_INJECTION64_PATH"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find("/opt/nsys/libinject.so"), std::string::npos);
}

// NCCL loads its profiler plugin from NCCL_PROFILER_PLUGIN: the collector, unless the job chose
// its own (left alone, said once) or the recording was asked not to (--no-nccl-profiler).
TEST(RecordEnvironment, MakesTheCollectorNcclsProfilerPluginUnlessTheJobChoseOne) {
  std::vector<std::string> warnings;
  auto env = collector::recordEnvironment(options("out"), {}, warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(env.at("NCCL_PROFILER_PLUGIN"), "/opt/syncopate/lib/libsyncopate_preload.so");
  EXPECT_EQ(collector::ncclProfilerRequest(options("out"), {}), "collector");

  env = collector::recordEnvironment(options("out"), {{"NCCL_PROFILER_PLUGIN", "inspector"}}, warnings);
  EXPECT_EQ(env.count("NCCL_PROFILER_PLUGIN"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find("NCCL_PROFILER_PLUGIN already names inspector"), std::string::npos) << warnings.front();
  EXPECT_EQ(collector::ncclProfilerRequest(options("out"), {{"NCCL_PROFILER_PLUGIN", "inspector"}}),
            "left to the job: inspector");

  warnings.clear();
  collector::RecordOptions off = options("out");
  off.nccl_profiler = false;
  env = collector::recordEnvironment(off, {{"NCCL_PROFILER_PLUGIN", "inspector"}}, warnings);
  EXPECT_EQ(env.count("NCCL_PROFILER_PLUGIN"), 0u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(collector::ncclProfilerRequest(off, {}), "off");
}

// NCCL loads its tuner plugin from NCCL_TUNER_PLUGIN: the same library (it records NCCL's
// per-channel bandwidth and applies a plan's channel counts), unless the job chose its own.
TEST(RecordEnvironment, MakesThePreloadLibraryNcclsTunerPluginUnlessTheJobChoseOne) {
  std::vector<std::string> warnings;
  auto env = collector::recordEnvironment(options("out"), {}, warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(env.at("NCCL_TUNER_PLUGIN"), "/opt/syncopate/lib/libsyncopate_preload.so");

  env = collector::recordEnvironment(options("out"), {{"NCCL_TUNER_PLUGIN", "ofi"}}, warnings);
  EXPECT_EQ(env.count("NCCL_TUNER_PLUGIN"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find("NCCL_TUNER_PLUGIN already names ofi"), std::string::npos) << warnings.front();
  EXPECT_NE(warnings.front().find("channel counts are not applied"), std::string::npos) << warnings.front();
}

TEST(RunDirectory, IsCreatedAndARecordingIsNeverMixedWithAnother) {
  TempDir dir;
  const auto run_dir = dir.path() / "a" / "b";
  EXPECT_TRUE(collector::prepareRunDirectory(run_dir).ok());
  EXPECT_TRUE(std::filesystem::is_directory(run_dir));
  std::ofstream(run_dir / "rank-0.sqlite") << "x";
  auto refused = collector::prepareRunDirectory(run_dir);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("already holds a recording"), std::string::npos) << refused.message();
  auto not_a_dir = collector::prepareRunDirectory(run_dir / "rank-0.sqlite");
  EXPECT_FALSE(not_a_dir.ok());
}

// A symbolic link planted in a run directory, under any name `record` writes (the job's output
// copy, meta.json's temporary, the lock), never makes it write, create or truncate a file
// elsewhere: each is refused, or bypassed, and the file it points at is untouched.
TEST(RunDirectory, APlantedSymbolicLinkIsNeverWrittenThrough) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  ASSERT_TRUE(collector::prepareRunDirectory(run_dir).ok());
  const auto precious = dir.path() / "precious.txt";
  std::ofstream(precious) << "keep me";
  const auto nowhere = dir.path() / "created-elsewhere";
  std::filesystem::create_symlink(precious, run_dir / "job.log");
  std::filesystem::create_symlink(precious, run_dir / "meta.json.tmp");
  std::filesystem::create_symlink(nowhere, run_dir / ".meta.lock");

  auto copied = collector::runCommand({"/bin/sh", "-c", "echo output"}, {}, run_dir / "job.log", false);
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.message().find("it is a symbolic link"), std::string::npos) << copied.message();

  collector::RecordOptions options;
  options.output_dir = run_dir;
  options.command = {"/bin/true"};
  const auto meta = collector::writeStartMeta(options, 1'700'000'000'000'000'000);
  ASSERT_FALSE(meta.ok());
  EXPECT_NE(meta.message().find("it is a symbolic link"), std::string::npos) << meta.message();

  std::ifstream in(precious);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
  EXPECT_FALSE(std::filesystem::exists(nowhere));
  EXPECT_FALSE(std::filesystem::exists(run_dir / "meta.json"));
}

TEST(RunCommand, ReportsExitCodesSignalsAndMissingPrograms) {
  auto ok = collector::runCommand({"/bin/sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), 3);
  auto killed = collector::runCommand({"/bin/sh", "-c", "kill -9 $$"}, {});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed.value(), 128 + 9);
  auto env = collector::runCommand({"/bin/sh", "-c", "test \"$SYNCOPATE_TEST_VALUE\" = 42"}, {{"SYNCOPATE_TEST_VALUE", "42"}});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env.value(), 0);
  auto missing = collector::runCommand({"/nonexistent/program"}, {});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot run /nonexistent/program"), std::string::npos);
}

}  // namespace
}  // namespace collector_test
