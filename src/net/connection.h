// Connection: one client socket on one worker — reads requests, hands each to the owner's
// RequestHandler, and sends replies back in request order.
//
// Ordering: a connection runs one request at a time. A handler that cannot answer at once (its
// key lives on another worker, or it waits for the device) returns kPending; the connection then
// stops parsing — and stops reading, so the argument views it handed out stay valid — until the
// handler calls Resume(). Replies therefore leave in request order, pipelined or not, and a
// client's commands take effect in the order it sent them.
//
// I/O: one recv and at most one send in flight per connection, through the worker's io_uring;
// replies produced during a loop turn leave in one send at the end of the turn — or, when the
// connection stopped at a request that is still pending, with the replies after it while the
// pipeline keeps advancing (up to 1 ms; FlushDirty). The reply of a lone request that another
// worker runs may leave from that worker, on the socket lent to it (LendSocket). A plain TCP
// connection keeps one multishot recv armed for its whole life (the kernel fills buffers of the
// worker's provided-buffer ring as data arrives; each completion's bytes are copied into the
// input buffer and the buffer handed back at once), so a request costs no recv submission and no
// poll re-arm. Bytes that arrive while a request is pending wait in a side buffer (the argument
// views point into the input buffer, which must not move) and are appended on Resume(). When the
// ring is empty (-ENOBUFS) the connection does one plain recv and then arms a multishot again.
//
// TLS (a connection opened with a TlsSession): the same recv/send ops carry ciphertext; received
// bytes go through the session into the input buffer, and the output is sealed by the session
// when it is flushed (see net/tls.h and connection_tls.cc). The plain path pays a null check.
//
// Thread safety: everything runs on the owning worker's thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/stat_counter.h"
#include "protocol/request_parser.h"
#include "runtime/event_loop.h"

namespace lavik {

class Connection;
class TlsSession;
class Worker;

class RequestHandler {
 public:
  enum class Result { kDone, kPending, kClose };
  virtual ~RequestHandler() = default;
  virtual void OnOpen(Connection& c) = 0;
  // Handles one request (args non-empty). kPending: call c.Resume() once the reply is written.
  // kClose: flush what was written, then close.
  virtual Result OnRequest(Connection& c, std::span<const std::string_view> args) = 0;
  // The unparsed input grew beyond client-query-buffer-limit; the connection closes (dropping
  // unsent output) right after this returns.
  virtual void OnQueryBufferLimit(Connection& c) { (void)c; }
  // Requests about to run (the rest of a pipeline, or the first request of each connection that
  // received input this loop turn) have these second arguments: their first key, for most
  // commands; empty for a request with one argument. A hint only: the handler may start loading
  // what those keys need into the CPU's cache, and finish that at PrefetchFlush, which follows
  // once the hints of the batch were given. Views valid during the call.
  virtual void Prefetch(Connection& c, std::span<const std::string_view> keys) {
    (void)c;
    (void)keys;
  }
  virtual void PrefetchFlush() {}
  // The socket is closed; no OnRequest follows. The object is freed after this returns unless a
  // request is still pending (then after its Resume()).
  virtual void OnClose(Connection& c) = 0;
};

class Connection {
 public:
  static constexpr size_t kReadChunk = 16 * 1024;

  // Takes ownership of fd (a connected, non-blocking-irrelevant TCP socket) and of tls, if not
  // null: the connection then speaks TLS through that session. `initial_input`: bytes already
  // read from the socket by someone else (a replica's link after the sync), parsed first.
  static Connection* Open(Worker* worker, int fd, uint64_t id, RequestHandler* handler,
                          RequestParser::Limits limits, TlsSession* tls = nullptr,
                          std::string_view initial_input = {});

  uint64_t id() const { return id_; }
  int fd() const { return fd_; }
  Worker* worker() const { return worker_; }
  const std::string& peer() const { return peer_; }
  const std::string& local() const { return local_; }
  // Accepted on the unix socket (unixsocket): local() is its path.
  bool unix_socket() const { return !local_.empty() && local_[0] == '/'; }
  int64_t created_ms() const { return created_ms_; }
  int64_t last_active_ms() const { return last_active_ms_; }
  bool tls() const { return tls_ != nullptr; }

  // PSYNC on a TLS connection (replication/master.h): gives the session away, with the
  // plaintext already decrypted past the request being handled (`rest`), to a thread that then
  // does every read and write on the socket (an SSL object is used by one thread at a time).
  // From OnRequest, with no output pending; null (nothing changed) if the connection is not TLS
  // or has I/O in flight. From then on the connection neither reads nor writes: it watches the
  // socket for a hang-up (a shutdown at either end, the peer's close) and then closes as after
  // an EOF, so its handler hears OnClose as usual. Output written to it is dropped.
  std::unique_ptr<TlsSession> DetachTls(std::string* rest);

