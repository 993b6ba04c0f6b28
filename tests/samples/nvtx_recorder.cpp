// A minimal NVTX injection library for dp_trainer's end-to-end test: loaded by NVTX through
// NVTX_INJECTION64_PATH, it records every push/pop range of the default domain and writes
// them, one per line ("push <name>" or "pop"), to the file named by NVTX_RECORDER_OUT when
// the program exits normally. It checks the trainer's markers (ProfilerStep#N and phases)
// without the collector.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Recording {
  std::mutex mutex;
  std::vector<std::string> lines;

  ~Recording() {
    const char* path = std::getenv("NVTX_RECORDER_OUT");
    if (path == nullptr) return;
    if (std::FILE* out = std::fopen(path, "w")) {
      for (const std::string& line : lines) std::fprintf(out, "%s\n", line.c_str());
      std::fclose(out);
    }
  }
};

Recording& recording() {
  static Recording r;
  return r;
}

void record(std::string line) {
  Recording& r = recording();
  std::lock_guard lock(r.mutex);
  r.lines.push_back(std::move(line));
}

int NVTX_API pushA(const char* message) {
  record(std::string("push ") + (message != nullptr ? message : ""));
  return 0;
}

int NVTX_API pushEx(const nvtxEventAttributes_t* attributes) {
  const bool ascii = attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII;
  record(std::string("push ") + (ascii ? attributes->message.ascii : "(non-ASCII)"));
  return 0;
}

int NVTX_API pop() {
  record("pop");
  return 0;
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 || table == nullptr) return 0;
  if (size <= NVTX_CBID_CORE_RangePop) return 0;
  recording();  // constructed before the program's first range, destroyed after its last
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&pushA);
  *table[NVTX_CBID_CORE_RangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&pushEx);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}
