// SocketSource: the replica's end of the link to its master while it hands-shakes and reads the
// full-sync RDB. A blocking reader over a connected socket, through a fixed buffer (256 KiB), so
// an RDB of any size streams into the decoder (rdb/source.h) with bounded memory.
//
// Every wait is bounded: a read polls in short steps, gives up once `cancelled()` is true (a new
// REPLICAOF, shutdown) or after `timeout_ms` without a byte (repl-timeout), and then fails like an
// end of input, with error() saying why. Bytes read past what the decoder took (the command
// stream that follows the RDB) are handed over by TakeBuffered.
//
// Thread safety: one thread at a time (the replication thread).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "rdb/source.h"

namespace lavik {

class TlsSession;

class SocketSource : public rdb::BufferedSource {
 public:
  SocketSource(int fd, std::function<bool()> cancelled, int64_t timeout_ms);

  // One line without its "\r\n" (or "\n"); false at the end, on a timeout or past 64 KiB.
  bool ReadLine(std::string* line);
  // Writes all of `bytes` (bounded like the reads).
  bool WriteAll(std::string_view bytes);

  // tls-replication: from now on the link speaks TLS through `tls` (a client session, not
  // owned), after its handshake, which this runs (bounded like the reads). False on failure.
  bool StartTls(TlsSession* tls);

  std::string TakeBuffered();  // received (decrypted), not handed out yet
  const std::string& error() const { return error_; }

 private:
  bool Refill() override;
  bool SendRaw(std::string_view bytes);
  size_t RecvRaw(char* dst, size_t cap);  // > 0 bytes received; 0 with error_ set
  bool FlushTls();                        // the session's ciphertext to the socket
  bool RecvTls();                         // ciphertext from the socket into the session
  TlsSession* tls_ = nullptr;
  int fd_;
  std::function<bool()> cancelled_;
  int64_t timeout_ms_;
  std::string error_;
};

// `args` as a RESP array of bulk strings (what the replica sends its master).
std::string RespArray(std::initializer_list<std::string_view> args);

// Connects to host:port (a name or an address), waiting at most timeout_ms; the socket (or -1
// with *error set).
int ConnectTcp(const std::string& host, int port, int64_t timeout_ms,
               const std::function<bool()>& cancelled, std::string* error);

}  // namespace lavik