  // The buffer replies are appended to. Marks the connection for sending at the end of the turn.
  std::string* output();
  size_t output_pending() const { return out_.size() + (sending_.size() - sent_); }
  size_t input_buffered() const { return in_len_ - in_start_ + stash_.size(); }
  // The whole query buffer of the current read batch, requests already parsed from it included
  // (Redis's CLIENT LIST qbuf: the buffer is trimmed only between batches).
  size_t input_length() const { return in_len_; }
  size_t input_capacity() const { return in_cap_; }
  std::string_view input() const { return {in_ + in_start_, in_len_ - in_start_}; }
  // In OnRequest: the bytes of the request being handled (a replica counts its master's stream).
  size_t request_bytes() const { return parser_.consumed(); }
  // The request's bytes as received (valid until it finished, as its argument views).
  std::string_view request_data() const { return {in_ + in_start_, parser_.consumed()}; }

  // A request is being handled asynchronously (OnRequest said kPending, no Resume() yet).
  bool request_pending() const { return pending_; }
  // A pending request finished: continue with the buffered requests.
  void Resume();

  // From OnRequest, for a request about to return kPending whose reply another worker will
  // produce: lends that worker the socket to send the reply on itself (SendLent), which saves
  // waking this worker just to pass the reply on. Only when nothing would have to leave before
  // that reply or be batched with it: a plain (not TLS) socket, no output written or in flight,
  // and no input buffered past this request (a pipeline's replies leave together instead).
  // Returns the fd, or -1 (nothing lent). Until Resume() the connection sends nothing; the
  // socket stays open (it closes only after Resume) and its fd names it.
  int LendSocket();
  // Any worker's thread: sends `data` on a lent socket without blocking; returns the bytes sent
  // (fewer on a full socket buffer or an error: the rest goes through the connection after
  // Resume, where a failed socket closes as usual). Counted as a write of the calling worker.
  static size_t SendLent(int fd, std::string_view data);
  // Closes after the replies written so far are sent.
  void CloseAfterReply();
  // Closes now, dropping unsent output.
  void Abort();
  bool closing() const { return closing_; }
  bool peer_closed() const { return eof_; }  // the client closed its end (or the socket failed)

  // Stricter protocol limits before AUTH, as Redis applies them (see RequestParser).
  void set_auth_required(bool required) { parser_.set_auth_required(required); }
  // A connection this server opened (the link to our master), not one it accepted: maxclients
  // and protected mode, which are about accepted clients, leave it alone (as Redis).
  void set_outbound(bool outbound) { outbound_ = outbound; }
  bool outbound() const { return outbound_; }
  // proto-max-bulk-len for the requests parsed from now on.
  void set_max_bulk_len(size_t bytes) { parser_.set_max_bulk_len(bytes); }
  // client-query-buffer-limit for every connection (any thread).
  static void SetQueryBufferLimit(size_t bytes);

  void* user_data = nullptr;

  // For the worker's end-of-turn hook: sends the output of every connection that has some.
  static void FlushDirty();
  // The worker's first end-of-turn hook: runs the requests every connection received in the
  // loop turn's completions. With input on several connections, their first requests' keys go
  // to the handlers first (RequestHandler::Prefetch), so the memory those commands touch loads
  // in parallel rather than one cache miss after another (doc/threading.md).
  static void ProcessReady();
  // Redis's total_reads_processed / total_writes_processed, per worker id (< 256): receive
  // completions that brought bytes, an end of file or an error, and sends started. Written by
  // that worker only, read by any thread.
  struct IoCounts {
    StatCounter reads;
    StatCounter writes;
  };
  static const IoCounts& io_counts(int worker_id);
  // The calling worker's IoCounts to zero (CONFIG RESETSTAT).
  static void ResetIoCounts();
  // Connection objects alive on the calling thread, closed ones still waiting for their last
  // completions included (shutdown waits for zero).
  static size_t LiveOnThisThread();

 private:
  struct Op : IoOp {
    Connection* conn;
  };

  Connection(Worker* worker, int fd, uint64_t id, RequestHandler* handler,
             RequestParser::Limits limits, TlsSession* tls);
  ~Connection();

