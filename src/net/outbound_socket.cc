#include "net/outbound_socket.h"

#include <arpa/inet.h>
#include <liburing.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <coroutine>
#include <cstring>
#include <thread>

#include "runtime/event_loop.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

// The completion of a linked timeout: nothing waits for it (its own result says only whether it
// fired), so one static op with no state serves them all and may complete after the awaiter that
// armed it is gone.
IoOp* TimeoutOp() {
  static IoOp op{[](IoOp*, int, uint32_t) {}};
  return &op;
}

// One socket operation with a linked timeout, awaited by the calling coroutine on its worker.
class TimedIo : public IoOp {
 public:
  enum class Kind { kConnect, kSend, kRecv };
  TimedIo(Kind kind, int fd, const void* addr_or_buf, size_t len, int64_t timeout_ms)
      : kind_(kind), fd_(fd), ptr_(addr_or_buf), len_(len) {
    complete = &Done;
    ts_.tv_sec = timeout_ms / 1000;
    ts_.tv_nsec = (timeout_ms % 1000) * 1000000;
  }
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    EventLoop& loop = Worker::Current()->loop();
    // The operation and its timeout must reach the kernel in one submission, or the link breaks.
    if (io_uring_sq_space_left(loop.ring()) < 2) io_uring_submit(loop.ring());
    io_uring_sqe* sqe = loop.Prepare(this);
    switch (kind_) {
      case Kind::kConnect:
        io_uring_prep_connect(sqe, fd_, static_cast<const sockaddr*>(ptr_),
                              static_cast<socklen_t>(len_));
        break;
      case Kind::kSend:
        io_uring_prep_send(sqe, fd_, ptr_, len_, MSG_NOSIGNAL);
        break;
      case Kind::kRecv:
        io_uring_prep_recv(sqe, fd_, const_cast<void*>(ptr_), len_, 0);
        break;
    }
    sqe->flags |= IOSQE_IO_LINK;
    io_uring_sqe* t = loop.Prepare(TimeoutOp());
    io_uring_prep_link_timeout(t, &ts_, 0);
  }
  // Bytes (send/recv), 0 (connect), or -errno; a cancelled operation timed out.
  int await_resume() const noexcept { return res_ == -ECANCELED ? -ETIMEDOUT : res_; }

 private:
  static void Done(IoOp* op, int res, uint32_t) {
    auto* self = static_cast<TimedIo*>(op);
    self->res_ = res;
    self->handle_.resume();
  }
  Kind kind_;
  int fd_;
  const void* ptr_;
  size_t len_;
  __kernel_timespec ts_{};
  int res_ = 0;
  std::coroutine_handle<> handle_;
};

// getaddrinfo on a thread of its own (it may wait for DNS); resumes the caller at home.
class Resolve : private MailboxItem {
 public:
  Resolve(std::string host, int port) : host_(std::move(host)), port_(port) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    home_ = Worker::Current();
    std::thread([this] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      const std::string service = std::to_string(port_);
      if (getaddrinfo(host_.c_str(), service.c_str(), &hints, &res) == 0 && res != nullptr) {
        std::memcpy(&addr_, res->ai_addr, res->ai_addrlen);
        len_ = res->ai_addrlen;
        freeaddrinfo(res);
      }
      run = [](MailboxItem* item) { static_cast<Resolve*>(item)->handle_.resume(); };
      home_->Post(this);
    }).detach();
  }
  // The address's length, 0 if the name did not resolve.
  socklen_t await_resume() const noexcept { return len_; }
  const sockaddr_storage& addr() const { return addr_; }

 private:
  std::string host_;
  int port_;
  sockaddr_storage addr_{};
  socklen_t len_ = 0;
  Worker* home_ = nullptr;
  std::coroutine_handle<> handle_;
};

}  // namespace

OutboundSocket::~OutboundSocket() { Close(); }

void OutboundSocket::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  in_.clear();
  in_pos_ = 0;
}

TaskOf<int> OutboundSocket::Connect(std::string host, int port, int64_t timeout_ms) {
  Close();
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (port < 0 || port > 65535) co_return kNoAddress;
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in6);
  } else {
    Resolve r(host, port);
    len = co_await r;
    if (len == 0) co_return kNoAddress;
    addr = r.addr();
  }
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) co_return kNoAddress;
  const int res = co_await TimedIo(TimedIo::Kind::kConnect, fd, &addr, len, timeout_ms);
  if (res < 0) {
    close(fd);
    co_return res;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fd_ = fd;
  co_return 0;
}

TaskOf<int> OutboundSocket::SendAll(std::string_view bytes, int64_t timeout_ms) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    if (fd_ < 0) co_return -ENOTCONN;
    const int n = co_await TimedIo(TimedIo::Kind::kSend, fd_, bytes.data() + sent,
                                   bytes.size() - sent, timeout_ms);
    if (n < 0) co_return n;
    if (n == 0) co_return -EPIPE;
    sent += static_cast<size_t>(n);
  }
  co_return 0;
}

TaskOf<int> OutboundSocket::ReadLine(std::string* line, int64_t timeout_ms) {
  constexpr size_t kChunk = 16 * 1024;
  for (;;) {
    const size_t nl = in_.find('\n', in_pos_);
    if (nl != std::string::npos) {
      size_t end = nl;
      if (end > in_pos_ && in_[end - 1] == '\r') --end;
      line->assign(in_, in_pos_, end - in_pos_);
      in_pos_ = nl + 1;
      if (in_pos_ == in_.size()) {
        in_.clear();
        in_pos_ = 0;
      }
      co_return 1;
    }
    if (fd_ < 0) co_return -ENOTCONN;
    if (in_pos_ > 0) {
      in_.erase(0, in_pos_);
      in_pos_ = 0;
    }
    const size_t have = in_.size();
    in_.resize(have + kChunk);
    const int n =
        co_await TimedIo(TimedIo::Kind::kRecv, fd_, in_.data() + have, kChunk, timeout_ms);
    in_.resize(have + static_cast<size_t>(n > 0 ? n : 0));
    if (n <= 0) co_return n;
  }
}

}  // namespace lavik
