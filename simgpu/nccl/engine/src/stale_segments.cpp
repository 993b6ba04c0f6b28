#include "simgpu/nccl/stale_segments.hpp"

#include "simgpu/nccl/segment_layout.hpp"
#include "simgpu/nccl/shm_file.hpp"
#include "simgpu/nccl/unique_id.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <vector>

namespace simgpu::nccl {
namespace {

bool alive(std::int32_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

std::int64_t ageNs(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return (static_cast<std::int64_t>(now.tv_sec) - st.st_mtim.tv_sec) * 1'000'000'000 + (now.tv_nsec - st.st_mtim.tv_nsec);
}

// Whether any process that created or joined the segment is still alive.
bool anyOwnerAlive(const ShmFile& file) {
  const auto* header = static_cast<const SegmentHeader*>(file.data());
  if (file.size() < sizeof(SegmentHeader) || header->magic.load() != kSegmentMagic) return false;
  if (alive(header->creator_pid)) return true;
  const SegmentLayout layout(header->geometry);
  if (layout.totalBytes() != file.size()) return false;
  for (std::uint32_t r = 0; r < header->geometry.nranks; ++r) {
    if (alive(layout.rank(file.data(), static_cast<int>(r))->pid.load())) return true;
  }
  return false;
}

}  // namespace

int removeStaleSegments(const std::string& directory, std::int64_t min_age_ns) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kSegmentPrefix, 0) == 0) names.push_back(name);
  }
  int removed = 0;
  for (const std::string& name : names) {
    if (ageNs(directory + "/" + name) < min_age_ns) continue;
    ShmFile file;
    const bool mapped = ShmFile::openExisting("/" + name, &file).ok();
    if (mapped && anyOwnerAlive(file)) continue;
    ShmFile::unlink("/" + name);
    ++removed;
  }
  return removed;
}

}  // namespace simgpu::nccl
