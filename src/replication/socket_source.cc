#include "replication/socket_source.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "net/tls.h"

namespace lavik {
namespace {

constexpr size_t kBufferBytes = 256 << 10;
constexpr size_t kMaxLine = 64 << 10;
constexpr int kPollStepMs = 100;

// Waits until fd is ready for `events`: 1 ready, 0 cancelled or timed out (*error set), -1 error.
int WaitFor(int fd, short events, int64_t timeout_ms, const std::function<bool()>& cancelled,
            std::string* error) {
  const int64_t deadline = NowMs() + timeout_ms;
  for (;;) {
    if (cancelled && cancelled()) {
      *error = "cancelled";
      return 0;
    }
    const int64_t left = deadline - NowMs();
    if (left <= 0) {
      *error = "timeout";
      return 0;
    }
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kPollStepMs)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *error = std::strerror(errno);
      return -1;
    }
    if (r > 0) return 1;
  }
}

}  // namespace

SocketSource::SocketSource(int fd, std::function<bool()> cancelled, int64_t timeout_ms)
    : fd_(fd), cancelled_(std::move(cancelled)), timeout_ms_(timeout_ms) {
  buf_.resize(kBufferBytes);
}

bool SocketSource::StartTls(TlsSession* tls) {
  tls_ = tls;
  if (!tls_->Feed(nullptr, 0)) {  // the ClientHello
    error_ = "TLS: " + tls_->error();
    return false;
  }
  while (!tls_->handshake_done()) {
    if (!FlushTls() || !RecvTls()) return false;
  }
  return FlushTls();
}

bool SocketSource::FlushTls() {
  std::string out;
  tls_->TakeOutput(&out);
  return SendRaw(out);
}

size_t SocketSource::RecvRaw(char* dst, size_t cap) {
  for (;;) {
    if (WaitFor(fd_, POLLIN, timeout_ms_, cancelled_, &error_) != 1) return 0;
    const ssize_t got = recv(fd_, dst, cap, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) {
      error_ = std::strerror(errno);
      return 0;
    }
    if (got == 0) error_ = "connection closed by the master";
    return static_cast<size_t>(got);
  }
}

bool SocketSource::RecvTls() {
  std::string raw(16 << 10, '\0');
  const size_t got = RecvRaw(raw.data(), raw.size());
  if (got == 0) return false;
  if (!tls_->Feed(raw.data(), got)) {
    error_ = "TLS: " + tls_->error();
    return false;
  }
  return true;
}

bool SocketSource::Refill() {
  if (!error_.empty()) return false;
  while (tls_ != nullptr) {
    const long n = tls_->ReadPlain(buf_.data(), buf_.size());
    if (n > 0) {
      pos_ = 0;
      end_ = static_cast<size_t>(n);
      return true;
    }
    if (n < 0) {
      error_ = tls_->closed_by_peer() ? "connection closed by the master" : "TLS: " + tls_->error();
      return false;
    }
    if (!FlushTls() || !RecvTls()) return false;
  }
  const size_t got = RecvRaw(buf_.data(), buf_.size());
  if (got == 0) return false;
  pos_ = 0;
  end_ = got;
  return true;
}

bool SocketSource::ReadLine(std::string* line) {
  line->clear();
  for (;;) {
    if (!Fill()) return false;
    const char* start = buf_.data() + pos_;
    const void* nl = std::memchr(start, '\n', end_ - pos_);
    const size_t take = nl == nullptr ? end_ - pos_ : static_cast<const char*>(nl) - start + 1;
    line->append(start, take);
    pos_ += take;
    consumed_ += take;
    if (nl != nullptr) break;
    if (line->size() > kMaxLine) {
      error_ = "line too long";
      return false;
    }
  }
  line->pop_back();
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

bool SocketSource::WriteAll(std::string_view bytes) {
  if (tls_ == nullptr) return SendRaw(bytes);
  if (!tls_->WritePlain(bytes)) {
    error_ = "TLS: " + tls_->error();
    return false;
  }
  return FlushTls();
}

bool SocketSource::SendRaw(std::string_view bytes) {
  while (!bytes.empty()) {
    if (WaitFor(fd_, POLLOUT, timeout_ms_, cancelled_, &error_) != 1) return false;
    const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      error_ = std::strerror(errno);
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string SocketSource::TakeBuffered() {
  std::string out(buf_.data() + pos_, end_ - pos_);
  pos_ = end_ = 0;
  // What the session already decrypted goes with it (the rest stays in the session).
  while (tls_ != nullptr) {
    const long n = tls_->ReadPlain(buf_.data(), buf_.size());
    if (n <= 0) break;
    out.append(buf_.data(), static_cast<size_t>(n));
  }
  return out;
}

std::string RespArray(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out.append(a);
    out += "\r\n";
  }
  return out;
}

int ConnectTcp(const std::string& host, int port, int64_t timeout_ms,
               const std::function<bool()>& cancelled, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    *error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      *error = std::strerror(errno);
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      *error = std::strerror(errno);
      close(fd);
      fd = -1;
      continue;
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (WaitFor(fd, POLLOUT, timeout_ms, cancelled, error) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) {
      if (so_error != 0) *error = std::strerror(so_error);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

}  // namespace lavik
