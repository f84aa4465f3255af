#include "commands/stream_access.h"

#include <algorithm>
#include <cstdint>

#include "base/ascii.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/propagate.h"
#include "config/live_settings.h"

namespace lavik {
namespace {

// "~" without LIMIT trims at most this many nodes' worth of entries (10000 if nodes are
// unbounded), as Redis.
constexpr int64_t kDefaultLimitNodes = 100;
constexpr int64_t kDefaultLimitUnbounded = 10000;

}  // namespace

bool ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict, StreamId* id,
                   bool* seq_given) {
  if (arg.size() > 127) return false;  // Redis parses into a 128-byte buffer
  if (strict && (arg == "-" || arg == "+")) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (arg == "-") {
    *id = kMinStreamId;
    return true;
  }
  if (arg == "+") {
    *id = kMaxStreamId;
    return true;
  }
  // Redis cuts at the first NUL (a C string) and at the first '-'.
  const size_t nul = arg.find('\0');
  if (nul != std::string_view::npos) arg = arg.substr(0, nul);
  const size_t dash = arg.find('-');
  StreamId out;
  if (!ParseUint64(arg.substr(0, dash), &out.ms)) return false;
  if (dash == std::string_view::npos) {
    out.seq = missing_seq;
  } else {
    std::string_view seq = arg.substr(dash + 1);
    if (seq_given != nullptr && seq == "*") {
      out.seq = 0;
      *seq_given = false;
    } else if (!ParseUint64(seq, &out.seq)) {
      return false;
    }
  }
  *id = out;
  return true;
}

bool ParseStreamIdOrReply(Context& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                          StreamId* id) {
  if (ParseStreamId(arg, missing_seq, strict, id)) return true;
  ctx.reply->Error(kErrInvalidStreamId);
  return false;
}

bool ParseIntervalIdOrReply(Context& ctx, std::string_view arg, uint64_t missing_seq, StreamId* id,
                            bool* exclusive) {
  *exclusive = arg.size() > 1 && arg[0] == '(';
  if (*exclusive) arg.remove_prefix(1);
  return ParseStreamIdOrReply(ctx, arg, missing_seq, *exclusive, id);
}

