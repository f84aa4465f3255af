// OutboundSocket: a TCP connection a worker opens to another server (MIGRATE's target), driven
// through the worker's own io_uring ring, so waiting for the peer never blocks the worker's loop:
// the calling coroutine suspends and the loop keeps serving its other connections.
//
// Every operation is bounded by a timeout (an io_uring linked timeout on the connect, send or
// recv): it completes with the peer's answer, an error, or -ETIMEDOUT. A host name that is not a
// numeric address is resolved (getaddrinfo) on a short-lived thread of its own, since resolution
// may block; the worker awaits the answer through its mailbox. doc/migrate.md has the choice.
//
// Thread safety: an OutboundSocket belongs to the worker that connected it; every call runs on
// that worker (io_uring SINGLE_ISSUER: the ring is the worker's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/task_of.h"

namespace lavik {

class OutboundSocket {
 public:
  OutboundSocket() = default;
  ~OutboundSocket();
  OutboundSocket(const OutboundSocket&) = delete;
  OutboundSocket& operator=(const OutboundSocket&) = delete;

  // Connects to host:port (a numeric IPv4/IPv6 address or a name) within timeout_ms. Returns 0;
  // kNoAddress if the name does not resolve (or the port is out of range), so nothing was tried;
  // or -errno from the connect (-ETIMEDOUT when the time ran out). TCP_NODELAY is set on success.
  static constexpr int kNoAddress = 1;
  TaskOf<int> Connect(std::string host, int port, int64_t timeout_ms);
  // Sends all of `bytes`, each send bounded by timeout_ms. 0 or -errno.
  TaskOf<int> SendAll(std::string_view bytes, int64_t timeout_ms);
  // One reply line without its "\r\n", each receive bounded by timeout_ms. Returns 1 with *line
  // set, 0 if the peer closed the connection, or -errno (-ETIMEDOUT on a timeout).
  TaskOf<int> ReadLine(std::string* line, int64_t timeout_ms);

  bool connected() const { return fd_ >= 0; }
  void Close();

 private:
  int fd_ = -1;
  std::string in_;  // received bytes not handed out yet, from in_pos_
  size_t in_pos_ = 0;
};

}  // namespace lavik
