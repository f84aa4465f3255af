// ClientState: what the server knows about one client connection (name, RESP version, auth) and
// the slot for its one in-flight command.
//
// Thread safety: owned by the connection's worker; touched only there. CLIENT LIST reads other
// workers' clients by hopping to them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "commands/command.h"
#include "net/connection.h"
#include "protocol/reply_writer.h"

namespace lavik {

struct AclUser;

class ClientState {
 public:
  explicit ClientState(Connection* c) : conn(c), id(c->id()), writer(nullptr, 2) {}

  Connection* const conn;
  const uint64_t id;
  std::string name;
  int resp = 2;
  bool authenticated = false;
  std::string user = "default";
  // Snapshot of `user` (acl.h), re-read when Acl::version() moves past acl_version.
  std::shared_ptr<const AclUser> acl_user;
  uint64_t acl_version = 0;
  std::string_view last_command = "NULL";  // a CommandSpec name (static storage)

  // The command being run (Context must outlive a suspended handler, so it lives here).
  Context ctx;
  ReplyWriter writer;
  bool pending = false;            // a handler is suspended or runs on another worker
  bool closed = false;             // the socket is gone; free when the command finishes
  bool close_after_reply = false;  // QUIT: close once the reply is sent

  // Intrusive list of the worker's clients (for CLIENT LIST and shutdown).
  ClientState* prev = nullptr;
  ClientState* next = nullptr;
};

// One CLIENT LIST line (with its trailing newline), as Redis 7.0 formats it.
std::string ClientLine(const ClientState& cl, int64_t now_ms);

}  // namespace lavik
