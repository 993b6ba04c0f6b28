#include "nsys_export_writer.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <memory>

namespace syncopate::analyzer::testing {

namespace {

// Nsight's globalTid/globalPid: pid in bits 24..47, tid in bits 0..23.
constexpr std::int64_t global(std::int64_t pid, std::int64_t tid) { return (pid << 24) | tid; }

// Runs `sql`; returns an empty string, or SQLite's message and the statement.
std::string exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return {};
  std::string message = (err ? err : "") + std::string(" in ") + sql;
  sqlite3_free(err);
  return message;
}

}  // namespace

std::string writeNsysExport(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open(file.c_str(), &raw);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  if (opened != SQLITE_OK) return "cannot create " + file.string() + ": " + sqlite3_errstr(opened);
  const std::int64_t t100 = global(100, 101), t200 = global(200, 201);
  const std::string statements[] = {
      R"sql(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT);
    CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, value TEXT);
    CREATE TABLE ThreadNames (nameId INT NOT NULL, priority INT, globalTid INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, eventClass INT NOT NULL,
      globalTid INT, correlationId INT, nameId INT NOT NULL, returnValue INT NOT NULL, callchainId INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, demangledName INT NOT NULL,
      shortName INT NOT NULL, mangledName INT, launchType INT, cacheConfig INT, registersPerThread INT NOT NULL,
      gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL,
      blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, bytes INT NOT NULL,
      copyKind INT NOT NULL, deprecatedSrcId INT, srcKind INT, dstKind INT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
      contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, syncType INT NOT NULL,
      eventId INT NOT NULL);
    CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, rangeId INT, category INT,
      color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT, uint64Value INT);
    INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'ncclAllReduce'), (3, 'gemm_kernel'),
      (4, 'gemm'), (5, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
      (6, 'ncclDevKernel_AllReduce'), (7, 'cudaMemcpyAsync_v3020'), (8, 'cudaStreamSynchronize_v3020'),
      (9, 'main-thread'), (10, 'cuLaunchKernel');
    INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');
    INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES ('Hostname', 'gpu-node-7');
  )sql",
      "INSERT INTO ThreadNames VALUES (9, 0, " + std::to_string(t100) + ")",
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
      "(1000, 2000, 1, " + std::to_string(t100) + ", 11, 1, 0, NULL),"
      "(3000, 4000, 1, " + std::to_string(t100) + ", 12, 2, 0, NULL),"
      "(5000, 9000, 1, " + std::to_string(t100) + ", 13, 7, 0, NULL),"
      "(9500, 20000, 1, " + std::to_string(t100) + ", 14, 8, 0, NULL),"
      "(1000, 1500, 1, " + std::to_string(t200) + ", 21, 10, 0, NULL)",
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
      "(2500, 6000, 0, 1, 7, 11, " + std::to_string(global(100, 0)) + ", 3, 4, NULL, 0, 0, 32, 64,1,1, 256,1,1, 0, 0),"
      "(6000, 19000, 0, 1, 13, 12, " + std::to_string(global(100, 0)) + ", 5, 6, NULL, 0, 0, 32, 8,1,1, 512,1,1, 0, 0),"
      "(2000, 3000, 1, 1, 7, 21, " + std::to_string(global(200, 0)) + ", 3, 4, NULL, 0, 0, 32, 1,1,1, 1,1,1, 0, 0)",
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (6100, 8000, 0, 1, 7, 13, " + std::to_string(global(100, 0)) +
          ", 4096, 2, 0, 0, 0)",
      "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (9600, 19900, 0, 1, 13, 14, " +
          std::to_string(global(100, 0)) + ", 3, 0)",
      "INSERT INTO NVTX_EVENTS VALUES (500, 25000, 59, NULL, NULL, NULL, 'ProfilerStep#1', " + std::to_string(t100) +
          ", NULL, NULL, 0, NULL), (700, 700, 34, NULL, NULL, NULL, 'mark', " + std::to_string(t100) +
          ", NULL, NULL, 0, NULL), (0, NULL, 33, NULL, NULL, NULL, 'a category', " + std::to_string(t100) +
          ", NULL, NULL, 0, NULL)",
  };
  for (const std::string& sql : statements)
    if (std::string error = exec(db.get(), sql); !error.empty()) return error;
  return {};
}

}  // namespace syncopate::analyzer::testing
