#include "acl/acl.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/glob.h"
#include "commands/command_keys.h"
#include "commands/command_table.h"

namespace lavik {
namespace {

// Redis 7.0's categories, in ACL CAT order.
constexpr std::string_view kCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};

// ACLSetUserStringError's texts.
constexpr std::string_view kErrNoEnt = "Unknown command or category name in ACL";
constexpr std::string_view kErrInval = "Syntax error";
constexpr std::string_view kErrAllKeys =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
    "any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kErrAllChannels =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
    "have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kErrNoPass =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kErrBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kErrFirstArgOfSub =
    "Allowing first-arg of a subcommand is not supported";

// Redis's key specs say whether a command reads a key's value (ACCESS) and whether it changes it;
// Lavik has only the command's write/read-only flag. These exceptions make the common commands
// need what Redis's key specs say: read-modify-write commands need both, and commands that only
// look at a key's existence or metadata accept any matching pattern.
constexpr std::string_view kReadWriteCommands[] = {"incr",        "incrby", "decr",   "decrby",
                                                   "incrbyfloat", "getdel", "getset", "getex"};
// Commands that write one key and only read the others: {name, the written key's argument}.
constexpr std::pair<std::string_view, int> kOneWrittenKey[] = {
    {"sinterstore", 1}, {"sunionstore", 1}, {"sdiffstore", 1}, {"zrangestore", 1},
    {"zunionstore", 1}, {"zinterstore", 1}, {"zdiffstore", 1}, {"copy", 2}};
constexpr std::string_view kMetadataCommands[] = {"exists",     "type",        "ttl",  "pttl",
                                                  "expiretime", "pexpiretime", "touch"};

uint32_t CategoryBit(std::string_view name) {
  for (size_t i = 0; i < std::size(kCategories); ++i) {
    if (EqualsNoCase(kCategories[i], name)) return 1u << i;
  }
  return 0;
}

uint32_t ParseCategories(std::string_view list) {
  uint32_t bits = 0;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(' ', pos);
    if (end == std::string_view::npos) end = list.size();
    std::string_view word = list.substr(pos, end - pos);
    if (!word.empty() && word[0] == '@') bits |= CategoryBit(word.substr(1));
    pos = end + 1;
  }
  return bits;
}

bool HasSpaceOrNul(std::string_view s) {
  for (char c : s) {
    if (c == ' ' || c == '\0' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      return true;
    }
  }
  return false;
}

bool ValidHash(std::string_view h) {
  if (h.size() != 64) return false;
  for (char c : h) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  return out;
}

std::string PatternString(const AclKeyPattern& p) {
  std::string s = p.access == kAclReadWrite ? "~" : p.access == kAclRead ? "%R~" : "%W~";
  return s + p.pattern;
}

// Constant-time comparison of two equal-length hex digests, so AUTH timing reveals nothing.
bool SameDigest(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

bool MergeSelectorArgs(std::span<const std::string_view> in, std::vector<std::string>* out,
                       size_t* bad) {
  out->clear();
  std::string open;
  bool in_selector = false;
  size_t start = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    std::string_view op = in[i];
    if (!in_selector && !op.empty() && op[0] == '(' && op.back() != ')') {
      open = std::string(op);
      in_selector = true;
      start = i;
    } else if (in_selector) {
      open += " ";
      open += op;
      if (!op.empty() && op.back() == ')') {
        out->push_back(std::move(open));
        open.clear();
        in_selector = false;
      }
    } else {
      out->emplace_back(op);
    }
  }
  if (in_selector) {
    *bad = start;
    return false;
  }
  return true;
}

