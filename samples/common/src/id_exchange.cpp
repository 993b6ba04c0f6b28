#include "sample_common/id_exchange.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

namespace sample_common {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::array<char, 4> kMagic{'D', 'P', 'T', '1'};

// What rank 0 answers a client.
enum class Reply : std::uint8_t { Ok = 0, WrongWorldSize = 1, RankOutOfRange = 2, DuplicateRank = 3 };

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string systemError(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

int remainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits until fd is ready for `events`; false on timeout.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, remainingMs(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw std::runtime_error(systemError("poll"));
  }
}

void sendAll(int fd, const void* data, std::size_t size, Clock::time_point deadline) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    if (!waitFor(fd, POLLOUT, deadline)) throw std::runtime_error("timed out sending to a peer");
    const ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::runtime_error(systemError("send"));
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

void receiveAll(int fd, void* data, std::size_t size, Clock::time_point deadline) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    if (!waitFor(fd, POLLIN, deadline)) throw std::runtime_error("timed out waiting for a peer's message");
    const ssize_t n = ::recv(fd, bytes, size, 0);
    if (n == 0) throw std::runtime_error("the peer closed the connection early");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::runtime_error(systemError("recv"));
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

struct Hello {
  std::array<char, 4> magic;
  std::uint32_t rank;        // network byte order
  std::uint32_t world_size;  // network byte order
};

Socket listenOn(int port) {
  // Dual-stack where IPv6 exists (MASTER_ADDR may be either family), IPv4 otherwise.
  Socket s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1, zero = 0;
  if (s.fd() >= 0) {
    ::setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_any;
    addr.sin6_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error(fmt::format("rank 0 cannot listen on MASTER_PORT {}: {}", port, std::strerror(errno)));
    }
  } else {
    s = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd() < 0) throw std::runtime_error(systemError("socket"));
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error(fmt::format("rank 0 cannot listen on MASTER_PORT {}: {}", port, std::strerror(errno)));
    }
  }
  if (::listen(s.fd(), 128) != 0) throw std::runtime_error(systemError("listen"));
  return s;
}

// One connection attempt to any address of `host`; an invalid socket if nobody listens yet.
Socket tryConnect(const std::string& host, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(fmt::format("cannot resolve MASTER_ADDR '{}': {}", host, ::gai_strerror(rc)));
  }
  Socket connected;
  for (addrinfo* ai = found; ai != nullptr && connected.fd() < 0; ai = ai->ai_next) {
    Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (s.fd() < 0) continue;
    if (::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0) {
      connected = std::move(s);
    } else if (errno == EINPROGRESS && waitFor(s.fd(), POLLOUT, deadline)) {
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error == 0) connected = std::move(s);
    }
  }
  ::freeaddrinfo(found);
  return connected;
}

const char* describe(Reply reply) {
  switch (reply) {
    case Reply::Ok: return "accepted";
    case Reply::WrongWorldSize: return "its WORLD_SIZE differs from rank 0's";
    case Reply::RankOutOfRange: return "its RANK is outside 1..WORLD_SIZE-1";
    case Reply::DuplicateRank: return "another process already joined with the same RANK";
  }
  return "unknown reply";
}

}  // namespace

void serveUniqueId(int port, int world_size, std::span<const std::byte> id, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  Socket listener = listenOn(port);
  std::set<int> joined;
  std::string refusals;
  while (static_cast<int>(joined.size()) < world_size - 1) {
    if (!waitFor(listener.fd(), POLLIN, deadline)) {
      std::string missing;
      for (int r = 1; r < world_size; ++r) {
        if (!joined.contains(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      throw std::runtime_error(fmt::format("timed out after {} ms waiting for ranks {} to connect to port {}{}",
                                           timeout.count(), missing, port, refusals));
    }
    Socket client(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (client.fd() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      throw std::runtime_error(systemError("accept"));
    }
    try {
      Hello hello{};
      receiveAll(client.fd(), &hello, sizeof hello, deadline);
      if (hello.magic != kMagic) {
        refusals += "; refused a connection that is not a rank of a sample trainer";
        continue;
      }
      const int rank = static_cast<int>(ntohl(hello.rank));
      const int size = static_cast<int>(ntohl(hello.world_size));
      Reply reply = Reply::Ok;
      if (size != world_size) {
        reply = Reply::WrongWorldSize;
      } else if (rank < 1 || rank >= world_size) {
        reply = Reply::RankOutOfRange;
      } else if (joined.contains(rank)) {
        reply = Reply::DuplicateRank;
      }
      sendAll(client.fd(), kMagic.data(), kMagic.size(), deadline);
      sendAll(client.fd(), &reply, sizeof reply, deadline);
      if (reply != Reply::Ok) {
        refusals += fmt::format("; refused RANK={} WORLD_SIZE={} ({})", rank, size, describe(reply));
        continue;
      }
      sendAll(client.fd(), id.data(), id.size(), deadline);
      joined.insert(rank);
    } catch (const std::runtime_error& e) {
      refusals += fmt::format("; dropped a connection ({})", e.what());
    }
  }
}

std::vector<std::byte> fetchUniqueId(const std::string& address, int port, int rank, int world_size,
                                     std::size_t id_size, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    Socket s = tryConnect(address, port, deadline);
    if (s.fd() >= 0) {
      Hello hello{kMagic, htonl(static_cast<std::uint32_t>(rank)), htonl(static_cast<std::uint32_t>(world_size))};
      sendAll(s.fd(), &hello, sizeof hello, deadline);
      std::array<char, 4> magic{};
      Reply reply{};
      receiveAll(s.fd(), magic.data(), magic.size(), deadline);
      receiveAll(s.fd(), &reply, sizeof reply, deadline);
      if (magic != kMagic) {
        throw std::runtime_error(fmt::format("{}:{} is not rank 0 of a sample trainer", address, port));
      }
      if (reply != Reply::Ok) {
        throw std::runtime_error(fmt::format("rank 0 at {}:{} refused RANK={} WORLD_SIZE={}: {}", address, port, rank,
                                             world_size, describe(reply)));
      }
      std::vector<std::byte> id(id_size);
      receiveAll(s.fd(), id.data(), id.size(), deadline);
      return id;
    }
    if (Clock::now() >= deadline) {
      throw std::runtime_error(fmt::format("timed out after {} ms connecting to rank 0 at {}:{} (MASTER_ADDR:MASTER_PORT)",
                                           timeout.count(), address, port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace sample_common
