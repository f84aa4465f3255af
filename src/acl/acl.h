// Acl: Redis 7.0 access control lists — users, their rules, and the permission check every
// command goes through (see doc/acl.md for the rules supported and the simplifications).
//
// Users are immutable snapshots (shared_ptr<const AclUser>): ACL SETUSER builds a modified copy
// and publishes it under a mutex, then bumps version(). A client keeps the snapshot of its user
// and re-reads it only when version() has moved, so the hot path is one relaxed atomic load plus,
// for the default "+@all ~* &*" user, one bool test.
//
// Thread safety: every public member may be called from any thread. Snapshots returned are
// immutable and may be read without locks. Static helpers are pure.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/command.h"

namespace lavik {

class CommandTable;

enum AclKeyAccess : uint8_t { kAclRead = 1, kAclWrite = 2, kAclReadWrite = 3 };

struct AclKeyPattern {
  std::string pattern;
  uint8_t access;  // AclKeyAccess bits
};

// One user, as ACL GETUSER shows it. Only Acl builds these; once published they never change.
struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  int sanitize = 0;                    // 0 not set, 1 sanitize-payload, 2 skip-sanitize-payload
  std::vector<std::string> passwords;  // SHA-256, 64 lowercase hex digits each
  std::vector<uint64_t> allowed;       // one bit per command index (Acl::Index)
  bool future_commands = false;        // set by +@all / allcommands, cleared by -@all only
  // "+cmd|firstarg" for commands without subcommands (Redis's deprecated first-arg rules).
  std::map<int, std::vector<std::string>> first_args;
  bool all_keys = false;
  std::vector<AclKeyPattern> keys;
  bool all_channels = false;
  std::vector<std::string> channels;
  // All commands, keys and channels: the dispatcher skips the check (computed when published).
  bool unrestricted = false;

  bool Allowed(int index) const { return (allowed[index >> 6] >> (index & 63)) & 1; }
};

// Why a command is refused; kOk when it may run. `arg` is the index into args of the key or
// channel refused.
struct AclVerdict {
  enum Kind { kOk, kCommand, kKey, kChannel } kind = kOk;
  int arg = 0;
};

class Acl {
 public:
  explicit Acl(const CommandTable& table);
  // acl-pubsub-default allchannels: new users (and ACL SETUSER reset) get &*, as in Redis.
  void set_pubsub_default_all(bool all) { pubsub_default_all_.store(all); }

  // Moves every time any user changes (acquire: a reader that sees it sees the new users).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // Redis's authRequired(): the default user is off or has no "nopass".
  bool default_needs_auth() const { return default_needs_auth_.load(std::memory_order_acquire); }

  std::shared_ptr<const AclUser> Find(std::string_view name) const;
  // All users, sorted by name.
  std::vector<std::shared_ptr<const AclUser>> Users() const;
  // The user if it exists, is on and `password` matches (or the user is nopass); else null.
  std::shared_ptr<const AclUser> Authenticate(std::string_view name,
                                              std::string_view password) const;

  // ACL SETUSER: applies `ops` to a copy of the user (a new user if none) and publishes it only
  // if every op is valid. On failure `error` is the whole reply text (with "ERR ").
  bool SetUser(std::string_view name, std::span<const std::string_view> ops, std::string* error);
  // ACL DELUSER: the number of users removed. "default" cannot be removed (checked by caller).
  int DelUsers(std::span<const std::string_view> names);
  // requirepass / CONFIG SET requirepass: "resetpass" then ">pass" (or "nopass" when empty).
  void SetDefaultPassword(std::string_view password);

  // Replaces every user with the file's (all or nothing). On failure returns false with Redis's
  // error text (without "ERR ") and changes nothing.
  bool LoadFile(const std::string& path, std::string* error);
  // Writes "user <name> <rules>" lines to a temp file, then renames it over `path`.
  bool SaveFile(const std::string& path, std::string* error) const;

  // The permission check. `spec` is the resolved command (a subcommand for containers).
  AclVerdict Check(const AclUser& user, const CommandSpec& spec,
                   std::span<const std::string_view> args) const;
  // Pub/Sub channel check for #4: a channel (PUBLISH, SUBSCRIBE) must match one of the user's
  // patterns; a pattern (PSUBSCRIBE) must equal one of them literally, as in Redis.
  static bool ChannelAllowed(const AclUser& user, std::string_view channel, bool is_pattern);

  // Descriptions in ACL LIST / GETUSER / file syntax.
  std::string Describe(const AclUser& user) const;  // without the leading "user <name> "
  std::string DescribeCommands(const AclUser& user) const;
  static std::string DescribeKeys(const AclUser& user);
  static std::string DescribeChannels(const AclUser& user);
  static std::vector<std::string_view> Flags(const AclUser& user);

  // ACL CAT.
  static std::span<const std::string_view> Categories();
  // Full names ("config|get") of the commands in a category; false if there is no such category.
  bool CommandsInCategory(std::string_view category, std::vector<std::string_view>* out) const;

  // Index of a command spec in the permission bitmaps, -1 if unknown.
  int Index(const CommandSpec* spec) const;
  // Looks a command up by full name ("get", "config|get"), case-insensitively.
  const CommandSpec* LookupCommand(std::string_view name) const;

  static std::string HashPassword(std::string_view password);

 private:
  struct CommandInfo {
    const CommandSpec* spec;
    int parent;           // index of the container, -1 for a top-level command
    uint32_t categories;  // bit i = Categories()[i]
    uint8_t key_access;   // AclKeyAccess a key argument needs (0: any matching pattern)
    std::vector<int> subs;
    // > 0: the command writes only the key at this argument and reads the others (SINTERSTORE,
    // ZUNIONSTORE... write args[1], COPY args[2]), so the others need only read access, as
    // Redis's key specs say.
    int written_key = 0;
  };

  // Applies one op to `u`; on failure returns the reason (ACLSetUserStringError's texts).
  bool ApplyOp(AclUser* u, std::string_view op, std::string* reason) const;
  void SetCommandBit(AclUser* u, int index, bool allow) const;
  void ChangeCommand(AclUser* u, int index, bool allow) const;
  void ChangeCategory(AclUser* u, uint32_t cat_bit, bool allow) const;
  std::shared_ptr<AclUser> NewUser(std::string_view name) const;
  std::shared_ptr<AclUser> DefaultUser() const;
  void Finish(AclUser* u) const;
  // Under mu_: stores the users and bumps the version.
  void PublishLocked();

  std::vector<CommandInfo> commands_;
  std::unordered_map<const CommandSpec*, int> index_;
  std::unordered_map<std::string, int> by_name_;  // lowercase full name -> index
  size_t words_ = 0;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> users_;
  std::atomic<uint64_t> version_{1};
  std::atomic<bool> default_needs_auth_{false};
  std::atomic<bool> pubsub_default_all_{false};
};

// Redis's ACLMergeSelectorArguments: joins "(a" "b)" into one "(a b)" op. False on an unmatched
// '(' with *bad set to the index of the op where it started.
bool MergeSelectorArgs(std::span<const std::string_view> in, std::vector<std::string>* out,
                       size_t* bad);

}  // namespace lavik
