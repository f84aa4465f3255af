// Stream commands on one key without consumer groups: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM,
// XSETID. A stream is one record while small, else a root plus id-range chunks (storage/
// stream_record.h, commands/stream_chunked.h, doc/collections.md); unlike the other collections
// an empty stream stays (Redis keeps it). XADD wakes the clients blocked in XREAD/XREADGROUP on
// the key (commands/stream_wait.h).
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/shards.h"
#include "commands/stream_access.h"
#include "commands/stream_chunked.h"
#include "commands/stream_wait.h"
#include "commands/typed_read.h"
#include "notify/keyspace_events.h"

namespace lavik {
namespace {

constexpr std::string_view kErrXAddTooSmall =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
constexpr std::string_view kErrCorrupt = kErrStreamCorrupt;

// The id XADD gives its entry in a stream whose last id is `last` ("" on success, else the
// error): "*" is the clock (or last + 1 if the clock is behind), "ms-*" the next seq in ms.
std::string_view NextXAddId(const TrimArgs& a, StreamId last, StreamId* id) {
  if (last == kMaxStreamId) {
    return "ERR The stream has exhausted the last possible ID, unable to add more items";
  }
  if (!a.id_given) {
    const auto now = static_cast<uint64_t>(NowMs());
    if (now > last.ms) {
      *id = {now, 0};
    } else {
      last.Incr(id);
    }
  } else if (a.seq_given) {
    *id = a.id;
  } else if (a.id.ms == last.ms) {
    if (last.seq == UINT64_MAX) return kErrXAddTooSmall;
    *id = {a.id.ms, last.seq + 1};
  } else {
    *id = {a.id.ms, 0};
  }
  return *id <= last ? kErrXAddTooSmall : std::string_view();
}

// Whether XADD's MAXLEN leaves a stream of `length` entries (the new one included, the
// `entries_added`-th) as it is.
bool MaxLenKeepsAll(const TrimArgs& a, uint64_t length, uint64_t entries_added) {
  if (a.strategy == TrimArgs::Strategy::kNone) return true;
  if (a.strategy != TrimArgs::Strategy::kMaxLen) return false;
  const auto maxlen = static_cast<uint64_t>(a.maxlen);
  if (length <= maxlen) return true;
  if (!a.approx) return false;
  // "~" removes whole nodes only (TrimStream): not even the first one here.
  const uint64_t first = FirstNodeEntries(a, length, entries_added);
  return length - first < maxlen || (a.limit > 0 && first > static_cast<uint64_t>(a.limit));
}

// XADD that trims nothing: appends without decoding the entries (AppendStreamValue: a chunked
// stream rewrites only its last chunk and root), the common case and the one a long stream makes
// expensive. Sets *decode (and replies nothing) when the MAXLEN given would trim: XAdd then
// decodes.
Task XAddAppend(Context& ctx, const TrimArgs& a, size_t field_pos, bool* decode) {
  Store& st = *ctx.store;
  const std::string_view key = ctx.args[1];
  const std::string_view* fv = ctx.args.data() + field_pos;
  const size_t fv_count = ctx.args.size() - field_pos;
  StreamId id;
  while (true) {
    const KeyInfo info = st.Lookup(key, ctx.now_ms);
    std::string_view bytes;
    ReadResult r;
    if (info.exists) {
      if (info.type != ValueType::kStream) {
        ctx.reply->Error(kErrWrongType);
        co_return;
      }
      r = co_await st.ReadValue(key, info);
      if (r.status == ReadResult::Status::kError) {
        ctx.reply->Error(r.error);
        co_return;
      }
      if (!r.ok()) continue;  // gone while we read: look again
      bytes = r.value;        // valid until the next call on the Store
    } else if (a.nomkstream) {
      ctx.reply->Null();
      co_return;
    }
    uint64_t length = 0, added = 0;
    StreamId last;
    if (info.exists && !StreamLengthAndLast(bytes, &length, &last, &added)) {
      ctx.reply->Error(kErrCorrupt);
      co_return;
    }
    if (!MaxLenKeepsAll(a, length + 1, added + 1)) {
      *decode = true;
      co_return;
    }
    const std::string_view failure = NextXAddId(a, last, &id);
    if (!failure.empty()) {
      ctx.reply->Error(failure);
      co_return;
    }
    bool applied = false;
    std::string error;
    if (!co_await AppendStreamValue(st, key, info, bytes, id, fv, fv_count, &applied, &error)) {
      ctx.reply->Error(error);
      co_return;
    }
    if (applied) {
      NoteExactTrim(ctx, a, length + 1, nullptr);  // a "~" MAXLEN that removed nothing
      break;
    }
  }
  NotifyKeyspaceEvent(kNotifyStream, "xadd", key);
  SignalStreamReady(ctx.shards->local(), key);
  ReplyId(*ctx.reply, id);
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [...]
Task XAdd(Context& ctx) {
  TrimArgs a;
  if (!ParseTrimArgsOrReply(ctx, true, &a)) co_return;
  const size_t field_pos = a.id_pos + 1;
  if (ctx.args.size() <= field_pos || (ctx.args.size() - field_pos) % 2 == 1) {
    ctx.reply->Error(WrongArityError(ctx.spec->name));
    co_return;
  }
  if (a.id_given && a.seq_given && a.id.IsZero()) {
    ctx.reply->Error("ERR The ID specified in XADD must be greater than 0-0");
    co_return;
  }
  if (a.strategy != TrimArgs::Strategy::kMinId) {
    bool decode = false;
    co_await XAddAppend(ctx, a, field_pos, &decode);
    if (!decode) co_return;
  }
  // With trimming: decode, append, trim, encode.
  std::string_view failure;
  bool missing = false;
  StreamId added;
  std::string body;
  int64_t trimmed = 0;
  std::vector<std::string_view> master;
  const std::string_view* fv = ctx.args.data() + field_pos;
  const size_t fv_count = ctx.args.size() - field_pos;
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool exists) {
    missing = !exists && a.nomkstream;
    if (missing) return Rewrite::kUnchanged;
    failure = NextXAddId(a, s->last_id, &added);
    if (!failure.empty()) return Rewrite::kUnchanged;
    if (s->entries.empty() && s->master_fields.empty()) {
      // The first entry's field names become the master fields (stored once).
      master.clear();
      for (size_t i = 0; i < fv_count; i += 2) master.push_back(fv[i]);
      s->master_fields = master;
    }
    body = EncodeEntryBody(s->master_fields, fv, fv_count);
    s->entries.push_back({added, body});
    s->last_id = added;
    ++s->entries_added;
    trimmed = TrimStream(s, a);
    NoteExactTrim(ctx, a, s->entries.size(), s->entries.empty() ? nullptr : &s->entries[0].id);
    return Rewrite::kWrite;
  });
  if (!ok) co_return;
  if (missing) {
    ctx.reply->Null();
  } else if (!failure.empty()) {
    ctx.reply->Error(failure);
  } else {
    NotifyKeyspaceEvent(kNotifyStream, "xadd", ctx.args[1]);
    if (trimmed > 0) NotifyKeyspaceEvent(kNotifyStream, "xtrim", ctx.args[1]);
    SignalStreamReady(ctx.shards->local(), ctx.args[1]);
    ReplyId(*ctx.reply, added);
  }
}

// The length is in the record's header: no need to decode the entries.
Task XLen(Context& ctx) {
  KeyInfo info;
  ReadResult r;
  std::string error;
  const TypedRead got = co_await ReadTypedRecord(*ctx.store, ctx.args[1], ValueType::kStream,
                                                 ctx.now_ms, true, &info, &r, &error);
  uint64_t length = 0;
  StreamId last;
  if (got == TypedRead::kError) {
    ctx.reply->Error(error);
  } else if (got == TypedRead::kFound && !StreamLengthAndLast(r.value, &length, &last)) {
    ctx.reply->Error(kErrCorrupt);
  } else {
    ctx.reply->Integer(static_cast<int64_t>(length));
  }
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
Task RangeGeneric(Context& ctx, bool rev) {
  std::string_view start_arg = rev ? ctx.args[3] : ctx.args[2];
  std::string_view end_arg = rev ? ctx.args[2] : ctx.args[3];
  StreamId start, end;
  bool start_ex, end_ex;
  if (!ParseIntervalIdOrReply(ctx, start_arg, 0, &start, &start_ex)) co_return;
  if (start_ex && !start.Incr(&start)) {
    ctx.reply->Error("ERR invalid start ID for the interval");
    co_return;
  }
  if (!ParseIntervalIdOrReply(ctx, end_arg, UINT64_MAX, &end, &end_ex)) co_return;
  if (end_ex && !end.Decr(&end)) {
    ctx.reply->Error("ERR invalid end ID for the interval");
    co_return;
  }
  int64_t count = -1;
  for (size_t j = 4; j < ctx.args.size(); ++j) {
    if (EqualsNoCase(ctx.args[j], "count") && j + 1 < ctx.args.size()) {
      if (!ParseInt64(ctx.args[j + 1], &count)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (count < 0) count = 0;
      ++j;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  StreamRead r;
  std::string error;
  StreamWindow window;
  window.start = start;
  window.end = end;
  window.count = count < 0 ? SIZE_MAX : static_cast<size_t>(count);
  window.rev = rev;
  if (!co_await ReadStreamWindow(*ctx.store, ctx.args[1], ctx.now_ms, true, window, &r, &error)) {
    ctx.reply->Error(error);
    co_return;
  }
  if (!r.info.exists) {
    ctx.reply->Array(0);
    co_return;
  }
  if (count == 0) {
    ctx.reply->NullArray();
    co_return;
  }
  const Stream& s = r.stream;
  std::vector<const StreamEntry*> list;
  if (start <= end) {
    const size_t lo = s.LowerBound(start), hi = s.UpperBound(end);
    const auto limit = count < 0 ? SIZE_MAX : static_cast<size_t>(count);
    if (!rev) {
      for (size_t i = lo; i < hi && list.size() < limit; ++i) list.push_back(&s.entries[i]);
    } else {
      for (size_t i = hi; i > lo && list.size() < limit; --i) list.push_back(&s.entries[i - 1]);
    }
  }
  ReplyEntries(*ctx.reply, s, list);
}

Task XRange(Context& ctx) { co_await RangeGeneric(ctx, false); }
Task XRevRange(Context& ctx) { co_await RangeGeneric(ctx, true); }

// XDEL key id [id ...]
Task XDel(Context& ctx) {
  const KeyInfo info = ctx.store->Lookup(ctx.args[1], ctx.now_ms);
  if (!info.exists) {
    ctx.reply->Integer(0);
    co_return;
  }
  if (info.type != ValueType::kStream) {
    ctx.reply->Error(kErrWrongType);
    co_return;
  }
  std::vector<StreamId> ids(ctx.args.size() - 2);
  for (size_t j = 2; j < ctx.args.size(); ++j) {
    if (!ParseStreamIdOrReply(ctx, ctx.args[j], 0, true, &ids[j - 2])) co_return;
  }
  int64_t deleted = 0;
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool) {
    deleted = 0;
    for (StreamId id : ids) {
      const int i = s->Find(id);
      if (i < 0) continue;
      s->entries.erase(s->entries.begin() + i);
      if (id > s->max_deleted_id) s->max_deleted_id = id;
      ++deleted;
    }
    return deleted > 0 ? Rewrite::kWrite : Rewrite::kUnchanged;
  });
  if (ok && deleted > 0) NotifyKeyspaceEvent(kNotifyStream, "xdel", ctx.args[1]);
  if (ok) ctx.reply->Integer(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
Task XTrim(Context& ctx) {
  TrimArgs a;
  if (!ParseTrimArgsOrReply(ctx, false, &a)) co_return;
  if (a.strategy == TrimArgs::Strategy::kNone) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  int64_t deleted = 0;
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool exists) {
    deleted = exists ? TrimStream(s, a) : 0;
    NoteExactTrim(ctx, a, s->entries.size(), s->entries.empty() ? nullptr : &s->entries[0].id);
    return deleted > 0 ? Rewrite::kWrite : Rewrite::kUnchanged;
  });
  if (ok && deleted > 0) NotifyKeyspaceEvent(kNotifyStream, "xtrim", ctx.args[1]);
  if (ok) ctx.reply->Integer(deleted);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
Task XSetId(Context& ctx) {
  StreamId id, max_deleted;
  int64_t entries_added = -1;
  if (!ParseStreamIdOrReply(ctx, ctx.args[2], 0, true, &id)) co_return;
  for (size_t i = 3; i < ctx.args.size(); i += 2) {
    const bool more = i + 1 < ctx.args.size();
    if (EqualsNoCase(ctx.args[i], "entriesadded") && more) {
      if (!ParseInt64(ctx.args[i + 1], &entries_added)) {
        ctx.reply->Error(kErrNotInteger);
        co_return;
      }
      if (entries_added < 0) {
        ctx.reply->Error("ERR entries_added must be positive");
        co_return;
      }
    } else if (EqualsNoCase(ctx.args[i], "maxdeletedid") && more) {
      if (!ParseStreamIdOrReply(ctx, ctx.args[i + 1], 0, true, &max_deleted)) co_return;
      if (id < max_deleted) {
        ctx.reply->Error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
        co_return;
      }
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  std::string_view failure;
  bool ok = co_await RewriteStreamOrReply(ctx, [&](Stream* s, bool exists) {
    failure = {};
    if (!exists) {
      failure = kErrNoSuchKey;
      return Rewrite::kUnchanged;
    }
    if (id < s->max_deleted_id) {
      failure = "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id";
      return Rewrite::kUnchanged;
    }
    if (!s->entries.empty()) {
      if (id < s->entries.back().id) {
        failure = "ERR The ID specified in XSETID is smaller than the target stream top item";
        return Rewrite::kUnchanged;
      }
      if (entries_added != -1 && s->entries.size() > static_cast<uint64_t>(entries_added)) {
        failure =
            "ERR The entries_added specified in XSETID is smaller than the target stream "
            "length";
        return Rewrite::kUnchanged;
      }
    }
    s->last_id = id;
    if (entries_added != -1) s->entries_added = static_cast<uint64_t>(entries_added);
    if (!max_deleted.IsZero()) s->max_deleted_id = max_deleted;
    return Rewrite::kWrite;
  });
  if (ok && failure.empty()) NotifyKeyspaceEvent(kNotifyStream, "xsetid", ctx.args[1]);
  if (ok) ReplyErrorOrOk(ctx, failure);
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kStreamCommands[] = {
    {"xadd", -5, kW | kCmdFast, 1, 1, 1, &XAdd, "@write @stream @fast", "stream",
     "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0"},
    {"xlen", 2, kR | kCmdFast, 1, 1, 1, &XLen, "@read @stream @fast", "stream",
     "Return the number of messages in a stream.", "5.0.0"},
    {"xrange", -4, kR, 1, 1, 1, &XRange, "@read @stream @slow", "stream",
     "Returns the messages from a stream within a range of IDs.", "5.0.0"},
    {"xrevrange", -4, kR, 1, 1, 1, &XRevRange, "@read @stream @slow", "stream",
     "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0"},
    {"xdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, &XDel, "@write @stream @fast", "stream",
     "Returns the number of messages after removing them from a stream.", "5.0.0"},
    {"xtrim", -4, kCmdWrite, 1, 1, 1, &XTrim, "@write @stream @slow", "stream",
     "Deletes messages from the beginning of a stream.", "5.0.0"},
    {"xsetid", -3, kW, 1, 1, 1, &XSetId, "@write @stream @fast", "stream",
     "An internal command for replicating stream values.", "5.0.0"},
};

}  // namespace

std::span<const CommandSpec> StreamCommands() { return kStreamCommands; }

}  // namespace lavik
