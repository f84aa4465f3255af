// The ACL's hooks on the request path and in AUTH/HELLO: they tie a client (ClientState) to its
// user snapshot, refuse commands with Redis's NOPERM replies and record ACL LOG entries.
//
// Thread safety: call on the client's worker (they touch its ClientState); the Acl and AclLog
// they reach are safe from any thread.
#pragma once

#include <span>
#include <string_view>

#include "commands/command.h"

namespace lavik {

class ClientState;
class Server;

// Re-reads the client's user after an ACL change. False if the user no longer exists: the
// caller closes the connection (Redis closes the clients of a deleted user).
bool AclRefreshUser(Server& server, ClientState& cl);
// The dispatcher's check, after NOAUTH: true if the command may run; otherwise the NOPERM error
// has been written and an ACL LOG entry added.
bool AclPermitOrReply(Server& server, ClientState& cl, const CommandSpec& spec,
                      std::span<const std::string_view> args);
// AUTH / HELLO AUTH: on success the client is authenticated as `user`; on failure an "auth"
// entry is logged (object: the command name as sent) and false returned.
bool AclAuthenticate(Server& server, ClientState& cl, std::string_view user,
                     std::string_view password, std::string_view command);

}  // namespace lavik
