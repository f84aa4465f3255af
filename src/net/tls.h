// TLS for client connections, with OpenSSL over memory BIOs so the io_uring recv/send path of
// Connection stays as it is: the connection receives ciphertext into the session's buffer, feeds
// it in and pulls plaintext out; it pushes plaintext replies in and drains ciphertext to send.
// No socket is ever handed to OpenSSL.
//
//   TlsSettings    the tls-* parameters, as Redis names them.
//   TlsContext     one SSL_CTX built from settings (certificate, key, CAs, protocols, ciphers,
//                  client authentication, session cache). Immutable once built; a reload builds a
//                  new one and swaps it in through TlsContextSlot.
//   TlsSession     one server-side SSL object with its rbio/wbio pair.
//
// Thread safety: TlsContext::Create and TlsContextSlot are safe from any thread. A TlsSession is
// created on the accepting thread and then used by one thread at a time: its connection's
// worker, or, after a replica's PSYNC, the replication thread, to which the connection hands it
// whole (Connection::DetachTls). It keeps its SSL_CTX alive by reference count, so swapping the
// slot never pulls a context from under a live session.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace lavik {

struct TlsSettings {
  enum class AuthClients { kNo, kYes, kOptional };

  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;  // empty: the key is not encrypted
  std::string ca_cert_file;
  std::string ca_cert_dir;
  std::string dh_params_file;
  AuthClients auth_clients = AuthClients::kYes;
  std::string protocols;     // "TLSv1.2 TLSv1.3" etc., any case; empty = TLSv1.2 and TLSv1.3
  std::string ciphers;       // TLSv1.2 and below, OpenSSL cipher list syntax; empty = default
  std::string ciphersuites;  // TLSv1.3; empty = default
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  long session_cache_size = 20480;
  long session_cache_timeout = 300;  // seconds
};

class TlsSession;

class TlsContext {
 public:
  // Builds the SSL_CTX. On failure returns nullptr and one line of error text, worded as
  // Redis logs it ("Failed to load certificate: server.crt: error:...: No such file...").
  static std::shared_ptr<TlsContext> Create(const TlsSettings& settings, std::string* error);
  // A client-side context (a replica's link to its master, as Redis's redis_tls_client_ctx):
  // the certificate and key it presents, the CA it verifies the server with (always).
  static std::shared_ptr<TlsContext> CreateClient(const TlsSettings& settings, std::string* error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A new server-side session (accept state), or nullptr if OpenSSL is out of memory.
  std::unique_ptr<TlsSession> NewSession() const;
  // A new client-side session (connect state), or nullptr if OpenSSL is out of memory.
  std::unique_ptr<TlsSession> NewClientSession() const;
  SSL_CTX* ssl_ctx() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  std::unique_ptr<TlsSession> NewSessionAs(bool client) const;
  SSL_CTX* ctx_;
};

// The context new connections use; CONFIG SET swaps it while connections are being accepted.
class TlsContextSlot {
 public:
  void Set(std::shared_ptr<TlsContext> ctx);
  std::shared_ptr<TlsContext> Get() const;
  bool enabled() const { return Get() != nullptr; }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<TlsContext> ctx_;
};

class TlsSession {
 public:
  // Ciphertext is received into this buffer: a TLS record is at most 16 KiB plus overhead, so a
  // few records per recv.
  static constexpr size_t kRecvBufferSize = 64 * 1024;

  // Takes ownership of ssl (in accept state, no BIOs attached yet).
  explicit TlsSession(SSL* ssl);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  char* recv_buffer() { return recv_buf_.get(); }

  // Feeds n bytes of received ciphertext (from recv_buffer() or elsewhere). Drives the handshake
  // and retries plaintext that waited for it. False once the session has failed (bad handshake,
  // bad record): error() says why; alerts to send may still be in the output.
  bool Feed(const char* data, size_t n);

  // Decrypts into dst: bytes written (> 0), 0 when no more plaintext is available now, -1 at the
  // end: a fatal error (failed(), see error()) or the peer's close_notify (closed_by_peer()).
  // Call until it returns <= 0 after each Feed.
  long ReadPlain(char* dst, size_t cap);

  // Encrypts plaintext for sending. Before the handshake completes it is queued and goes out
  // once the handshake is done. False if the session has failed (the data is dropped).
  bool WritePlain(std::string_view data);

  // Appends the ciphertext waiting to be sent (handshake messages, records, alerts) to out.
  void TakeOutput(std::string* out);
  bool has_output() const;

  bool handshake_done() const { return handshake_done_; }
  bool failed() const { return failed_; }
  // The peer sent close_notify: no more plaintext, like a TCP EOF (not a failure).
  bool closed_by_peer() const { return closed_by_peer_; }
  const std::string& error() const { return error_; }

 private:
  bool Advance();  // handshake step, then queued plaintext; false on failure
  void Fail(int ssl_error);

  SSL* ssl_;
  BIO* rbio_ = nullptr;  // network -> SSL (owned by ssl_)
  BIO* wbio_ = nullptr;  // SSL -> network (owned by ssl_)
  std::unique_ptr<char[]> recv_buf_;
  std::string queued_;  // plaintext written before the handshake completed
  bool handshake_done_ = false;
  bool failed_ = false;
  bool closed_by_peer_ = false;
  std::string error_;
};

// Where the net layer reports TLS failures (a refused handshake, a bad record): the server
// installs its logger once before connections are accepted; no sink, no report.
using TlsLogSink = void (*)(std::string_view message);
void SetTlsLogSink(TlsLogSink sink);
void TlsLog(std::string_view message);

// The text of OpenSSL's error queue (then cleared), e.g. "error:0A000086:SSL
// routines::certificate verify failed"; `fallback` if the queue is empty.
std::string TakeOpenSslError(std::string_view fallback);

}  // namespace lavik
