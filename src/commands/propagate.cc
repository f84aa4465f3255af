#include "commands/propagate.h"

#include <mutex>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/command_keys.h"
#include "config/live_settings.h"
#include "runtime/worker.h"

namespace lavik::repl {

std::atomic<bool> g_on{false};

namespace {

constexpr int kMaxLogs = 256;  // workers (client/services.h kMaxWorkers)

std::atomic<uint64_t> g_seq{0};
std::atomic<void (*)()> g_wake{nullptr};
std::atomic<bool> g_want_wake{false};

// One log per worker (and one for every other thread); each mutex is taken by its worker and by
// the master's thread only.
struct Log {
  std::mutex mu;
  std::vector<Entry> entries;
};
Log g_logs[kMaxLogs + 1];

Log& LocalLog() {
  Worker* w = Worker::Current();
  return g_logs[w != nullptr && w->id() < kMaxLogs ? w->id() : kMaxLogs];
}

// A RESP value, parsed just enough for the rewrites (bulk strings, integers, arrays).
struct Value {
  bool nil = true;
  std::string_view str;
  std::vector<Value> items;
  bool array = false;
};

bool ParseValue(std::string_view* in, Value* v) {
  const size_t nl = in->find("\r\n");
  if (in->empty() || nl == std::string_view::npos) return false;
  const char type = (*in)[0];
  const std::string_view head = in->substr(1, nl - 1);
  in->remove_prefix(nl + 2);
  int64_t n = 0;
  switch (type) {
    case '$':
    case '=':
    case '!':
      if (!ParseInt64(head, &n)) return false;
      if (n < 0) return true;
      if (in->size() < static_cast<size_t>(n) + 2) return false;
      v->nil = false;
      v->str = in->substr(0, static_cast<size_t>(n));
      in->remove_prefix(static_cast<size_t>(n) + 2);
      return true;
    case '*':
    case '~':
    case '>':
    case '%':
      if (!ParseInt64(head, &n)) return false;
      if (n < 0) return true;
      if (type == '%') n *= 2;
      v->nil = false;
      v->array = true;
      v->items.resize(static_cast<size_t>(n));
      for (Value& item : v->items) {
        if (!ParseValue(in, &item)) return false;
      }
      return true;
    case '_':
      return true;
    default:  // + : , # (
      v->nil = false;
      v->str = head;
      return true;
  }
}

Value Parse(std::string_view reply) {
  Value v;
  if (!ParseValue(&reply, &v)) return Value{};
  return v;
}

struct Builder {
  std::vector<std::string> args;
  Builder& Add(std::string_view a) {
    args.emplace_back(a);
    return *this;
  }
  std::string Resp() const {
    std::vector<std::string_view> views(args.begin(), args.end());
    return repl::Resp(views);
  }
};

bool Is(std::string_view a, std::string_view b) { return EqualsNoCase(a, b); }

// EXPIRE-style time argument → absolute milliseconds; false if unparsable.
bool Absolute(std::string_view t, bool seconds, bool relative, int64_t now_ms, int64_t* out) {
  int64_t v = 0;
  if (!ParseInt64(t, &v)) return false;
  if (seconds) {
    if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000) return false;
    v *= 1000;
  }
  if (relative) {
    if ((v > 0 && now_ms > INT64_MAX - v)) return false;
    v += now_ms;
  }
  *out = v;
  return true;
}

void Emit(std::vector<ReplOp>* ops, int db, std::string resp) {
  ops->push_back(ReplOp{db, std::move(resp)});
}

}  // namespace

void PropagateExpired(std::string_view stored_key) {
  const SplitKey split = SplitDbKey(stored_key);
  std::vector<ReplOp> ops;
  // As Redis's propagateDeletion: UNLINK when the server frees expired keys lazily.
  const bool lazy = Live().lazyfree_lazy_expire.load(std::memory_order_relaxed);
  Emit(&ops, DbMap::Logical(split.db),
       Builder().Add(lazy ? "UNLINK" : "DEL").Add(split.key).Resp());
  Push(TakeSeq(), std::move(ops));
}

void Activate(void (*wake)()) {
  g_wake.store(wake);
  g_on.store(true);
}

void WantWake() { g_want_wake.store(true); }