std::string Acl::HashPassword(std::string_view password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

Acl::Acl(const CommandTable& table) {
  auto add = [this](const CommandSpec* spec, int parent) {
    CommandInfo info{spec, parent, ParseCategories(spec->acl_categories), 0, {}};
    if (spec->flags & kCmdWrite) info.key_access |= kAclWrite;
    if (spec->flags & kCmdReadOnly) info.key_access |= kAclRead;
    if (info.key_access == 0) info.key_access = kAclReadWrite;
    for (std::string_view n : kReadWriteCommands) {
      if (spec->name == n) info.key_access = kAclReadWrite;
    }
    for (std::string_view n : kMetadataCommands) {
      if (spec->name == n) info.key_access = 0;
    }
    for (const auto& [n, arg] : kOneWrittenKey) {
      if (spec->name == n) info.written_key = arg;
    }
    int index = static_cast<int>(commands_.size());
    commands_.push_back(std::move(info));
    index_.emplace(spec, index);
    by_name_.emplace(std::string(spec->name), index);
    return index;
  };
  for (const CommandSpec* spec : table.all()) {
    int parent = add(spec, -1);
    for (const CommandSpec& sub : spec->subcommands) {
      int child = add(&sub, parent);
      commands_[parent].subs.push_back(child);
    }
  }
  words_ = (commands_.size() + 63) / 64;
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<AclUser> def = DefaultUser();
  users_["default"] = def;
  PublishLocked();
}

int Acl::Index(const CommandSpec* spec) const {
  auto it = index_.find(spec);
  return it == index_.end() ? -1 : it->second;
}

const CommandSpec* Acl::LookupCommand(std::string_view name) const {
  auto it = by_name_.find(Lower(name));
  return it == by_name_.end() ? nullptr : commands_[it->second].spec;
}

std::span<const std::string_view> Acl::Categories() { return kCategories; }

bool Acl::CommandsInCategory(std::string_view category, std::vector<std::string_view>* out) const {
  uint32_t bit = CategoryBit(category);
  if (bit == 0) return false;
  for (const CommandInfo& c : commands_) {
    if (c.categories & bit) out->push_back(c.spec->name);
  }
  return true;
}

std::shared_ptr<AclUser> Acl::NewUser(std::string_view name) const {
  auto u = std::make_shared<AclUser>();
  u->name = std::string(name);
  u->allowed.assign(words_, 0);
  u->all_channels = pubsub_default_all_.load();
  return u;
}

std::shared_ptr<AclUser> Acl::DefaultUser() const {
  std::shared_ptr<AclUser> u = NewUser("default");
  std::string ignored;
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) ApplyOp(u.get(), op, &ignored);
  Finish(u.get());
  return u;
}

void Acl::Finish(AclUser* u) const {
  bool all = u->all_keys && u->all_channels;
  for (size_t i = 0; all && i < commands_.size(); ++i) all = u->Allowed(static_cast<int>(i));
  u->unrestricted = all;
}

