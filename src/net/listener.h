// Listener: the listening TCP socket and its multishot accept on one worker's ring.
//
// Thread safety: Bind() on any thread before Start(); Start()/Stop() on the accepting worker.
#pragma once

#include <functional>
#include <string>

#include "runtime/event_loop.h"

namespace lavik {

class Worker;

// A TCP socket bound to `address` (numeric IPv4/IPv6, or "*" for every IPv4 address) and `port`
// (0: any free port, written to *bound_port) and listening with `backlog`, SO_REUSEADDR set.
// Returns the fd, or -1 with the error text ("127.0.0.1:6379: Address already in use").
// `wait_in_use_ms`: how long a port in use is retried (a killed predecessor's socket may
// outlive it briefly while the kernel tears down its io_uring).
int OpenListeningSocket(const std::string& address, int port, int backlog, int* bound_port,
                        std::string* error, int wait_in_use_ms = 0);

class Listener {
 public:
  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and listens (SO_REUSEADDR, `backlog`: Redis's tcp-backlog). False + error text
  // ("127.0.0.1:6379: Address already in use") on failure.
  bool Bind(const std::string& address, int port, std::string* error, int backlog = 511);
  // A unix-domain socket at `path` instead (unixsocket, as Redis: a stale file there is removed
  // first; `perm` != 0 is chmod'ed onto it, unixsocketperm); Stop() removes the file.
  bool BindUnix(const std::string& path, unsigned perm, std::string* error, int backlog = 511);
  int port() const { return port_; }

  // Accepts on worker w's loop; on_accept(fd) gets each new socket (TCP_NODELAY set).
  void Start(Worker* w, std::function<void(int fd)> on_accept);
  // Stops accepting and closes the socket (on the accepting worker).
  void Stop();

 private:
  struct AcceptOp : IoOp {
    Listener* self;
  };
  static void OnAccept(IoOp* op, int res, uint32_t flags);
  void Arm();

  int fd_ = -1;
  int port_ = 0;
  std::string unix_path_;  // a unix-domain listener's path
  Worker* worker_ = nullptr;
  std::function<void(int)> on_accept_;
  AcceptOp op_;
  bool stopped_ = false;
};

}  // namespace lavik