uint64_t TakeSeq() { return g_seq.fetch_add(1, std::memory_order_relaxed) + 1; }
uint64_t LastSeq() { return g_seq.load(std::memory_order_relaxed); }

void Push(uint64_t seq, std::vector<ReplOp> ops) {
  Log& log = LocalLog();
  {
    std::lock_guard<std::mutex> lock(log.mu);
    log.entries.push_back(Entry{seq, std::move(ops)});
  }
  if (g_want_wake.load(std::memory_order_relaxed) && g_want_wake.exchange(false)) {
    if (auto* wake = g_wake.load()) wake();
  }
}

void Drain(std::vector<Entry>* out) {
  for (Log& log : g_logs) {
    std::lock_guard<std::mutex> lock(log.mu);
    if (log.entries.empty()) continue;
    for (Entry& e : log.entries) out->push_back(std::move(e));
    log.entries.clear();
  }
}

std::string Resp(std::span<const std::string_view> args) {
  std::string out;
  size_t total = 16;
  for (std::string_view a : args) total += a.size() + 16;
  out.reserve(total);
  out.append("*").append(std::to_string(args.size())).append("\r\n");
  for (std::string_view a : args) {
    out.append("$").append(std::to_string(a.size())).append("\r\n").append(a).append("\r\n");
  }
  return out;
}

bool NeedsReply(const CommandSpec& spec) {
  static constexpr std::string_view kNames[] = {
      "incrbyfloat", "hincrbyfloat", "spop",  "xadd",     "blpop",    "brpop",  "brpoplpush",
      "blmove",      "blmpop",       "lmpop", "bzpopmin", "bzpopmax", "bzmpop", "zmpop"};
  for (std::string_view n : kNames) {
    if (spec.name == n) return true;
  }
  return false;
}

bool IsBatch(const CommandSpec& spec) {
  const std::string_view n = spec.name;
  return n == "exec" || n == "eval" || n == "evalsha" || n == "eval_ro" || n == "evalsha_ro" ||
         n == "fcall" || n == "fcall_ro";
}

bool OwnEffect(const CommandSpec& spec) {
  const std::string_view n = spec.name;
  return n == "xreadgroup" || n == "xclaim" || n == "xautoclaim";
}

void AddEffect(Context& ctx, std::vector<std::string> cmds) {
  if (ctx.repl == nullptr) return;
  const int ldb = DbMap::Logical(ctx.db);
  for (std::string& c : cmds) Emit(&ctx.repl->ops, ldb, std::move(c));
}

