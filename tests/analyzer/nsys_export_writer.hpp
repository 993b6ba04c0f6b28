// A small Nsight Systems SQLite export. No real export is stored in the repository, so the
// tests build one with the tables and columns of Nsight's documented export schema (the subset
// the importer reads). tests/fixtures/nsys holds one, written by this function and checked in.
//
// Two processes (pids 100 and 200) on host gpu-node-7. Process 100 launches a kernel and an
// NCCL all-reduce, copies to the host, synchronises, and marks a step with NVTX; process 200
// launches one kernel through the driver.
#pragma once

#include <filesystem>
#include <string>

namespace syncopate::analyzer::testing {

// Writes the export to `file` (which must not exist). Returns an empty string, or why it failed.
std::string writeNsysExport(const std::filesystem::path& file);

}  // namespace syncopate::analyzer::testing
