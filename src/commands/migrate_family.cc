// MIGRATE (commands/migrate.h): Redis 7.0's replies and order of checks, with the network round
// trips on the worker's io_uring ring (net/outbound_socket.h) instead of Redis's blocking ones.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/key_copy.h"
#include "commands/migrate.h"
#include "commands/multi_shard.h"
#include "commands/rdb_limits.h"
#include "net/outbound_socket.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "rdb/payload.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

std::atomic<bool> g_restore_asking{false};

// Redis's migrate_cached_sockets: at most 64 targets, closed after 10 s unused.
constexpr size_t kMaxCachedTargets = 64;
constexpr int64_t kCachedTargetTtlMs = 10'000;

struct Target {
  std::unique_ptr<OutboundSocket> sock;
  int64_t last_dbid = -1;  // the database the connection has SELECTed (-1: unknown)
  int64_t last_use_ms = 0;
};

// The worker's idle connections, by "host:port". A MIGRATE takes its target's connection out
// while it uses it, so two MIGRATEs of one worker (both waiting for the network) never share one.
struct TargetCache {
  std::unordered_map<std::string, Target> idle;
  bool timer = false;
};
thread_local TargetCache t_targets;

void CloseIdleTargets() {
  const int64_t now = NowMs();
  std::erase_if(t_targets.idle,
                [now](const auto& kv) { return now - kv.second.last_use_ms > kCachedTargetTtlMs; });
}

// Redis reads the port with atoi: leading digits, anything else is port 0 (which fails).
int PortOf(std::string_view s) {
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || v > 65535) break;
    v = v * 10 + (c - '0');
  }
  return static_cast<int>(v);
}

// The cached connection to `name`, or a new one. Returns 0, OutboundSocket::kNoAddress (the
// host does not resolve: nothing was tried) or the connect's -errno.
TaskOf<int> CheckOut(const std::string& name, std::string_view host, std::string_view port,
                     int64_t timeout_ms, Target* out) {
  if (!t_targets.timer) {
    t_targets.timer = true;
    Worker::Current()->AddTimer(1'000'000, &CloseIdleTargets);
  }
  if (auto it = t_targets.idle.find(name); it != t_targets.idle.end()) {
    *out = std::move(it->second);
    t_targets.idle.erase(it);
    co_return 0;
  }
  out->sock = std::make_unique<OutboundSocket>();
  out->last_dbid = -1;
  co_return co_await out->sock->Connect(std::string(host), PortOf(port), timeout_ms);
}

void CheckIn(const std::string& name, Target t) {
  t.last_use_ms = NowMs();
  if (t_targets.idle.size() >= kMaxCachedTargets && t_targets.idle.count(name) == 0) {
    t_targets.idle.erase(t_targets.idle.begin());
  }
  t_targets.idle.insert_or_assign(name, std::move(t));
}

void AppendBulk(std::string* out, std::string_view s) {
  out->push_back('$');
  out->append(std::to_string(s.size()));
  out->append("\r\n");
  out->append(s);
  out->append("\r\n");
}
void AppendArrayLen(std::string* out, size_t n) {
  out->push_back('*');
  out->append(std::to_string(n));
  out->append("\r\n");
}

struct MigrateArgs {
  bool copy = false;
  bool replace = false;
  bool has_password = false;
  std::string_view username;  // empty: AUTH password
  std::string_view password;
  size_t first_key = 3;
  size_t num_keys = 1;
  int64_t timeout_ms = 0;
  int64_t dbid = 0;
};

