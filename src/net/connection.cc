#include "net/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "base/clock.h"
#include "net/tls.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

thread_local std::vector<Connection*> dirty_connections;
thread_local std::vector<Connection*> ready_connections;
thread_local size_t live_connections = 0;
std::atomic<size_t> query_buffer_limit{size_t{1} << 30};

constexpr size_t kShrinkAbove = 1 << 20;

constexpr int kMaxCountedWorkers = 256;  // --threads is at most 256
struct alignas(64) PaddedIoCounts {
  Connection::IoCounts counts;
};
PaddedIoCounts io_counts_by_worker[kMaxCountedWorkers];

Connection::IoCounts& CountsOf(int worker_id) {
  return io_counts_by_worker[worker_id % kMaxCountedWorkers].counts;
}

int64_t WallMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

std::string AddressOf(int fd, bool peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (rc != 0) return "?:0";
  if (ss.ss_family == AF_UNIX) {
    // As Redis: a unix-socket client's addr and laddr are both the server's socket path ":0"
    // (its peer is unnamed).
    if (peer) return AddressOf(fd, false);
    const auto* un = reinterpret_cast<const sockaddr_un*>(&ss);
    return std::string(un->sun_path, strnlen(un->sun_path, sizeof(un->sun_path))) + ":0";
  }
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

Connection* Connection::Open(Worker* worker, int fd, uint64_t id, RequestHandler* handler,
                             RequestParser::Limits limits, TlsSession* tls,
                             std::string_view initial_input) {
  auto* c = new Connection(worker, fd, id, handler, limits, tls);
  handler->OnOpen(*c);
  if (!initial_input.empty()) {
    c->in_ = static_cast<char*>(std::malloc(initial_input.size()));
    if (c->in_ == nullptr) std::abort();
    std::memcpy(c->in_, initial_input.data(), initial_input.size());
    c->in_cap_ = c->in_len_ = initial_input.size();
    c->ProcessInput();
  }
  c->ArmRecv();
  return c;
}

Connection::Connection(Worker* worker, int fd, uint64_t id, RequestHandler* handler,
                       RequestParser::Limits limits, TlsSession* tls)
    : worker_(worker),
      fd_(fd),
      id_(id),
      handler_(handler),
      parser_(limits),
      tls_(tls),
      peer_(AddressOf(fd, true)),
      local_(AddressOf(fd, false)),
      created_ms_(WallMs()),
      last_active_ms_(created_ms_) {
  recv_op_.complete = &Connection::OnRecv;
  recv_op_.conn = this;
  send_op_.complete = &Connection::OnSend;
  send_op_.conn = this;
  // TLS keeps the plain fd: its handshake and the session's I/O go through the socket itself.
  if (tls == nullptr) slot_ = worker->loop().RegisterFile(fd);
  ++live_connections;
}

Connection::~Connection() {
  std::free(in_);
  --live_connections;
}

size_t Connection::LiveOnThisThread() { return live_connections; }

const Connection::IoCounts& Connection::io_counts(int worker_id) { return CountsOf(worker_id); }

void Connection::ResetIoCounts() {
  Worker* w = Worker::Current();
  if (w == nullptr) return;
  IoCounts& c = CountsOf(w->id());
  c.reads.Reset();
  c.writes.Reset();
}

Connection::IoCounts& Connection::counts() { return CountsOf(worker_->id()); }

void Connection::StartSend() {
  io_uring_sqe* sqe = worker_->loop().Prepare(&send_op_);
  io_uring_prep_send(sqe, ring_fd(), sending_.data() + sent_, sending_.size() - sent_,
                     MSG_NOSIGNAL);
  PrepFlags(sqe);
  send_inflight_ = true;
  counts().writes.Add();
}

void Connection::SetQueryBufferLimit(size_t bytes) {
  query_buffer_limit.store(bytes, std::memory_order_relaxed);
}

std::string* Connection::output() {
  MarkDirty();
  return &out_;
}

void Connection::MarkDirty() {
  if (!dirty_) {
    dirty_ = true;
    dirty_connections.push_back(this);
  }
}

void Connection::FlushDirty() {
  // Flush may close a connection and mark others dirty; work on a snapshot.
  static thread_local std::vector<Connection*> batch;
  batch.swap(dirty_connections);
  int64_t now = 0;
  for (Connection* c : batch) {
    // A pipeline stopped at a request that waits (another worker's key, the device): the replies
    // before it wait a little for the ones after it, so the batch leaves in one send as Redis
    // writes a read batch's replies together — not one send per stretch between two hops.
    // Held while the pipeline advances (a pending request finished within kHoldGapNs), for
    // kHoldMaxNs at most, and while the output is under kHoldBytes.
    if (c->lent_ && !c->out_.empty()) {
      // Another worker sends the pending request's reply on the socket: nothing may leave
      // before it (nothing is written meanwhile but by a CLIENT KILL, which empties the output).
      dirty_connections.push_back(c);
      continue;
    }
    if (c->pending_ && !c->closing_ && !c->closed_ && !c->out_.empty() &&
        c->out_.size() < kHoldBytes) {
      if (now == 0) now = MonotonicNs();
      if (c->hold_start_ns_ == 0) c->hold_start_ns_ = c->hold_mark_ns_ = now;
      if (c->resumed_) c->hold_mark_ns_ = now;
      c->resumed_ = false;
      const int64_t left =
          std::min(c->hold_mark_ns_ + kHoldGapNs, c->hold_start_ns_ + kHoldMaxNs) - now;
      if (left > 0) {
        dirty_connections.push_back(c);  // still dirty: looked at again next turn
        c->worker_->WakeWithin((left + 999) / 1000);
        continue;
      }
    }
    c->hold_start_ns_ = 0;
    c->resumed_ = false;
    c->dirty_ = false;
    c->Flush();
  }
  batch.clear();
}

bool Connection::Reserve(size_t want) {
  ahead_left_ = 0;  // the requests read ahead may move
  if (in_start_ == in_len_) in_start_ = in_len_ = 0;
  const size_t unparsed = in_len_ - in_start_;
  const size_t hint = parser_.bytes_hint();
  if (hint > unparsed) want = std::max(want, hint - unparsed);
  // The unparsed tail moves to the front when it is short, or when the room is needed and the
  // move costs no more than the room it frees: a long pipeline left unparsed (the connection
  // was pending) is not moved again on every read. The parser keeps offsets relative to the
  // request start, so moving the tail is safe.
  if (in_start_ > 0 &&
      (unparsed <= kReadChunk || (in_cap_ - in_len_ < want && in_start_ >= unparsed))) {
    std::memmove(in_, in_ + in_start_, unparsed);
    in_len_ = unparsed;
    in_start_ = 0;
  }
  if (in_cap_ - in_len_ < want) {
    size_t cap = std::max(in_len_ + want, std::min<size_t>(in_cap_ * 2, in_len_ + (64u << 20)));
    char* grown = static_cast<char*>(std::realloc(in_, cap));
    if (grown == nullptr) return false;
    in_ = grown;
    in_cap_ = cap;
  } else if (in_cap_ > kShrinkAbove && in_len_ < kReadChunk && hint <= kReadChunk &&
             want <= kReadChunk) {
    char* shrunk = static_cast<char*>(std::realloc(in_, 2 * kReadChunk));
    if (shrunk != nullptr) {
      in_ = shrunk;
      in_cap_ = 2 * kReadChunk;
    }
  }
  return true;
}

bool Connection::Absorb(const char* data, size_t n) {
  if (pending_) {
    // The pending request's views point into the buffer, which must not move: what fits in its
    // spare room goes there (writing past in_len_ moves nothing), the rest waits in the stash.
    if (stash_.empty() && in_cap_ - in_len_ >= n) {
      std::memcpy(in_ + in_len_, data, n);
      in_len_ += n;
    } else {
      stash_.append(data, n);
    }
    return true;
  }
  if (!Reserve(std::max(n, kReadChunk))) return false;
  std::memcpy(in_ + in_len_, data, n);
  in_len_ += n;
  return true;
}

void Connection::ArmRecv() {
  if (recv_inflight_ || closing_ || closed_) return;
  EventLoop& loop = worker_->loop();
  if (detached_) {
    // The socket's bytes are another thread's: only a hang-up is ours (POLLHUP comes unasked).
    io_uring_sqe* sqe = loop.Prepare(&recv_op_);
    io_uring_prep_poll_add(sqe, fd_, POLLRDHUP);
    recv_inflight_ = true;
    return;
  }
  if (tls_ == nullptr && !no_buffers_ && loop.has_recv_buffers()) {
    // Armed once; stays armed while the socket delivers (IORING_CQE_F_MORE), pending or not.
    io_uring_sqe* sqe = loop.Prepare(&recv_op_);
    io_uring_prep_recv_multishot(sqe, ring_fd(), nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    PrepFlags(sqe);
    sqe->buf_group = EventLoop::kRecvGroup;
    recv_inflight_ = true;
    multishot_ = true;
    return;
  }
  if (pending_) return;
  no_buffers_ = false;
  if (!Reserve(kReadChunk)) {
    Abort();
    return;
  }
  io_uring_sqe* sqe = loop.Prepare(&recv_op_);
  if (tls_ == nullptr) {
    io_uring_prep_recv(sqe, ring_fd(), in_ + in_len_, in_cap_ - in_len_, 0);
    PrepFlags(sqe);
  } else {
    io_uring_prep_recv(sqe, fd_, tls_->recv_buffer(), TlsSession::kRecvBufferSize, 0);
  }
  recv_inflight_ = true;
}

void Connection::OnRecv(IoOp* op, int res, uint32_t flags) {
  Connection* c = static_cast<Op*>(op)->conn;
  EventLoop& loop = c->worker_->loop();
  // A provided buffer goes back to the ring when this returns, whatever happens to c.
  struct BufferReturn {
    EventLoop& loop;
    int bid;
    ~BufferReturn() {
      if (bid >= 0) loop.RecycleRecvBuffer(static_cast<uint16_t>(bid));
    }
  } give_back{loop, (flags & IORING_CQE_F_BUFFER) ? int(flags >> IORING_CQE_BUFFER_SHIFT) : -1};
  const bool more = (flags & IORING_CQE_F_MORE) != 0;  // the multishot recv stays armed
  if (!more) {
    c->recv_inflight_ = false;
    c->multishot_ = false;
  }
  if (c->closed_) {
    if (!more) c->MaybeFinish();
    return;
  }
  if (res == -ENOBUFS) {
    // Every provided buffer is in use: one plain recv, then multishot again.
    c->no_buffers_ = true;
    if (!more) c->ArmRecv();
    return;
  }
  if (res == -EINTR || res == -EAGAIN) {
    if (!more) c->ArmRecv();
    return;
  }
  c->counts().reads.Add();
  if (res <= 0) {
    // EOF or error: answer what was already read (as Redis does), then close. While a request is
    // pending, Resume() first runs the requests received meanwhile.
    c->eof_ = true;
    if (!c->pending_ && !c->queued_) c->CloseAfterReply();  // else after the queued input ran
    return;
  }
  c->last_active_ms_ = WallMs();
  if (give_back.bid >= 0) {
    if (c->closing_) return;  // no more requests are read
    if (!c->Absorb(loop.recv_buffer(static_cast<uint16_t>(give_back.bid)),
                   static_cast<size_t>(res))) {
      c->Abort();
      return;
    }
  } else if (c->tls_ == nullptr) {
    c->in_len_ += static_cast<size_t>(res);
  } else if (!c->TlsReceived(static_cast<size_t>(res))) {
    return;
  }
  if (c->input_buffered() > query_buffer_limit.load(std::memory_order_relaxed)) {
    c->handler_->OnQueryBufferLimit(*c);
    c->Abort();
    return;
  }
  // Run once the turn's other completions are in (ProcessReady).
  c->rearm_ = c->rearm_ || !more;
  if (!c->queued_) {
    c->queued_ = true;
    ready_connections.push_back(c);
  }
}

namespace {

// Requests read ahead by ProcessReady and PrefetchAhead, so ProcessInput takes them without
// parsing them again: a ring per worker thread. A slot names the connection and the byte it was
// read at; a connection takes only the slots of its latest run, in order, each only if it is
// still its own and its request still starts there (Reserve forgets a run: the buffer may move).
struct AheadSlot {
  const Connection* owner;
  const char* data;
  RequestAhead request;
};
constexpr uint32_t kAheadSlots = 2048;  // a power of two
thread_local std::vector<AheadSlot> ahead_ring;
thread_local uint32_t ahead_next = 0;

}  // namespace

const RequestAhead* Connection::RecordAhead(size_t at, bool first) {
  if (ahead_ring.empty()) ahead_ring.resize(kAheadSlots);
  AheadSlot& slot = ahead_ring[ahead_next];
  slot.owner = nullptr;  // whoever held it loses it, whether or not the read succeeds
  if (!ReadAhead(in_ + at, in_len_ - at, &slot.request)) return nullptr;
  slot.owner = this;
  slot.data = in_ + at;
  if (first) {
    ahead_at_ = ahead_next;
    ahead_left_ = 0;
  }
  ++ahead_left_;
  ahead_next = (ahead_next + 1) & (kAheadSlots - 1);
  return &slot.request;
}

bool Connection::TakeAhead() {
  const AheadSlot& slot = ahead_ring[ahead_at_];
  ahead_at_ = (ahead_at_ + 1) & (kAheadSlots - 1);
  --ahead_left_;
  if (slot.owner == this && slot.data == in_ + in_start_ && parser_.Take(slot.data, slot.request)) {
    return true;
  }
  ahead_left_ = 0;
  return false;
}

void Connection::ProcessReady() {
  static thread_local std::vector<Connection*> batch;
  batch.swap(ready_connections);
  if (batch.size() >= 2) {
    std::array<RequestHandler*, 2> handlers{};
    for (Connection* c : batch) {
      if (c->closed_ || c->closing_ || c->pending_ || c->prefetched_ > 0 || c->ahead_left_ > 0) {
        continue;
      }
      const RequestAhead* request = c->RecordAhead(c->in_start_, true);
      if (request == nullptr) continue;
      const std::string_view key = request->SecondArg(c->in_ + c->in_start_);
      if (key.empty()) continue;
      c->handler_->Prefetch(*c, std::span<const std::string_view>(&key, 1));
      if (handlers[0] == nullptr || handlers[0] == c->handler_) {
        handlers[0] = c->handler_;
      } else if (handlers[1] == nullptr) {
        handlers[1] = c->handler_;
      }
    }
    for (RequestHandler* h : handlers) {
      if (h != nullptr) h->PrefetchFlush();
    }
  }
  for (Connection* c : batch) {
    c->queued_ = false;
    if (!c->closed_) {
      c->ProcessInput();
      if (c->eof_ && !c->pending_ && !c->closing_) c->CloseAfterReply();
      if (c->rearm_) c->ArmRecv();
    }
    c->rearm_ = false;
    c->MaybeFinish();
  }
  batch.clear();
}

void Connection::ProcessInput() {
  while (!pending_ && !closing_) {
    if (ahead_left_ == 0 || !TakeAhead()) {
      RequestParser::Status st = parser_.Parse(in_ + in_start_, in_len_ - in_start_);
      if (st == RequestParser::Status::kNeedMore) return;
      if (st == RequestParser::Status::kError) {
        ProtocolError(parser_.error());
        return;
      }
    }
    std::span<const std::string_view> args = parser_.args();
    if (args.empty()) {
      in_start_ += parser_.consumed();
      parser_.Reset();
      continue;
    }
    if (prefetched_ > 0) {
      --prefetched_;
    } else if (in_start_ + parser_.consumed() < in_len_) {
      PrefetchAhead(args);
    }
    RequestHandler::Result r = handler_->OnRequest(*this, args);
    if (r == RequestHandler::Result::kPending) {
      pending_ = true;
      return;
    }
    in_start_ += parser_.consumed();
    parser_.Reset();
    if (r == RequestHandler::Result::kClose) {
      CloseAfterReply();
      return;
    }
  }
}

// Pipelined input: the keys of the requests from the current one on (up to kPrefetchBatch) go
// to the handler together, so the memory their commands touch loads in parallel rather than one
// cache miss after another (doc/threading.md "Request path costs"). The requests after the
// current one are read ahead once, for ProcessInput to take without parsing them again.
void Connection::PrefetchAhead(std::span<const std::string_view> current) {
  std::array<std::string_view, kPrefetchBatch> keys;
  keys[0] = current.size() >= 2 ? current[1] : std::string_view();
  size_t n = 1;
  ahead_left_ = 0;
  for (size_t at = in_start_ + parser_.consumed(); n < kPrefetchBatch && at < in_len_; ++n) {
    const RequestAhead* request = RecordAhead(at, n == 1);
    if (request == nullptr) break;
    keys[n] = request->SecondArg(in_ + at);
    at += request->length;
  }
  if (n < 2) return;  // the current request alone: nothing to overlap it with
  handler_->Prefetch(*this, std::span<const std::string_view>(keys.data(), n));
  handler_->PrefetchFlush();
  prefetched_ = n - 1;  // the current request is the first of them
}

int Connection::LendSocket() {
  if (tls_ != nullptr || detached_ || closing_ || closed_ || send_inflight_ || !out_.empty() ||
      in_len_ - in_start_ != parser_.consumed() || !stash_.empty()) {
    return -1;
  }
  lent_ = true;
  return fd_;
}

size_t Connection::SendLent(int fd, std::string_view data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  Worker* w = Worker::Current();
  if (w != nullptr) CountsOf(w->id()).writes.Add();
  return sent;
}

void Connection::Resume() {
  pending_ = false;
  lent_ = false;
  resumed_ = true;
  in_start_ += parser_.consumed();
  parser_.Reset();
  if (closed_) {
    MaybeFinish();
    return;
  }
  if (closing_) {
    MarkDirty();
    return;
  }
  if (!stash_.empty()) {
    // What the multishot recv received while the request was pending.
    if (!Reserve(std::max(stash_.size(), kReadChunk))) {
      Abort();
      return;
    }
    std::memcpy(in_ + in_len_, stash_.data(), stash_.size());
    in_len_ += stash_.size();
    stash_.clear();
    if (stash_.capacity() > kShrinkAbove) stash_.shrink_to_fit();
  }
  ProcessInput();
  if (eof_ && !pending_ && !closing_) CloseAfterReply();
  ArmRecv();
}

void Connection::ProtocolError(const std::string& text) {
  out_.append("-ERR ").append(text).append("\r\n");
  CloseAfterReply();
}

void Connection::CloseAfterReply() {
  closing_ = true;
  MarkDirty();
}

void Connection::Abort() {
  closing_ = true;
  out_.clear();
  // A send waiting for a peer that does not read (the slow client an output limit closes) would
  // hold the connection, and what hangs off it, open forever: end it now, as Redis closes the
  // socket at once. The send then fails and the usual close path runs.
  if (send_inflight_ && !closed_) shutdown(fd_, SHUT_RDWR);
  MarkDirty();
}

void Connection::Flush() {
  if (closed_) {
    MaybeFinish();
    return;
  }
  if (send_inflight_) return;
  if (tls_ != nullptr) TlsSeal();
  if (detached_) out_.clear();  // the socket's output is another thread's
  if (out_.empty()) {
    if (closing_ && !pending_) {
      closed_ = true;
      // Ends a recv still in flight (it completes with 0), then MaybeFinish frees us.
      shutdown(fd_, SHUT_RDWR);
      handler_->OnClose(*this);
      MaybeFinish();
    }
    return;
  }
  sending_.swap(out_);
  out_.clear();
  sent_ = 0;
  StartSend();
}

void Connection::OnSend(IoOp* op, int res, uint32_t) {
  Connection* c = static_cast<Op*>(op)->conn;
  c->send_inflight_ = false;
  if (c->closed_) {
    c->MaybeFinish();
    return;
  }
  if (res < 0 && res != -EINTR && res != -EAGAIN) {
    c->Abort();
    return;
  }
  if (res > 0) c->sent_ += static_cast<size_t>(res);
  if (c->sent_ < c->sending_.size()) {
    c->StartSend();
    return;
  }
  c->sending_.clear();
  c->sent_ = 0;
  if (c->sending_.capacity() > kShrinkAbove) c->sending_.shrink_to_fit();
  if (!c->out_.empty() || c->closing_ || (c->tls_ != nullptr && c->tls_->has_output())) {
    c->MarkDirty();
  }
}

void Connection::MaybeFinish() {
  if (!closed_ || recv_inflight_ || send_inflight_ || pending_ || dirty_ || queued_) return;
  // The table's reference first: close() alone would leave the socket open through it.
  worker_->loop().UnregisterFile(slot_);
  slot_ = -1;
  close(fd_);
  fd_ = -1;
  delete this;
}

}  // namespace lavik