  void ProcessInput();
  void ArmRecv();
  // Appends n received bytes to the input buffer (or, while a request is pending, to stash_).
  // False if the buffer could not grow (the connection aborts).
  bool Absorb(const char* data, size_t n);
  // Room for `want` more bytes at in_ + in_len_ after dropping the parsed prefix (not while a
  // request is pending). False on allocation failure.
  bool Reserve(size_t want);
  void Flush();
  // Submits a send of sending_[sent_..] and counts it.
  void StartSend();
  IoCounts& counts();  // this connection's worker's
  void MarkDirty();
  void MaybeFinish();
  void ProtocolError(const std::string& text);
  static void OnRecv(IoOp* op, int res, uint32_t flags);
  static void OnSend(IoOp* op, int res, uint32_t flags);
  static void OnHangup(IoOp* op, int res, uint32_t flags);  // the poll armed after DetachTls
  // TLS (connection_tls.cc): n ciphertext bytes arrived in the session's buffer; decrypts them
  // into the input buffer. False when the connection is closing (the caller stops there).
  bool TlsReceived(size_t n);
  // TLS: encrypts out_ and replaces it with the ciphertext to send.
  void TlsSeal();

  // The fd the ring's requests name: the slot of fd_ in the ring's file table (flag
  // IOSQE_FIXED_FILE, no fget/fput per recv and send) for a plain TCP connection when the table
  // has room, else fd_ itself. fd_ stays open for everything else (shutdown, getpeername, poll).
  int ring_fd() const { return slot_ >= 0 ? slot_ : fd_; }
  void PrepFlags(io_uring_sqe* sqe) const {
    if (slot_ >= 0) sqe->flags |= IOSQE_FIXED_FILE;
  }

  Worker* const worker_;
  int fd_;
  int slot_ = -1;  // fd_'s slot in the worker ring's file table, -1: none
  const uint64_t id_;
  RequestHandler* const handler_;
  RequestParser parser_;
  std::unique_ptr<TlsSession> tls_;  // null for plain TCP
  std::string peer_;
  std::string local_;
  int64_t created_ms_;
  int64_t last_active_ms_;

  char* in_ = nullptr;
  size_t in_cap_ = 0;
  size_t in_start_ = 0;  // first byte of the request being parsed
  // Pipelined requests after the current one whose keys the handler was already given
  // (PrefetchAhead); the next that many run without another look ahead.
  static constexpr size_t kPrefetchBatch = 16;
  size_t prefetched_ = 0;
  // The current request's arguments are `current`; the keys of the requests after it go to the
  // handler with its key, and those requests are read ahead (ReadAhead) for ProcessInput.
  void PrefetchAhead(std::span<const std::string_view> current);
  // Requests read ahead: the next ahead_left_ requests from in_start_ on are in this thread's
  // ring of them (connection.cc) from slot ahead_at_ on, unless a slot was since taken by
  // another connection. Reserve forgets them (the buffer may move).
  uint32_t ahead_at_ = 0;
  uint32_t ahead_left_ = 0;
  // Reads the request at in_ + at into the ring's next slot and counts it in ahead_left_ (the
  // first of a run starts a new one: `first`). Null if ReadAhead refuses it.
  const RequestAhead* RecordAhead(size_t at, bool first);
  // Completes the request at in_ + in_start_ from its slot (RequestParser::Take); false if the
  // slot is no longer this request's or the parser must read it (then none of the rest is used).
  bool TakeAhead();
  bool queued_ = false;  // in this thread's list of connections whose input runs at ProcessReady
  bool rearm_ = false;   // ...and ArmRecv after it (the multishot recv ended)
  size_t in_len_ = 0;    // bytes received

  std::string stash_;  // bytes received while a request was pending (multishot recv)

  // Output of a pipeline that stopped at a pending request is held back (FlushDirty) while the
  // pipeline advances — until kHoldGapNs pass without a pending request finishing, kHoldMaxNs
  // after it was first held, or it reaches kHoldBytes.
  static constexpr int64_t kHoldGapNs = 100'000;
  static constexpr int64_t kHoldMaxNs = 1'000'000;
  static constexpr size_t kHoldBytes = 64 * 1024;
  int64_t hold_start_ns_ = 0;  // MonotonicNs when the current output was first held, 0: not held
  int64_t hold_mark_ns_ = 0;   // ...or when a pending request last finished while it was held
  bool resumed_ = false;       // a pending request finished since FlushDirty last looked

  std::string out_;
  std::string sending_;
  size_t sent_ = 0;

  Op recv_op_;
  Op send_op_;
  bool recv_inflight_ = false;
  bool multishot_ = false;   // the recv in flight is multishot (provided buffers)
  bool no_buffers_ = false;  // the ring ran dry: the next recv is a plain one
  bool send_inflight_ = false;
  bool pending_ = false;  // a request is being handled asynchronously
  bool dirty_ = false;
  bool closing_ = false;  // stop reading; close once output is sent
  bool closed_ = false;   // socket shut; waiting for in-flight ops
  bool eof_ = false;
  bool outbound_ = false;
  bool detached_ = false;  // DetachTls gave the socket's I/O away
  bool lent_ = false;      // LendSocket: another worker sends the pending request's reply
};

}  // namespace lavik