bool ParseTrimArgsOrReply(Context& ctx, bool xadd, TrimArgs* a) {
  const auto& args = ctx.args;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    std::string_view opt = args[i];
    if (xadd && opt == "*") {
      a->id_given = false;
      break;
    } else if ((EqualsNoCase(opt, "maxlen") || EqualsNoCase(opt, "minid")) && more) {
      const bool maxlen = EqualsNoCase(opt, "maxlen");
      const auto strategy = maxlen ? TrimArgs::Strategy::kMaxLen : TrimArgs::Strategy::kMinId;
      if (a->strategy != TrimArgs::Strategy::kNone && a->strategy != strategy) {
        ctx.reply->Error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return false;
      }
      a->approx = false;
      if ((args[i + 1] == "~" || args[i + 1] == "=") && i + 2 < args.size()) {
        a->approx = args[i + 1] == "~";
        ++i;
      }
      if (!maxlen) {
        if (!ParseStreamIdOrReply(ctx, args[i + 1], 0, true, &a->minid)) return false;
      } else if (!ParseInt64(args[i + 1], &a->maxlen)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      } else if (a->maxlen < 0) {
        ctx.reply->Error("ERR The MAXLEN argument must be >= 0.");
        return false;
      }
      ++i;
      a->strategy = strategy;
    } else if (EqualsNoCase(opt, "limit") && more) {
      if (!ParseInt64(args[i + 1], &a->limit)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      if (a->limit < 0) {
        ctx.reply->Error("ERR The LIMIT argument must be >= 0.");
        return false;
      }
      a->limit_given = true;
      ++i;
    } else if (xadd && EqualsNoCase(opt, "nomkstream")) {
      a->nomkstream = true;
    } else if (xadd) {
      if (!ParseStreamId(opt, 0, true, &a->id, &a->seq_given)) {
        ctx.reply->Error(kErrInvalidStreamId);
        return false;
      }
      a->id_given = true;
      break;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  a->id_pos = i;
  if (a->limit_given && a->strategy == TrimArgs::Strategy::kNone) {
    ctx.reply->Error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (a->limit_given && !ctx.from_master) {
    if (!a->approx) {
      ctx.reply->Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
  }
  a->node_entries = std::max<int64_t>(0, LiveSettings::Get(Live().stream_node_max_entries));
  if (!a->limit_given) {
    const int64_t n = a->node_entries;
    const int64_t nodes_limit = n > 0 && n <= INT64_MAX / kDefaultLimitNodes
                                    ? kDefaultLimitNodes * n
                                    : kDefaultLimitUnbounded;
    a->limit = a->approx ? nodes_limit : 0;
  }
  // From our master (Redis's mustObeyClient): no LIMIT is enforced; its "~" trims were sent
  // as the exact result already.
  if (ctx.from_master) a->limit = 0;
  return true;
}

void NoteExactTrim(Context& ctx, const TrimArgs& a, uint64_t length, const StreamId* first) {
  if (ctx.repl == nullptr || !a.approx) return;
  ctx.repl->trim_to = a.strategy == TrimArgs::Strategy::kMaxLen
                          ? std::to_string(length)
                          : (first != nullptr ? *first : kMaxStreamId).ToString();
}

std::string ClaimEffect(std::string_view key, const StreamGroup& g, const StreamPending& p) {
  const std::string id = p.id.ToString(), time = std::to_string(p.delivery_ms),
                    count = std::to_string(p.delivery_count), last = g.last_id.ToString();
  const std::string_view args[] = {"XCLAIM",     ClientKey(key),
                                   g.name,       g.consumers[p.consumer].name,
                                   "0",          id,
                                   "TIME",       time,
                                   "RETRYCOUNT", count,
                                   "FORCE",      "JUSTID",
                                   "LASTID",     last};
  return repl::Resp(args);
}

std::string SetIdEffect(std::string_view key, const StreamGroup& g) {
  const std::string last = g.last_id.ToString(), read = std::to_string(g.entries_read);
  const std::string_view args[] = {"XGROUP",      "SETID", ClientKey(key), g.name, last,
                                   "ENTRIESREAD", read};
  return repl::Resp(args);
}

std::string CreateConsumerEffect(std::string_view key, std::string_view group,
                                 std::string_view consumer) {
  const std::string_view args[] = {"XGROUP", "CREATECONSUMER", ClientKey(key), group, consumer};
  return repl::Resp(args);
}

uint64_t FirstNodeEntries(const TrimArgs& a, uint64_t length, uint64_t entries_added) {
  if (a.node_entries <= 0) return length;  // one node holds everything
  const auto n = static_cast<uint64_t>(a.node_entries);
  const uint64_t gone = entries_added > length ? entries_added - length : 0;
  return std::min(length, n - gone % n);
}

int64_t TrimStream(Stream* s, const TrimArgs& a) {
  if (a.strategy == TrimArgs::Strategy::kNone) return 0;
  auto& e = s->entries;
  size_t remove = 0;
  if (a.strategy == TrimArgs::Strategy::kMaxLen) {
    const size_t keep = static_cast<size_t>(a.maxlen);
    remove = e.size() > keep ? e.size() - keep : 0;
  } else {
    remove = s->LowerBound(a.minid);
  }
  if (a.approx) {
    // Whole nodes from the head while the next one may go entirely: it leaves at least MAXLEN
    // entries (or all its ids are below MINID) and keeps the count within LIMIT.
    // Either way `remove` entries are past the threshold: a node goes if it holds no others.
    const size_t want = remove;
    remove = 0;
    uint64_t node = FirstNodeEntries(a, e.size(), s->entries_added);
    while (remove < want) {
      const size_t c = std::min<size_t>(node, e.size() - remove);
      if (a.limit > 0 && static_cast<uint64_t>(remove + c) > static_cast<uint64_t>(a.limit)) break;
      if (remove + c > want) break;
      remove += c;
      node = a.node_entries > 0 ? static_cast<uint64_t>(a.node_entries) : e.size();
    }
  }
  if (remove == 0) return 0;
  e.erase(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(remove));
  return static_cast<int64_t>(remove);
}

void ReplyId(ReplyWriter& w, StreamId id) {
  char buf[2 * kMaxInt64Chars + 2];
  size_t n = FormatUint64(id.ms, buf);
  buf[n++] = '-';
  n += FormatUint64(id.seq, buf + n);
  w.Bulk(std::string_view(buf, n));
}

void ReplyPendingEntry(ReplyWriter& w, const StreamGroup& g, const StreamPending& p, int64_t time) {
  w.Array(4);
  ReplyId(w, p.id);
  w.Bulk(g.consumers[p.consumer].name);
  w.Integer(time);
  w.Integer(static_cast<int64_t>(p.delivery_count));
}

std::string NoSuchGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such consumer group '" + std::string(group) + "' for key name '" +
         std::string(key) + "'";
}

void ReplyEntry(ReplyWriter& w, const Stream& s, const StreamEntry& e) {
  std::vector<std::string_view> fv;
  EntryFields(s.master_fields, e.body, &fv);
  w.Array(2);
  ReplyId(w, e.id);
  w.Array(fv.size());
  for (std::string_view x : fv) w.Bulk(x);
}

void ReplyEntries(ReplyWriter& w, const Stream& s, const std::vector<const StreamEntry*>& list) {
  w.Array(list.size());
  for (const StreamEntry* e : list) ReplyEntry(w, s, *e);
}

}  // namespace lavik
