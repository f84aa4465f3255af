#include "client/client_admin.h"

#include <arpa/inet.h>

#include <cstdio>

#include "base/ascii.h"
#include "base/numbers.h"

namespace lavik {

bool ParseClientType(std::string_view name, ClientType* type) {
  if (EqualsNoCase(name, "normal")) {
    *type = ClientType::kNormal;
  } else if (EqualsNoCase(name, "replica") || EqualsNoCase(name, "slave")) {
    *type = ClientType::kReplica;
  } else if (EqualsNoCase(name, "pubsub")) {
    *type = ClientType::kPubSub;
  } else if (EqualsNoCase(name, "master")) {
    *type = ClientType::kMaster;
  } else {
    return false;
  }
  return true;
}

std::string ParseKillFilter(std::span<const std::string_view> args, KillFilter* f) {
  *f = KillFilter{};
  if (args.size() == 3) {
    f->old_form = true;
    f->addr = std::string(args[2]);
    f->skipme = false;  // the old form may kill the caller too
    return "";
  }
  // Options come in pairs; a dangling option is a syntax error, as in Redis.
  for (size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return "ERR syntax error";
    std::string_view opt = args[i];
    std::string_view val = args[i + 1];
    if (EqualsNoCase(opt, "id")) {
      int64_t id;
      if (!ParseInt64(val, &id) || id <= 0) return "ERR client-id should be greater than 0";
      f->id = static_cast<uint64_t>(id);
    } else if (EqualsNoCase(opt, "type")) {
      if (!ParseClientType(val, &f->type)) {
        return "ERR Unknown client type '" + std::string(val) + "'";
      }
      f->has_type = true;
    } else if (EqualsNoCase(opt, "addr")) {
      f->addr = std::string(val);
    } else if (EqualsNoCase(opt, "laddr")) {
      f->laddr = std::string(val);
    } else if (EqualsNoCase(opt, "user")) {
      f->user = std::string(val);
    } else if (EqualsNoCase(opt, "skipme")) {
      if (EqualsNoCase(val, "yes")) {
        f->skipme = true;
      } else if (EqualsNoCase(val, "no")) {
        f->skipme = false;
      } else {
        return "ERR syntax error";
      }
    } else if (EqualsNoCase(opt, "maxage")) {
      int64_t age;
      if (!ParseInt64(val, &age)) return "ERR value is not an integer or out of range";
      f->max_age_s = age;
    } else {
      return "ERR syntax error";
    }
  }
  return "";
}

bool KillFilterMatches(const KillFilter& f, const ClientFacts& c) {
  if (!f.addr.empty() && f.addr != c.addr) return false;
  if (!f.laddr.empty() && f.laddr != c.laddr) return false;
  if (!f.user.empty() && f.user != c.user) return false;
  if (f.id != 0 && f.id != c.id) return false;
  if (f.has_type && f.type != c.type) return false;
  if (f.skipme && c.is_caller) return false;
  if (f.max_age_s > 0 && c.age_s <= f.max_age_s) return false;
  return true;
}

void AppendRepr(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char ch : s) {
    switch (ch) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (ch >= 0x20 && ch < 0x7f) {
          out->push_back(ch);
        } else {
          char hex[5];
          std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(ch));
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

void AppendMonitorLine(std::string* out, int64_t unix_us, int db, std::string_view client_addr,
                       std::span<const std::string_view> args) {
  char head[64];
  std::snprintf(head, sizeof(head), "+%lld.%06lld [%d ", static_cast<long long>(unix_us / 1000000),
                static_cast<long long>(unix_us % 1000000), db);
  out->append(head);
  out->append(client_addr);
  out->push_back(']');
  const bool auth = !args.empty() && EqualsNoCase(args[0], "auth");
  const bool hello = !args.empty() && EqualsNoCase(args[0], "hello");
  // HELLO [protover [AUTH user pass] [SETNAME name]]: walk its options as HELLO parses them, so
  // a client named "auth" is not mistaken for the option.
  size_t redact_from = args.size(), redact_to = 0;
  for (size_t i = 2; hello && i < args.size(); ++i) {
    if (EqualsNoCase(args[i], "auth") && i + 2 < args.size()) {
      redact_from = i + 1;
      redact_to = i + 3;
      i += 2;
    } else if (EqualsNoCase(args[i], "setname")) {
      ++i;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    out->push_back(' ');
    if ((auth && i > 0) || (i >= redact_from && i < redact_to)) {
      out->append("\"(redacted)\"");
    } else {
      AppendRepr(out, args[i]);
    }
  }
  out->append("\r\n");
}

const std::string_view kProtectedModeDenied =
    "DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host the "
    "server is running, however MAKE SURE Redis is not publicly accessible from internet if you "
    "do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.";

bool IsLoopbackAddress(std::string_view ip) {
  if (EqualsNoCase(ip, "localhost")) return true;
  std::string s(ip);
  in_addr v4;
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, s.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

bool ProtectedModeDenies(bool protected_mode, bool default_user_has_password, std::string_view bind,
                         std::string_view peer_ip) {
  if (!protected_mode || default_user_has_password) return false;
  if (IsLoopbackAddress(peer_ip)) return false;
  // With only loopback addresses bound no outside client can reach us in the first place; Redis
  // 7.0 does not look at the bind list, so this changes no decision it would make.
  bool loopback_only = true;
  size_t start = 0;
  while (start <= bind.size()) {
    size_t sp = bind.find(' ', start);
    std::string_view addr = bind.substr(start, sp == std::string_view::npos ? sp : sp - start);
    if (!addr.empty() && addr[0] == '-') addr.remove_prefix(1);
    if (!addr.empty() && !IsLoopbackAddress(addr)) loopback_only = false;
    if (sp == std::string_view::npos) break;
    start = sp + 1;
  }
  return !loopback_only || bind.empty();
}

bool ParseOutputLimitClass(std::string_view value, ClientType type, OutputLimit* limit) {
  std::string_view want = type == ClientType::kPubSub    ? "pubsub"
                          : type == ClientType::kReplica ? "slave"
                                                         : "normal";
  // Groups of four words: class hard soft seconds.
  std::string_view words[4];
  int n = 0;
  size_t i = 0;
  while (i <= value.size()) {
    size_t sp = value.find(' ', i);
    std::string_view w = value.substr(i, sp == std::string_view::npos ? sp : sp - i);
    if (!w.empty()) {
      words[n++] = w;
      if (n == 4) {
        n = 0;
        uint64_t hard, soft;
        int64_t secs;
        if (EqualsNoCase(words[0], want) && ParseUint64(words[1], &hard) &&
            ParseUint64(words[2], &soft) && ParseInt64(words[3], &secs)) {
          *limit = OutputLimit{hard, soft, secs};
          return true;
        }
      }
    }
    if (sp == std::string_view::npos) break;
    i = sp + 1;
  }
  return false;
}

bool OutputLimitTracker::Exceeded(const OutputLimit& limit, uint64_t used, int64_t now_ms) {
  if (limit.hard != 0 && used >= limit.hard) return true;
  if (limit.soft == 0 || used < limit.soft) {
    soft_since_ms_ = 0;
    return false;
  }
  if (soft_since_ms_ == 0) {
    soft_since_ms_ = now_ms;  // first time over: the clock starts
    return false;
  }
  return now_ms - soft_since_ms_ > limit.soft_seconds * 1000;
}

}  // namespace lavik
