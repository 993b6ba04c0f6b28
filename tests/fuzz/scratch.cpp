#include "scratch.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace syncopate::fuzz {

namespace {

class ScratchFolder {
 public:
  ScratchFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/syncopate-fuzz-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    // A harness that cannot make its folder has nothing to fuzz: stop with the reason.
    if (!mkdtemp(name.data())) throw std::runtime_error("cannot create a scratch folder from " + pattern);
    path_ = name.data();
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

  void empty() {
    for (const auto& entry : std::filesystem::directory_iterator(path_)) std::filesystem::remove_all(entry.path());
  }

 private:
  std::filesystem::path path_;
};

ScratchFolder& folder() {
  static ScratchFolder scratch;
  return scratch;
}

}  // namespace

const std::filesystem::path& scratchDirectory() { return folder().path(); }

std::filesystem::path freshScratchFile(std::string_view name, Input input) {
  folder().empty();
  const std::filesystem::path file = folder().path() / name;
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
  if (!out.flush()) throw std::runtime_error("cannot write the input to " + file.string());
  return file;
}

}  // namespace syncopate::fuzz
