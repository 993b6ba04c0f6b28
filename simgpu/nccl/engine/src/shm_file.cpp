#include "simgpu/nccl/shm_file.hpp"

#include "simgpu/nccl/futex.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace simgpu::nccl {
namespace {

std::string systemError(const std::string& what, const std::string& name, int err) {
  return what + " " + name + ": " + std::strerror(err);
}

Status mapFd(int fd, std::size_t size, const std::string& name, void** data) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return Status::error(ncclSystemError, systemError("cannot map shared memory", name, errno));
  *data = p;
  return Status::success();
}

}  // namespace

ShmFile::ShmFile(ShmFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      created_(other.created_) {}

ShmFile& ShmFile::operator=(ShmFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    created_ = other.created_;
  }
  return *this;
}

ShmFile::~ShmFile() {
  if (data_ != nullptr) munmap(data_, size_);
}

Status ShmFile::createOrOpen(const std::string& name, std::size_t size, std::int64_t deadline_ns,
                             ShmFile* out) {
  for (;;) {
    int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        const int err = errno;
        close(fd);
        shm_unlink(name.c_str());
        return Status::error(ncclSystemError, systemError("cannot size shared memory", name, err));
      }
      if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(size)); err != 0) {
        close(fd);
        shm_unlink(name.c_str());
        return Status::error(ncclSystemError,
                             systemError("cannot reserve " + std::to_string(size >> 20) +
                                             " MiB of shared memory (is /dev/shm large enough?) for",
                                         name, err));
      }
      Status st = mapFd(fd, size, name, &out->data_);
      close(fd);
      if (!st.ok()) {
        shm_unlink(name.c_str());
        return st;
      }
      out->size_ = size;
      out->created_ = true;
      return st;
    }
    if (errno != EEXIST) return Status::error(ncclSystemError, systemError("cannot create shared memory", name, errno));

    fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // unlinked between our two calls: try to create it again
      return Status::error(ncclSystemError, systemError("cannot open shared memory", name, errno));
    }
    // The creator sizes the object right after creating it.
    struct stat st {};
    while (fstat(fd, &st) == 0 && st.st_size == 0 && monotonicNowNs() < deadline_ns) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (st.st_size == 0) {
      close(fd);
      return Status::error(ncclRemoteError, "the rank that created " + name + " never sized it");
    }
    Status mapped = mapFd(fd, static_cast<std::size_t>(st.st_size), name, &out->data_);
    close(fd);
    if (!mapped.ok()) return mapped;
    out->size_ = static_cast<std::size_t>(st.st_size);
    out->created_ = false;
    return mapped;
  }
}

Status ShmFile::openExisting(const std::string& name, ShmFile* out) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return Status::error(ncclSystemError, systemError("cannot open shared memory", name, errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size == 0) {
    close(fd);
    return Status::error(ncclSystemError, "shared memory " + name + " is empty");
  }
  Status mapped = mapFd(fd, static_cast<std::size_t>(st.st_size), name, &out->data_);
  close(fd);
  if (mapped.ok()) out->size_ = static_cast<std::size_t>(st.st_size);
  return mapped;
}

void ShmFile::unlink(const std::string& name) { shm_unlink(name.c_str()); }

}  // namespace simgpu::nccl