void AppendEffect(const CommandSpec& spec, std::span<const std::string_view> stored, int db,
                  int64_t now_ms, std::string_view reply, std::vector<ReplOp>* ops,
                  std::string_view trim_to) {
  // The client's form of the keys (only database 0 keys without the prefix are stored as is).
  std::vector<std::string_view> args(stored.begin(), stored.end());
  bool prefixed = db != 0;
  for (std::string_view a : stored) prefixed = prefixed || (!a.empty() && a[0] == kDbKeyPrefix[0]);
  if (prefixed) {
    std::vector<KeyRef> keys;
    CommandKeys(spec, args, &keys);
    for (const KeyRef& k : keys) {
      std::string_view& a = args[static_cast<size_t>(k.arg)];
      const SplitKey split = SplitDbKey(a);
      if (NeedsDbPrefix(db, split.key) && split.db == db) a = split.key;
    }
  }
  const int ldb = DbMap::Logical(db);
  const std::string_view name = spec.name;
  const size_t argc = args.size();

  if (name == "expire" || name == "pexpire" || name == "expireat" || name == "pexpireat") {
    int64_t at = 0;
    if (!Absolute(args[2], name == "expire" || name == "expireat",
                  name == "expire" || name == "pexpire", now_ms, &at)) {
      return;
    }
    if (at <= now_ms) {
      Emit(ops, ldb, Builder().Add("DEL").Add(args[1]).Resp());
      return;
    }
    const std::string when = std::to_string(at);
    Builder b;
    b.Add("PEXPIREAT").Add(args[1]).Add(when);
    for (size_t i = 3; i < argc; ++i) b.Add(args[i]);
    Emit(ops, ldb, b.Resp());
    return;
  }
  if (name == "setex" || name == "psetex") {
    int64_t at = 0;
    if (!Absolute(args[2], name == "setex", true, now_ms, &at)) return;
    Emit(ops, ldb,
         Builder().Add("SET").Add(args[1]).Add(args[3]).Add("PXAT").Add(std::to_string(at)).Resp());
    return;
  }
  if (name == "set" && argc == 3) {
    Emit(ops, ldb, Resp(args));
    return;
  }
  if (name == "set") {
    Builder b;
    b.Add("SET").Add(args[1]).Add(args[2]);
    bool rewrote = false, pxat = false;
    std::vector<std::string_view> rest;
    for (size_t i = 3; i < argc; ++i) {
      const std::string_view o = args[i];
      if ((Is(o, "ex") || Is(o, "px") || Is(o, "exat")) && i + 1 < argc) {
        int64_t at = 0;
        if (!Absolute(args[i + 1], Is(o, "ex") || Is(o, "exat"), !Is(o, "exat"), now_ms, &at)) {
          return;
        }
        Emit(ops, ldb,
             Builder()
                 .Add("SET")
                 .Add(args[1])
                 .Add(args[2])
                 .Add("PXAT")
                 .Add(std::to_string(at))
                 .Resp());
        rewrote = true;
        break;
      }
      if (Is(o, "pxat")) pxat = true;
      rest.push_back(o);
    }
    if (rewrote) return;
    for (std::string_view o : rest) {
      if (Is(o, "get") && !pxat) continue;  // Redis propagates SET without GET
      b.Add(o);
    }
    Emit(ops, ldb, b.Resp());
    return;
  }
  if (name == "getex") {
    if (argc < 3) return;
    const std::string_view o = args[2];
    if (Is(o, "persist")) {
      Emit(ops, ldb, Builder().Add("PERSIST").Add(args[1]).Resp());
      return;
    }
    if (argc < 4) return;
    int64_t at = 0;
    if (!Absolute(args[3], Is(o, "ex") || Is(o, "exat"), Is(o, "ex") || Is(o, "px"), now_ms, &at)) {
      return;
    }
    if (at <= now_ms) {
      Emit(ops, ldb, Builder().Add("DEL").Add(args[1]).Resp());
    } else {
      Emit(ops, ldb, Builder().Add("PEXPIREAT").Add(args[1]).Add(std::to_string(at)).Resp());
    }
    return;
  }
  if (name == "getdel") {
    Emit(ops, ldb, Builder().Add("DEL").Add(args[1]).Resp());
    return;
  }
  if (name == "restore" && argc >= 4) {
    int64_t ttl = 0;
    bool abs = false;
    for (size_t i = 4; i < argc; ++i) abs = abs || Is(args[i], "absttl");
    if (ParseInt64(args[2], &ttl) && ttl > 0 && !abs) {
      Builder b;
      b.Add("RESTORE").Add(args[1]).Add(std::to_string(ttl + now_ms));
      for (size_t i = 3; i < argc; ++i) b.Add(args[i]);
      b.Add("ABSTTL");
      Emit(ops, ldb, b.Resp());
      return;
    }
  }
  if (name == "incrbyfloat" || name == "hincrbyfloat") {
    const Value v = Parse(reply);
    if (v.nil || v.array) return;
    if (name == "incrbyfloat") {
      Emit(ops, ldb, Builder().Add("SET").Add(args[1]).Add(v.str).Add("KEEPTTL").Resp());
    } else {
      Emit(ops, ldb, Builder().Add("HSET").Add(args[1]).Add(args[2]).Add(v.str).Resp());
    }
    return;
  }
  if (name == "spop") {
    const Value v = Parse(reply);
    if (v.nil) return;
    Builder b;
    b.Add("SREM").Add(args[1]);
    if (v.array) {
      if (v.items.empty()) return;
      for (const Value& m : v.items) b.Add(m.str);
    } else {
      b.Add(v.str);
    }
    Emit(ops, ldb, b.Resp());
    return;
  }
  if (name == "xadd" || name == "xtrim") {
    // XADD's id → the one it made; a "~" trim → "=" and the threshold it left, without LIMIT
    // (Redis's streamRewriteApproxSpecifier / streamRewriteTrimArgument; its replicas ignore the
    // LIMIT it keeps, ours too, but dropping it lets any replica take the command).
    const bool xadd = name == "xadd";
    Value v;
    if (xadd) {
      v = Parse(reply);
      if (v.nil || v.array) return;
    }
    std::vector<std::string_view> out(args.begin(), args.begin() + std::min<size_t>(argc, 2));
    size_t i = 2;
    while (i < argc) {
      const std::string_view o = args[i];
      if (Is(o, "nomkstream")) {
        out.push_back(o);
        ++i;
      } else if ((Is(o, "maxlen") || Is(o, "minid")) && i + 1 < argc) {
        const bool op = args[i + 1] == "~" || args[i + 1] == "=";
        const bool exact = op && args[i + 1] == "~" && !trim_to.empty() && i + 2 < argc;
        out.push_back(o);
        if (op) out.push_back(exact ? std::string_view("=") : args[i + 1]);
        const size_t at = i + (op ? 2 : 1);
        if (at < argc) out.push_back(exact ? trim_to : args[at]);
        i = at + 1;
      } else if (Is(o, "limit") && i + 1 < argc) {
        if (trim_to.empty()) out.insert(out.end(), {o, args[i + 1]});
        i += 2;
      } else {
        break;
      }
    }
    if (xadd && i < argc) {
      out.push_back(v.str);
      ++i;
    }
    out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(std::min(i, argc)),
               args.end());
    Emit(ops, ldb, Resp(out));
    return;
  }
  if (name == "blpop" || name == "brpop" || name == "bzpopmin" || name == "bzpopmax") {
    const Value v = Parse(reply);
    if (v.nil || !v.array || v.items.empty()) return;
    const char* cmd = name == "blpop"      ? "LPOP"
                      : name == "brpop"    ? "RPOP"
                      : name == "bzpopmin" ? "ZPOPMIN"
                                           : "ZPOPMAX";
    Emit(ops, ldb, Builder().Add(cmd).Add(v.items[0].str).Resp());
    return;
  }
  if (name == "brpoplpush" || name == "blmove") {
    const Value v = Parse(reply);
    if (v.nil) return;
    if (name == "brpoplpush") {
      Emit(ops, ldb, Builder().Add("RPOPLPUSH").Add(args[1]).Add(args[2]).Resp());
    } else {
      Emit(ops, ldb,
           Builder().Add("LMOVE").Add(args[1]).Add(args[2]).Add(args[3]).Add(args[4]).Resp());
    }
    return;
  }
  if (name == "blmpop" || name == "lmpop" || name == "bzmpop" || name == "zmpop") {
    const Value v = Parse(reply);
    if (v.nil || !v.array || v.items.size() < 2) return;
    const bool list = name == "blmpop" || name == "lmpop";
    // The direction follows the keys: numkeys is at 1 (LMPOP/ZMPOP) or 2 (the blocking forms).
    const size_t nk_at = (name == "blmpop" || name == "bzmpop") ? 2 : 1;
    int64_t numkeys = 0;
    if (!ParseInt64(args[nk_at], &numkeys)) return;
    const size_t dir_at = nk_at + 1 + static_cast<size_t>(numkeys);
    if (dir_at >= argc) return;
    const bool left = Is(args[dir_at], list ? "left" : "min");
    const char* cmd = list ? (left ? "LPOP" : "RPOP") : (left ? "ZPOPMIN" : "ZPOPMAX");
    Emit(
        ops, ldb,
        Builder().Add(cmd).Add(v.items[0].str).Add(std::to_string(v.items[1].items.size())).Resp());
    return;
  }
  Emit(ops, ldb, Resp(args));
}

void Finish(Context& ctx, bool changed, std::string_view reply) {
  ReplCall* call = ctx.repl;
  if (call == nullptr) return;
  ctx.repl = nullptr;
  std::vector<ReplOp> ops;
  if (call->batch || OwnEffect(*ctx.spec)) {
    ops = std::move(call->ops);
  } else if (changed) {
    AppendEffect(*ctx.spec, ctx.args, ctx.db, ctx.now_ms, reply, &ops, call->trim_to);
  }
  uint64_t seq = call->seq;
  if (seq != 0 || !ops.empty()) {
    if (seq == 0) seq = TakeSeq();
    Push(seq, std::move(ops));
  }
  delete call;
}

}  // namespace lavik::repl