void Acl::PublishLocked() {
  auto it = users_.find("default");
  const AclUser& d = *it->second;
  default_needs_auth_.store(!d.enabled || !d.nopass, std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const AclUser> Acl::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const AclUser>> Acl::Users() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const AclUser>> out;
  for (const auto& [name, u] : users_) out.push_back(u);
  return out;
}

std::shared_ptr<const AclUser> Acl::Authenticate(std::string_view name,
                                                 std::string_view password) const {
  std::shared_ptr<const AclUser> u = Find(name);
  if (u == nullptr || !u->enabled) return nullptr;
  if (u->nopass) return u;
  std::string hashed = HashPassword(password);
  for (const std::string& p : u->passwords) {
    if (SameDigest(hashed, p)) return u;
  }
  return nullptr;
}

void Acl::SetCommandBit(AclUser* u, int index, bool allow) const {
  uint64_t bit = uint64_t{1} << (index & 63);
  // Unlike Redis 6, 7.0 keeps the "future commands" bit when single commands are removed: only
  // -@all (nocommands, reset) clears it, so "+@all -get" stays "+@all -get".
  if (allow) {
    u->allowed[index >> 6] |= bit;
  } else {
    u->allowed[index >> 6] &= ~bit;
  }
}

void Acl::ChangeCommand(AclUser* u, int index, bool allow) const {
  SetCommandBit(u, index, allow);
  u->first_args.erase(index);
  for (int sub : commands_[index].subs) SetCommandBit(u, sub, allow);
}

void Acl::ChangeCategory(AclUser* u, uint32_t cat_bit, bool allow) const {
  for (size_t i = 0; i < commands_.size(); ++i) {
    if (commands_[i].categories & cat_bit) ChangeCommand(u, static_cast<int>(i), allow);
  }
}

bool Acl::ApplyOp(AclUser* u, std::string_view op, std::string* reason) const {
  auto fail = [reason](std::string_view why) {
    *reason = std::string(why);
    return false;
  };
  if (op.empty()) return true;
  if (EqualsNoCase(op, "on")) {
    u->enabled = true;
  } else if (EqualsNoCase(op, "off")) {
    u->enabled = false;
  } else if (EqualsNoCase(op, "skip-sanitize-payload")) {
    u->sanitize = 2;
  } else if (EqualsNoCase(op, "sanitize-payload")) {
    u->sanitize = 1;
  } else if (EqualsNoCase(op, "nopass")) {
    u->nopass = true;
    u->passwords.clear();
  } else if (EqualsNoCase(op, "resetpass")) {
    u->nopass = false;
    u->passwords.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = HashPassword(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) return fail(kErrBadHash);
      hash = std::string(op.substr(1));
    }
    if (std::find(u->passwords.begin(), u->passwords.end(), hash) == u->passwords.end()) {
      u->passwords.push_back(std::move(hash));
    }
    u->nopass = false;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = HashPassword(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) return fail(kErrBadHash);
      hash = std::string(op.substr(1));
    }
    auto it = std::find(u->passwords.begin(), u->passwords.end(), hash);
    if (it == u->passwords.end()) return fail(kErrNoPass);
    u->passwords.erase(it);
  } else if (EqualsNoCase(op, "clearselectors")) {
    // Selectors are not supported (doc/acl.md): a user never has any to clear.
  } else if (EqualsNoCase(op, "reset")) {
    for (std::string_view o :
         {"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "-@all"}) {
      ApplyOp(u, o, reason);
    }
    if (pubsub_default_all_.load()) u->all_channels = true;  // acl-pubsub-default allchannels
  } else if (EqualsNoCase(op, "allkeys") || EqualsNoCase(op, "~*")) {
    u->all_keys = true;
    u->keys.clear();
  } else if (EqualsNoCase(op, "resetkeys")) {
    u->all_keys = false;
    u->keys.clear();
  } else if (EqualsNoCase(op, "allchannels") || EqualsNoCase(op, "&*")) {
    u->all_channels = true;
    u->channels.clear();
  } else if (EqualsNoCase(op, "resetchannels")) {
    u->all_channels = false;
    u->channels.clear();
  } else if (EqualsNoCase(op, "allcommands") || EqualsNoCase(op, "+@all")) {
    std::fill(u->allowed.begin(), u->allowed.end(), ~uint64_t{0});
    u->future_commands = true;
    u->first_args.clear();
  } else if (EqualsNoCase(op, "nocommands") || EqualsNoCase(op, "-@all")) {
    std::fill(u->allowed.begin(), u->allowed.end(), 0);
    u->future_commands = false;
    u->first_args.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (u->all_keys) return fail(kErrAllKeys);
    uint8_t access = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      for (; offset < op.size(); ++offset) {
        char c = op[offset];
        if ((c == 'R' || c == 'r') && !(access & kAclRead)) {
          access |= kAclRead;
        } else if ((c == 'W' || c == 'w') && !(access & kAclWrite)) {
          access |= kAclWrite;
        } else if (c == '~') {
          ++offset;
          break;
        } else {
          return fail(kErrInval);
        }
      }
      // As Redis 7.0, "%R" without '~' is accepted (an empty pattern); only the flags are required.
      if (access == 0) return fail(kErrInval);
    } else {
      access = kAclReadWrite;
    }
    std::string_view pattern = op.substr(offset);
    if (HasSpaceOrNul(pattern)) return fail(kErrInval);
    auto it = std::find_if(u->keys.begin(), u->keys.end(),
                           [&](const AclKeyPattern& p) { return p.pattern == pattern; });
    if (it == u->keys.end()) {
      u->keys.push_back({std::string(pattern), access});
    } else {
      it->access |= access;
    }
  } else if (op[0] == '&') {
    if (u->all_channels) return fail(kErrAllChannels);
    std::string_view pattern = op.substr(1);
    if (HasSpaceOrNul(pattern)) return fail(kErrInval);
    if (std::find(u->channels.begin(), u->channels.end(), pattern) == u->channels.end()) {
      u->channels.emplace_back(pattern);
    }
  } else if ((op[0] == '+' || op[0] == '-') && op.size() > 1 && op[1] == '@') {
    uint32_t bit = CategoryBit(op.substr(2));
    if (bit == 0) return fail(kErrNoEnt);
    ChangeCategory(u, bit, op[0] == '+');
  } else if (op[0] == '-') {
    const CommandSpec* spec = LookupCommand(op.substr(1));
    if (spec == nullptr) return fail(kErrNoEnt);
    ChangeCommand(u, Index(spec), false);
  } else if (op[0] == '+') {
    std::string_view name = op.substr(1);
    size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandSpec* spec = LookupCommand(name);
      if (spec == nullptr) return fail(kErrNoEnt);
      ChangeCommand(u, Index(spec), true);
      return true;
    }
    const CommandSpec* spec = LookupCommand(name.substr(0, bar));
    std::string_view sub = name.substr(bar + 1);
    if (spec == nullptr) return fail(kErrNoEnt);
    int index = Index(spec);
    if (commands_[index].parent >= 0) return fail(kErrFirstArgOfSub);
    if (sub.empty()) return fail(kErrInval);
    if (!commands_[index].subs.empty()) {
      const CommandSpec* full = LookupCommand(name);
      if (full == nullptr) return fail(kErrNoEnt);
      ChangeCommand(u, Index(full), true);
    } else {
      std::vector<std::string>& args = u->first_args[index];
      bool known = false;
      for (const std::string& a : args) known = known || EqualsNoCase(a, sub);
      if (!known) args.emplace_back(sub);
    }
  } else {
    // Also "(...)": selectors are not supported (doc/acl.md), so they fail as unknown ops do.
    return fail(kErrInval);
  }
  return true;
}

