// This machine's name, as the run's metadata and the attach protocol record it.
#pragma once

#include <unistd.h>

#include <string>

namespace syncopate::collector {

inline std::string hostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace syncopate::collector
