#include "commands/stream_access.h"

#include "base/ascii.h"
#include "base/numbers.h"

namespace lavik {
namespace {

// Redis's stream-node-max-entries default: with "~" a trim removes whole nodes of this many.
constexpr int64_t kNodeEntries = 100;

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
  if (a->limit_given) {
    if (!a->approx) {
      ctx.reply->Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
  } else {
    a->limit = a->approx ? 100 * kNodeEntries : 0;
  }
  return true;
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
    // Only whole nodes go, and no more than the limit allows (counted in whole nodes too).
    remove -= remove % kNodeEntries;
    if (a.limit > 0 && static_cast<int64_t>(remove) > a.limit) {
      remove = static_cast<size_t>(a.limit - a.limit % kNodeEntries);
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
