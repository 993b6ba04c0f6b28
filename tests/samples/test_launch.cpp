#include "trainer_runs.hpp"

#include "sample_common/id_exchange.hpp"
#include "sample_common/launch_env.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>

namespace sample_common {
namespace {

using namespace std::chrono_literals;
using sample_testing::freePort;

std::vector<std::byte> someId() {
  std::vector<std::byte> id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::byte>(i * 7 + 3);
  return id;
}

TEST(IdExchange, EveryRankGetsRankZerosId) {
  const int port = freePort();
  const std::vector<std::byte> id = someId();
  auto server = std::async(std::launch::async, [&] { serveUniqueId(port, 4, id, 10s); });
  std::vector<std::future<std::vector<std::byte>>> clients;
  for (int rank = 1; rank < 4; ++rank) {
    clients.push_back(std::async(std::launch::async,
                                 [=] { return fetchUniqueId("127.0.0.1", port, rank, 4, 128, 10s); }));
  }
  for (auto& client : clients) EXPECT_EQ(client.get(), id);
  server.get();
}

TEST(IdExchange, AClientWithAnotherWorldSizeIsRefusedAndTheServerTimesOut) {
  const int port = freePort();
  const std::vector<std::byte> id = someId();
  auto server = std::async(std::launch::async, [&] { serveUniqueId(port, 2, id, 1500ms); });
  try {
    fetchUniqueId("localhost", port, 1, 3, 128, 1500ms);
    FAIL() << "a client of another world size was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("WORLD_SIZE differs"), std::string::npos) << e.what();
  }
  try {
    server.get();
    FAIL() << "the server did not time out";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("waiting for ranks 1"), std::string::npos) << what;
    EXPECT_NE(what.find("refused RANK=1 WORLD_SIZE=3"), std::string::npos) << what;
  }
}

TEST(IdExchange, AClientWithoutAServerTimesOut) {
  const int port = freePort();
  try {
    fetchUniqueId("127.0.0.1", port, 1, 2, 128, 300ms);
    FAIL() << "connected to nobody";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

TEST(IdExchange, AnUnresolvableAddressIsAnError) {
  EXPECT_THROW(fetchUniqueId("no-such-host.invalid", 29500, 1, 2, 128, 300ms), std::runtime_error);
}

EnvLookup lookup(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnv, BootstrapFromTheEnvironment) {
  EXPECT_EQ(resolveBootstrap(BootstrapKind::Auto, lookup({{"OMPI_COMM_WORLD_SIZE", "4"}, {"RANK", "0"}})),
            BootstrapKind::Mpi);
  EXPECT_EQ(resolveBootstrap(BootstrapKind::Auto, lookup({{"PMIX_RANK", "0"}})), BootstrapKind::Mpi);
  EXPECT_EQ(resolveBootstrap(BootstrapKind::Auto, lookup({{"RANK", "1"}, {"WORLD_SIZE", "2"}})), BootstrapKind::Env);
  EXPECT_EQ(resolveBootstrap(BootstrapKind::Auto, lookup({{"RANK", "1"}})), BootstrapKind::Single);
  EXPECT_EQ(resolveBootstrap(BootstrapKind::Single, lookup({{"OMPI_COMM_WORLD_SIZE", "4"}})), BootstrapKind::Single);
}

TEST(LaunchEnv, BootstrapNames) {
  for (const BootstrapKind kind : {BootstrapKind::Auto, BootstrapKind::Mpi, BootstrapKind::Env, BootstrapKind::Single}) {
    EXPECT_EQ(parseBootstrapKind(toString(kind)), kind);
  }
  EXPECT_EQ(parseBootstrapKind("slurm"), std::nullopt);
  EXPECT_EQ(parseBootstrapKind(""), std::nullopt);
}

TEST(LaunchEnv, ReadsTheTorchrunVariables) {
  const EnvLaunch l = readEnvLaunch(lookup({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                            {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.master_addr, "node0");
  EXPECT_EQ(l.exchange_port, 29500);
  const EnvLaunch agent = readEnvLaunch(lookup({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"},
                                                {"MASTER_PORT", "29500"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  EXPECT_EQ(agent.exchange_port, 29501);
  EXPECT_EQ(agent.local_rank, 0);  // LOCAL_RANK unset: RANK
  EXPECT_EQ(readEnvLaunch(lookup({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).world_size, 1);
}

void expectEnvError(std::map<std::string, std::string> vars, const std::string& mentions) {
  try {
    readEnvLaunch(lookup(std::move(vars)));
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
  }
}

TEST(LaunchEnv, ErrorsNameTheVariable) {
  expectEnvError({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}, "RANK='2'");
  expectEnvError({{"RANK", "x"}, {"WORLD_SIZE", "2"}}, "RANK='x'");
  expectEnvError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}, "MASTER_ADDR");
  expectEnvError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}, "MASTER_PORT");
  expectEnvError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}},
                 "MASTER_PORT='70000'");
  expectEnvError({{"RANK", "0"}}, "WORLD_SIZE");
}

}  // namespace
}  // namespace sample_common
