// Client administration, the pure parts: CLIENT KILL filters, MONITOR lines, the protected-mode
// decision and the client-output-buffer-limit state machine. Nothing here touches a connection
// or a worker, so every rule is unit-tested on its own (tests/client/client_admin_test.cc); the
// runtime side (pause queues, monitor fan-out, timers) is ClientHub (client_hub.h).
//
// Thread safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace lavik {

// Redis's client classes (CLIENT LIST TYPE, CLIENT KILL TYPE, client-output-buffer-limit).
enum class ClientType { kNormal, kReplica, kPubSub, kMaster };

// normal | master | replica | slave | pubsub, any case. False for anything else.
bool ParseClientType(std::string_view name, ClientType* type);

// CLIENT KILL's two forms. The old one (`CLIENT KILL ip:port`) kills every client with that
// address, the caller included, and answers +OK or "ERR No such client"; the new one
// (`CLIENT KILL <filter> <value> ...`) answers the number of clients killed.
struct KillFilter {
  bool old_form = false;
  std::string addr;   // "" = any
  std::string laddr;  // "" = any
  std::string user;   // "" = any
  uint64_t id = 0;    // 0 = any
  bool has_type = false;
  ClientType type = ClientType::kNormal;
  bool skipme = true;
  int64_t max_age_s = 0;  // 0 = any; else only clients older than this (Redis 7.4's MAXAGE)
};

// Parses the arguments after "CLIENT KILL" (args = the whole command). Returns "" or the error
// reply text (without '-'), exactly as Redis 7.0 words it. A USER filter is not checked for
// existence here (the caller knows the users).
std::string ParseKillFilter(std::span<const std::string_view> args, KillFilter* filter);

// What a kill filter looks at in one client.
struct ClientFacts {
  uint64_t id = 0;
  std::string_view addr;
  std::string_view laddr;
  std::string_view user;
  ClientType type = ClientType::kNormal;
  int64_t age_s = 0;
  bool is_caller = false;
};
bool KillFilterMatches(const KillFilter& filter, const ClientFacts& client);

// Appends `s` quoted as Redis's sdscatrepr does: "..." with \\ \" \n \r \t \a \b escaped, other
// printable ASCII as is, every other byte as \xHH.
void AppendRepr(std::string* out, std::string_view s);

// One MONITOR line as a RESP simple string, CRLF included:
//   +1700000000.123456 [0 127.0.0.1:60866] "set" "k" "v"
// Secrets are redacted as Redis 7.0 does: every argument of AUTH, and the user and password
// after HELLO's AUTH option, show as "(redacted)".
void AppendMonitorLine(std::string* out, int64_t unix_us, int db, std::string_view client_addr,
                       std::span<const std::string_view> args);

// Redis's reply to a client refused by protected mode (sent as "-" + text + "\r\n").
extern const std::string_view kProtectedModeDenied;

// True if a client from `peer_ip` (no port) must be refused: protected mode is on, the default
// user has no password, the server listens on some address that is not loopback (`bind`, the
// space-separated bind list; a leading '-' marks an optional address), and the peer is not a
// loopback address (127.0.0.0/8, ::1, or those mapped into IPv6).
bool ProtectedModeDenies(bool protected_mode, bool default_user_has_password, std::string_view bind,
                         std::string_view peer_ip);
bool IsLoopbackAddress(std::string_view ip);

// One class of client-output-buffer-limit: hard and soft byte limits (0 = none) and the seconds a
// client may stay over the soft limit.
struct OutputLimit {
  uint64_t hard = 0;
  uint64_t soft = 0;
  int64_t soft_seconds = 0;
  bool enabled() const { return hard != 0 || soft != 0; }
};

// Reads class `type` out of the normalized parameter value
// ("normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"). False if absent.
bool ParseOutputLimitClass(std::string_view value, ClientType type, OutputLimit* limit);

// Redis's checkClientOutputBufferLimits for one client: over the hard limit closes at once; over
// the soft limit closes once the client has stayed over it (checked on every addition) for more
// than soft_seconds; dropping under the soft limit starts the clock again.
class OutputLimitTracker {
 public:
  // `used`: bytes of output waiting for the client. Returns true if the client must be closed.
  bool Exceeded(const OutputLimit& limit, uint64_t used, int64_t now_ms);
  int64_t soft_since_ms() const { return soft_since_ms_; }

 private:
  int64_t soft_since_ms_ = 0;  // 0: under the soft limit
};

}  // namespace lavik