// Redis's order: the options left to right, then timeout, then the database.
bool ParseMigrateArgsOrReply(Context& ctx, MigrateArgs* a) {
  const size_t argc = ctx.args.size();
  for (size_t j = 6; j < argc; ++j) {
    const std::string_view opt = ctx.args[j];
    const size_t more = argc - 1 - j;
    if (EqualsNoCase(opt, "copy")) {
      a->copy = true;
    } else if (EqualsNoCase(opt, "replace")) {
      a->replace = true;
    } else if (EqualsNoCase(opt, "auth")) {
      if (more < 1) return ctx.reply->Error(kErrSyntax), false;
      a->has_password = true;
      a->username = {};
      a->password = ctx.args[++j];
    } else if (EqualsNoCase(opt, "auth2")) {
      if (more < 2) return ctx.reply->Error(kErrSyntax), false;
      a->has_password = true;
      a->username = ctx.args[++j];
      a->password = ctx.args[++j];
    } else if (EqualsNoCase(opt, "keys")) {
      if (!ctx.args[3].empty()) {
        ctx.reply->Error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      a->first_key = j + 1;
      a->num_keys = argc - j - 1;
      break;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  if (!ParseInt64(ctx.args[5], &a->timeout_ms) || !ParseInt64(ctx.args[4], &a->dbid)) {
    ctx.reply->Error(kErrNotInteger);
    return false;
  }
  if (a->timeout_ms <= 0) a->timeout_ms = 1000;
  return true;
}

struct Item {
  std::string_view key;  // stored key (the client's database)
  int shard = 0;
  bool exists = false;
  int64_t expire_ms = 0;
  std::string payload;
};

// The RESTORE commands of the items still alive at `now` (with AUTH and SELECT first as needed);
// `sent` gets the indexes of the items sent, in order.
std::string BuildCommands(const MigrateArgs& a, bool select, const std::vector<Item>& items,
                          int64_t now, std::vector<size_t>* sent) {
  std::string cmd;
  if (a.has_password) {
    AppendArrayLen(&cmd, a.username.empty() ? 2 : 3);
    AppendBulk(&cmd, "AUTH");
    if (!a.username.empty()) AppendBulk(&cmd, a.username);
    AppendBulk(&cmd, a.password);
  }
  if (select) {
    AppendArrayLen(&cmd, 2);
    AppendBulk(&cmd, "SELECT");
    AppendBulk(&cmd, std::to_string(a.dbid));
  }
  const bool asking = g_restore_asking.load(std::memory_order_relaxed);
  sent->clear();
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    if (!it.exists) continue;
    int64_t ttl = 0;
    if (it.expire_ms != 0) {
      ttl = it.expire_ms - now;
      if (ttl < 0) continue;  // expired since it was read: it stays here and expires
      if (ttl < 1) ttl = 1;
    }
    sent->push_back(i);
    AppendArrayLen(&cmd, a.replace ? 5 : 4);
    AppendBulk(&cmd, asking ? "RESTORE-ASKING" : "RESTORE");
    AppendBulk(&cmd, ClientKey(it.key));
    AppendBulk(&cmd, std::to_string(ttl));
    AppendBulk(&cmd, it.payload);
    if (a.replace) AppendBulk(&cmd, "REPLACE");
  }
  return cmd;
}

Task Migrate(Context& ctx) {
  MigrateArgs a;
  if (!ParseMigrateArgsOrReply(ctx, &a)) co_return;
  std::span<const std::string_view> keys = ctx.args.subspan(a.first_key, a.num_keys);
  std::vector<Item> items(keys.size());
  KeyPlan plan(ctx, keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    items[i].key = keys[i];
    items[i].shard = plan.shard_of(i);
  }
  std::string error;
  bool damaged = false;

  // The keys' shards stay locked from here to the deletions: nothing written to a key after it
  // was read can be deleted by this MIGRATE.
  co_await plan.Lock();
  for (int s : plan.shards()) {
    co_await plan.Run(s, [&](Store& st) -> Task {
      for (Item& it : items) {
        if (it.shard != s || !error.empty()) continue;
        KeyCopy v;
        if (!co_await ReadKeyCopy(st, it.key, ctx.now_ms, &v, &error)) co_return;
        if (!v.exists) continue;
        if (!rdb::CreateDumpPayload(v.type, v.record, LiveEncodeLimits(), &it.payload)) {
          damaged = true;
          continue;
        }
        it.exists = true;
        it.expire_ms = v.expire_ms;
      }
    });
  }
  const bool any = std::any_of(items.begin(), items.end(), [](const Item& i) { return i.exists; });
  if (!error.empty() || damaged || !any) {
    co_await plan.Unlock();
    if (!error.empty()) {
      ctx.reply->Error(error);
    } else if (damaged) {
      ctx.reply->Error("ERR DUMP of a damaged value");
    } else {
      ctx.reply->Simple("NOKEY");
    }
    co_return;
  }

  std::string name(ctx.args[1]);
  name.push_back(':');
  name.append(ctx.args[2]);
  std::string reply_error;  // empty: +OK
  bool may_retry = true;
  std::vector<size_t> sent;
  std::vector<size_t> acked;
  for (;;) {
    Target t;
    int rc = co_await CheckOut(name, ctx.args[1], ctx.args[2], a.timeout_ms, &t);
    if (rc == OutboundSocket::kNoAddress) {
      reply_error = "IOERR error or timeout connecting to the client";
      break;
    }
    const bool select = t.last_dbid != a.dbid;
    const std::string cmd = BuildCommands(a, select, items, NowMs(), &sent);
    bool write_error = false;
    // Redis 7.0 reports a connect that fails or times out (its blocking connect returns success
    // either way) as the write that follows it failing: "writing to target instance", retried
    // once unless it timed out.
    if (rc == 0) rc = co_await t.sock->SendAll(cmd, a.timeout_ms);
    std::string auth_line, select_line, line;
    if (rc < 0) {
      write_error = true;
    } else {
      if (a.has_password && rc >= 0) {
        rc = co_await t.sock->ReadLine(&auth_line, a.timeout_ms);
        rc = rc == 1 ? 0 : (rc == 0 ? -ECONNRESET : rc);
      }
      if (select && rc >= 0) {
        rc = co_await t.sock->ReadLine(&select_line, a.timeout_ms);
        rc = rc == 1 ? 0 : (rc == 0 ? -ECONNRESET : rc);
      }
    }
    if (rc < 0) {
      // Nothing was restored for sure yet: retry once on a fresh connection (a cached one the
      // target closed meanwhile), unless the time ran out.
      if (rc != -ETIMEDOUT && may_retry) {
        may_retry = false;
        continue;
      }
      reply_error = write_error ? "IOERR error or timeout writing to target instance"
                                : "IOERR error or timeout reading to target instance";
      break;
    }
    bool from_target = false;
    bool socket_error = false;
    size_t j = 0;
    for (; j < sent.size(); ++j) {
      rc = co_await t.sock->ReadLine(&line, a.timeout_ms);
      if (rc != 1) {
        socket_error = true;
        break;
      }
      const bool auth_failed = a.has_password && !auth_line.empty() && auth_line[0] == '-';
      const bool select_failed = select && !select_line.empty() && select_line[0] == '-';
      if (auth_failed || select_failed || (!line.empty() && line[0] == '-')) {
        if (!from_target) {
          t.last_dbid = -1;
          const std::string& e = auth_failed ? auth_line : select_failed ? select_line : line;
          reply_error = "ERR Target instance replied with error: " + e.substr(1);
          from_target = true;
        }
      } else if (!a.copy) {
        acked.push_back(sent[j]);
      }
    }
    if (!from_target && socket_error && j == 0 && may_retry && rc != -ETIMEDOUT) {
      may_retry = false;
      continue;
    }
    if (socket_error) {
      if (!from_target) reply_error = "IOERR error or timeout reading to target instance";
    } else {
      if (!from_target) t.last_dbid = a.dbid;
      CheckIn(name, std::move(t));
    }
    break;
  }

  // Delete what the target acknowledged, still under the locks taken before the reads.
  for (int s : plan.shards()) {
    if (std::none_of(acked.begin(), acked.end(), [&](size_t i) { return items[i].shard == s; })) {
      continue;
    }
    co_await plan.Run(s, [&](Store& st) -> Task {
      for (size_t i : acked) {
        if (items[i].shard != s) continue;
        bool existed = false;
        WriteResult w = co_await st.Delete(items[i].key, NowMs(), &existed);
        if (!w.ok() && error.empty()) error = w.error;
        if (existed) NotifyKeyspaceEvent(kNotifyGeneric, "del", items[i].key);
      }
    });
  }
  co_await plan.Unlock();
  if (!reply_error.empty()) {
    ctx.reply->Error(reply_error);
  } else if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Ok();
  }
}

const CommandSpec kMigrateCommands[] = {
    {"migrate", -6, kCmdWrite | kCmdMovableKeys | kCmdHome, 3, 3, 1, &Migrate,
     "@keyspace @write @slow @dangerous", "generic",
     "Atomically transfer a key from a Redis instance to another one.", "2.6.0"},
};

}  // namespace

std::span<const CommandSpec> MigrateCommands() { return kMigrateCommands; }

void SetMigrateRestoreAsking(bool on) { g_restore_asking.store(on, std::memory_order_relaxed); }

}  // namespace lavik
