#include "net/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/worker.h"

namespace lavik {

Listener::~Listener() {
  if (fd_ >= 0) close(fd_);
}

int OpenListeningSocket(const std::string& address, int port, int backlog, int* bound_port,
                        std::string* error, int wait_in_use_ms) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* in4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  std::string host = address == "*" ? "0.0.0.0" : address;
  if (inet_pton(AF_INET, host.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(*in4);
  } else if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(*in6);
  } else {
    *error = "'" + address + "' is not a numeric IPv4 or IPv6 address";
    return -1;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&ss), len);
  for (int waited = 0; rc != 0 && errno == EADDRINUSE && port != 0 && waited < wait_in_use_ms;
       waited += 50) {
    usleep(50 * 1000);
    rc = bind(fd, reinterpret_cast<sockaddr*>(&ss), len);
  }
  if (rc != 0 || listen(fd, backlog) != 0) {
    *error = address + ":" + std::to_string(port) + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
  *bound_port =
      ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                       : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return fd;
}

bool Listener::Bind(const std::string& address, int port, std::string* error, int backlog) {
  // A process killed with its accept still queued in io_uring keeps listening until the kernel
  // tears its ring down, a moment after the exit: a restart on the same port (kill -9, then
  // start again) waits that out; a port another server really holds still fails, in 3 s.
  fd_ = OpenListeningSocket(address, port, backlog, &port_, error, 3000);
  return fd_ >= 0;
}

bool Listener::BindUnix(const std::string& path, unsigned perm, std::string* error, int backlog) {
  sockaddr_un un{};
  if (path.empty() || path.size() >= sizeof(un.sun_path)) {
    *error = path + ": a unix socket path must be 1 to " + std::to_string(sizeof(un.sun_path) - 1) +
             " bytes";
    return false;
  }
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  unlink(path.c_str());  // a previous run's socket file (Redis does the same)
  if (bind(fd, reinterpret_cast<sockaddr*>(&un), sizeof(un)) != 0 ||
      (perm != 0 && chmod(path.c_str(), static_cast<mode_t>(perm)) != 0) ||
      listen(fd, backlog) != 0) {
    *error = path + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  fd_ = fd;
  unix_path_ = path;
  return true;
}

void Listener::Start(Worker* w, std::function<void(int fd)> on_accept) {
  worker_ = w;
  on_accept_ = std::move(on_accept);
  op_.complete = &Listener::OnAccept;
  op_.self = this;
  Arm();
}

void Listener::Arm() {
  io_uring_sqe* sqe = worker_->loop().Prepare(&op_);
  io_uring_prep_multishot_accept(sqe, fd_, nullptr, nullptr, SOCK_CLOEXEC);
}

void Listener::OnAccept(IoOp* op, int res, uint32_t flags) {
  Listener* self = static_cast<AcceptOp*>(op)->self;
  if (self->stopped_) {
    if (res >= 0) close(res);
    return;
  }
  if (res >= 0) {
    int one = 1;
    if (self->unix_path_.empty()) setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    self->on_accept_(res);
  }
  if (!(flags & IORING_CQE_F_MORE)) self->Arm();
}

void Listener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (fd_ >= 0) {
    // Closing alone does not end an armed accept; shutdown makes it complete.
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    fd_ = -1;
  }
  if (!unix_path_.empty()) unlink(unix_path_.c_str());
}

}  // namespace lavik