bool Acl::SetUser(std::string_view name, std::span<const std::string_view> ops,
                  std::string* error) {
  if (HasSpaceOrNul(name)) {
    *error = "ERR Usernames can't contain spaces or null characters";
    return false;
  }
  std::vector<std::string> merged;
  size_t bad = 0;
  if (!MergeSelectorArgs(ops, &merged, &bad)) {
    *error =
        "ERR Unmatched parenthesis in acl selector starting at '" + std::string(ops[bad]) + "'.";
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(name);
  std::shared_ptr<AclUser> u =
      it == users_.end() ? NewUser(name) : std::make_shared<AclUser>(*it->second);
  for (const std::string& op : merged) {
    std::string reason;
    if (!ApplyOp(u.get(), op, &reason)) {
      *error = "ERR Error in ACL SETUSER modifier '" + op + "': " + reason;
      return false;
    }
  }
  Finish(u.get());
  users_[std::string(name)] = std::move(u);
  PublishLocked();
  return true;
}

int Acl::DelUsers(std::span<const std::string_view> names) {
  std::lock_guard<std::mutex> lock(mu_);
  int deleted = 0;
  for (std::string_view name : names) {
    if (name == "default") continue;
    auto it = users_.find(name);
    if (it != users_.end()) {
      users_.erase(it);
      ++deleted;
    }
  }
  if (deleted > 0) PublishLocked();
  return deleted;
}

void Acl::SetDefaultPassword(std::string_view password) {
  std::lock_guard<std::mutex> lock(mu_);
  auto u = std::make_shared<AclUser>(*users_["default"]);
  std::string ignored;
  ApplyOp(u.get(), "resetpass", &ignored);
  ApplyOp(u.get(), password.empty() ? std::string("nopass") : ">" + std::string(password),
          &ignored);
  Finish(u.get());
  users_["default"] = std::move(u);
  PublishLocked();
}

AclVerdict Acl::Check(const AclUser& user, const CommandSpec& spec,
                      std::span<const std::string_view> args) const {
  AclVerdict v;
  if (user.unrestricted) return v;
  int index = Index(&spec);
  if (index < 0) return v;
  // AUTH and HELLO must stay usable by every user, as in Redis.
  if (!user.Allowed(index) && !(spec.flags & kCmdNoAuth)) {
    bool first_arg_ok = false;
    auto it = user.first_args.find(index);
    if (it != user.first_args.end() && args.size() > 1) {
      for (const std::string& a : it->second)
        first_arg_ok = first_arg_ok || EqualsNoCase(a, args[1]);
    }
    if (!first_arg_ok) {
      v.kind = AclVerdict::kCommand;
      return v;
    }
  }
  // Channels: PUBLISH/SPUBLISH name one, (S|P)SUBSCRIBE several; the unsubscribe commands are
  // never refused, as in Redis. (They have no keys, so the key check below does not apply.)
  if (!user.all_channels && (spec.flags & kCmdPubSub)) {
    const std::string_view n = spec.name;
    const bool is_pattern = n == "psubscribe";
    size_t end = 0;
    if (n == "publish" || n == "spublish") {
      end = std::min<size_t>(args.size(), 2);
    } else if (n == "subscribe" || n == "ssubscribe" || is_pattern) {
      end = args.size();
    }
    for (size_t i = 1; i < end; ++i) {
      if (!ChannelAllowed(user, args[i], is_pattern)) {
        v.kind = AclVerdict::kChannel;
        v.arg = static_cast<int>(i);
        return v;
      }
    }
  }
  if (user.all_keys) return v;
  const CommandInfo& info = commands_[index];
  auto allowed = [&](int i) {
    const uint8_t need =
        info.written_key > 0 && i != info.written_key ? uint8_t{kAclRead} : info.key_access;
    for (const AclKeyPattern& p : user.keys) {
      if ((p.access & need) == need && GlobMatch(p.pattern, args[i])) return true;
    }
    return false;
  };
  // Every key the call names (fixed and movable: numkeys, STREAMS, ZUNIONSTORE's sources); a
  // call whose movable keys cannot be located is rejected by the command itself.
  std::vector<KeyRef> keys;
  CommandKeys(spec, args, &keys);
  for (const KeyRef& k : keys) {
    if (!allowed(k.arg)) {
      v.kind = AclVerdict::kKey;
      v.arg = k.arg;
      return v;
    }
  }
  return v;
}

bool Acl::ChannelAllowed(const AclUser& user, std::string_view channel, bool is_pattern) {
  if (user.all_channels) return true;
  for (const std::string& p : user.channels) {
    if (is_pattern ? p == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

std::vector<std::string_view> Acl::Flags(const AclUser& user) {
  std::vector<std::string_view> f;
  f.push_back(user.enabled ? "on" : "off");
  if (user.nopass) f.push_back("nopass");
  if (user.sanitize == 2) f.push_back("skip-sanitize-payload");
  if (user.sanitize == 1) f.push_back("sanitize-payload");
  return f;
}

std::string Acl::DescribeKeys(const AclUser& user) {
  if (user.all_keys) return "~*";
  std::string s;
  for (const AclKeyPattern& p : user.keys) {
    if (!s.empty()) s += ' ';
    s += PatternString(p);
  }
  return s;
}

std::string Acl::DescribeChannels(const AclUser& user) {
  if (user.all_channels) return "&*";
  std::string s;
  for (const std::string& p : user.channels) {
    if (!s.empty()) s += ' ';
    s += "&" + p;
  }
  return s;
}

// Like Redis 7.0: start from +@all or -@all, then greedily add the categories that describe the
// most commands with the fewest exceptions, then the single commands that still differ.
std::string Acl::DescribeCommands(const AclUser& user) const {
  const bool additive = !user.future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  AclUser fake;
  fake.allowed.assign(words_, additive ? 0 : ~uint64_t{0});
  AclUser temp;
  temp.allowed = user.allowed;
  bool applied[std::size(kCategories)] = {};
  while (true) {
    int best = -1;
    size_t min_diff = SIZE_MAX, max_same = 0;
    for (size_t j = 0; j < std::size(kCategories); ++j) {
      if (applied[j]) continue;
      size_t on = 0, off = 0;
      for (size_t i = 0; i < commands_.size(); ++i) {
        if (!(commands_[i].categories & (1u << j))) continue;
        temp.Allowed(static_cast<int>(i)) ? ++on : ++off;
      }
      size_t diff = additive ? off : on;
      size_t same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = static_cast<int>(j);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    ChangeCategory(&fake, 1u << best, additive);
    ChangeCategory(&temp, 1u << best, !additive);
    rules += (additive ? "+@" : "-@") + std::string(kCategories[best]) + " ";
    applied[best] = true;
  }
  for (size_t i = 0; i < commands_.size(); ++i) {
    const int idx = static_cast<int>(i);
    bool mine = user.Allowed(idx);
    if (mine != fake.Allowed(idx)) {
      rules += (mine ? "+" : "-") + std::string(commands_[i].spec->name) + " ";
      ChangeCommand(&fake, idx, mine);
    }
    auto it = user.first_args.find(idx);
    if (!mine && it != user.first_args.end()) {
      for (const std::string& a : it->second) {
        rules += "+" + std::string(commands_[i].spec->name) + "|" + a + " ";
      }
    }
  }
  rules.pop_back();
  return rules;
}

std::string Acl::Describe(const AclUser& user) const {
  std::string s;
  for (std::string_view f : Flags(user)) s += std::string(f) + " ";
  for (const std::string& p : user.passwords) s += "#" + p + " ";
  if (user.all_keys) {
    s += "~* ";
  } else {
    for (const AclKeyPattern& p : user.keys) s += PatternString(p) + " ";
  }
  if (user.all_channels) {
    s += "&* ";
  } else {
    s += "resetchannels ";
    for (const std::string& p : user.channels) s += "&" + p + " ";
  }
  return s + DescribeCommands(user);
}

bool Acl::LoadFile(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> users;
  std::string errors;
  size_t pos = 0;
  for (int linenum = 1; pos <= text.size(); ++linenum) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    while (!line.empty() && strchr(" \t\r\n", line.front())) line.remove_prefix(1);
    while (!line.empty() && strchr(" \t\r\n", line.back())) line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> words;
    size_t w = 0;
    while (true) {
      size_t sp = line.find(' ', w);
      words.push_back(line.substr(w, sp == std::string_view::npos ? sp : sp - w));
      if (sp == std::string_view::npos) break;
      w = sp + 1;
    }
    const std::string where = path + ":" + std::to_string(linenum);
    if (words[0] != "user" || words.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    if (HasSpaceOrNul(words[1])) {
      errors +=
          "'" + where + ": username '" + std::string(words[1]) + "' contains invalid characters. ";
      continue;
    }
    if (users.count(words[1]) != 0) {
      errors += "WARNING: Duplicate user '" + std::string(words[1]) + "' found on line " +
                std::to_string(linenum) + ". ";
      continue;
    }
    std::shared_ptr<AclUser> u = NewUser(words[1]);
    std::vector<std::string> ops;
    size_t bad = 0;
    if (!MergeSelectorArgs(std::span(words).subspan(2), &ops, &bad)) {
      errors += where + ": Unmatched parenthesis in selector definition.";
    }
    bool line_ok = true;
    for (std::string& op : ops) {
      while (!op.empty() && strchr("\t\r\n", op.back())) op.pop_back();
      std::string reason;
      if (!ApplyOp(u.get(), op, &reason)) {
        errors += where + ": " + reason + ". ";
        line_ok = false;
      }
    }
    if (!line_ok) continue;
    Finish(u.get());
    users[u->name] = std::move(u);
  }
  if (!errors.empty()) {
    *error = errors +
             "WARNING: ACL errors detected, no change to the previously active ACL rules was "
             "performed";
    return false;
  }
  if (users.count("default") == 0) users["default"] = DefaultUser();
  std::lock_guard<std::mutex> lock(mu_);
  users_ = std::move(users);
  PublishLocked();
  return true;
}

bool Acl::SaveFile(const std::string& path, std::string* error) const {
  std::string text;
  for (const std::shared_ptr<const AclUser>& u : Users()) {
    text += "user " + u->name + " " + Describe(*u) + "\n";
  }
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(NowMs());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    *error = "Opening temp ACL file for ACL SAVE: " + std::string(std::strerror(errno));
    return false;
  }
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok) *error = "Writing ACL file for ACL SAVE: " + std::string(std::strerror(errno));
  // The rename makes the new file visible whole or not at all; fsync first so a crash right
  // after cannot leave an empty file under the real name.
  if (ok && fsync(fd) != 0) {
    *error = "Syncing ACL file for ACL SAVE: " + std::string(std::strerror(errno));
    ok = false;
  }
  close(fd);
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "Renaming ACL file for ACL SAVE: " + std::string(std::strerror(errno));
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

}  // namespace lavik
