// What the stream commands share (stream_family.cc, stream_groups.cc, blocking/stream_blocking.cc):
// reading and rewriting a stream key (storage/stream_record.h) on its worker, parsing stream ids
// and trim options as Redis 7.0 does, trimming, and writing entries into a reply.
//
// Thread safety: the helpers run on the worker that owns the key, like the handlers calling them;
// the parsers and reply writers are pure.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "commands/collection_access.h"
#include "storage/chunked.h"
#include "storage/stream_record.h"

namespace lavik {

inline constexpr std::string_view kErrInvalidStreamId =
    "ERR Invalid stream ID specified as stream command argument";

struct StreamRead {
  KeyInfo info;       // info.exists false: no such key (stream is then empty)
  std::string bytes;  // the record's bytes (a chunked stream: its root): `stream` views into them
  Stream stream;
  // Entries in the stream: stream.entries holds all of them unless `whole` is false (a window
  // read, ReadStreamWindow), when it holds an id-ordered run containing the window's entries.
  uint64_t length = 0;
  bool whole = true;
  // A chunked stream (commands/stream_chunked.h): its root, the chunks read (ascending root
  // indices) and their bytes, which stream.entries' bodies view.
  bool chunked = false;
  ChunkRoot root;
  std::vector<size_t> covered;
  std::deque<std::string> chunk_bytes;
};

// Reads and decodes the stream at `key` (or learns it is missing): false with *error on
// WRONGTYPE, an I/O error or a damaged record. Never touches a reply.
TaskOf<bool> ReadStream(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                        StreamRead* out, std::string* error);

// The entries a range read needs: ids in [start, end], the first `count` of them from the start
// (or from the end if `rev`). A chunked stream reads only the chunks holding them.
struct StreamWindow {
  StreamId start = kMinStreamId;
  StreamId end = kMaxStreamId;
  size_t count = SIZE_MAX;
  bool rev = false;
};
// ReadStream for a window: out->stream.entries holds at least the window's entries (whole
// chunks around them); out->length is the stream's length. The metadata and groups are whole.
TaskOf<bool> ReadStreamWindow(Store& st, std::string_view key, int64_t now_ms, bool count_stats,
                              const StreamWindow& window, StreamRead* out, std::string* error);

// Writes cur.stream (read whole by ReadStream, then edited) as the value of `key` if it is still
// where cur found it (must not exist if it did not), keeping the TTL: one record while small,
// else chunked, rewriting only the chunks whose entries changed. A stream is never deleted for
// being empty (Redis keeps it). A chunked stream read with no entries (a COUNT 0 window: its
// metadata and groups only) is written back as its root alone.
TaskOf<bool> StoreStream(Store& st, std::string_view key, const StreamRead& cur, bool* applied,
                         std::string* error);

// Read-modify-write of the stream at `key`, retried if another write landed while it read.
// `modify(&stream, exists)` edits the decoded stream (views it adds must outlive the call) and
// returns kError (it set its own failure), kUnchanged or kWrite. `groups_only`: an edit of the
// metadata and groups only (XACK); `modify` must then not touch the entries, which a chunked
// stream does not read (Stream::entries is then empty).
template <typename Modify>
TaskOf<bool> RewriteStream(Store& st, std::string_view key, int64_t now_ms, Modify modify,
                           std::string* error, bool groups_only = false) {
  StreamWindow none;
  none.count = 0;
  while (true) {
    StreamRead cur;
    const bool read = groups_only
                          ? co_await ReadStreamWindow(st, key, now_ms, false, none, &cur, error)
                          : co_await ReadStream(st, key, now_ms, false, &cur, error);
    if (!read) co_return false;
    Rewrite what = modify(&cur.stream, cur.info.exists);
    if (what == Rewrite::kError) co_return false;
    if (what == Rewrite::kUnchanged) co_return true;
    bool applied = false;
    if (!co_await StoreStream(st, key, cur, &applied, error)) co_return false;
    if (applied) co_return true;
  }
}

// RewriteStream of ctx.args[1] by a handler running on its worker; replies the error if it
// fails, so the caller replies only on success.
template <typename Modify>
TaskOf<bool> RewriteStreamOrReply(Context& ctx, Modify modify, bool groups_only = false) {
  std::string error;
  const bool ok = co_await RewriteStream(*ctx.store, ctx.args[1], ctx.now_ms, std::move(modify),
                                         &error, groups_only);
  if (!ok) ctx.reply->Error(error);
  co_return ok;
}

// Redis's streamGenericParseIDOrReply without the reply: "ms-seq", "ms" (seq = missing_seq),
// and unless `strict` "-" and "+". With seq_given non-null (XADD), "ms-*" sets *seq_given false.
bool ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict, StreamId* id,
                   bool* seq_given = nullptr);
bool ParseStreamIdOrReply(Context& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                          StreamId* id);
// XRANGE's bounds: an id, "-", "+" or "(id" (exclusive).
bool ParseIntervalIdOrReply(Context& ctx, std::string_view arg, uint64_t missing_seq, StreamId* id,
                            bool* exclusive);

struct TrimArgs {
  enum class Strategy { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId minid;
  int64_t limit = 0;  // 0: no limit
  bool limit_given = false;
  int64_t node_entries = 100;  // stream-node-max-entries when parsed (0: no limit)
  // XADD only.
  bool nomkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
  size_t id_pos = 0;  // where the id ("*" or explicit) is
};

// The options of XADD (xadd = true: up to and including the id) or XTRIM, from args[2].
bool ParseTrimArgsOrReply(Context& ctx, bool xadd, TrimArgs* a);
// After a "~" trim, while replication is on: the exact threshold it left goes with the command
// (ReplCall::trim_to) — the stream's `length` for MAXLEN, its `first` entry's id for MINID (the
// largest id when it is empty, as Redis's streamGetEdgeID).
void NoteExactTrim(Context& ctx, const TrimArgs& a, uint64_t length, const StreamId* first);
// Trims `s` as Redis's streamTrim does (with ~, whole nodes only, and no node that would take
// the count past LIMIT); returns the number of entries removed.
int64_t TrimStream(Stream* s, const TrimArgs& a);
// Redis keeps a stream in nodes (listpacks) that take stream-node-max-entries appended entries
// each, deleted ones included, and "~" trims whole nodes from the head. Lavik stores no nodes:
// it places them where Redis's are for a stream grown by XADD, one every node_entries entries
// ever added, so with h = entries_added - length entries gone from the head, the first node
// holds node_entries - h % node_entries of them. (XDEL in the middle and nodes that Redis closes
// early on stream-node-max-bytes are not followed.) The entries in the first node, at most
// `length`.
uint64_t FirstNodeEntries(const TrimArgs& a, uint64_t length, uint64_t entries_added);

// One entry: [id, [field, value, ...]].
void ReplyEntry(ReplyWriter& w, const Stream& s, const StreamEntry& e);
// Entries [from, to) in order, or in reverse, as an array.
void ReplyEntries(ReplyWriter& w, const Stream& s, const std::vector<const StreamEntry*>& list);

// A bulk string of the id ("ms-seq").
void ReplyId(ReplyWriter& w, StreamId id);

// One pending entry of `g` as XPENDING and XINFO STREAM FULL list it: [id, consumer, time,
// deliveries], `time` being its idle time (XPENDING) or its last delivery's time (XINFO).
void ReplyPendingEntry(ReplyWriter& w, const StreamGroup& g, const StreamPending& p, int64_t time);

// Replication (commands/propagate.h, repl::AddEffect): the commands by which Redis 7.0 sends a
// consumer group's changes (streamPropagateXCLAIM, streamPropagateGroupID,
// streamPropagateConsumerCreation), as RESP; `key` in stored form.
// "XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID group-last-id": the
// pending entry `p` as it is now (or as it was, for one dropped because its entry is gone: the
// replica's XCLAIM finds the entry gone and drops it too).
std::string ClaimEffect(std::string_view key, const StreamGroup& g, const StreamPending& p);
// "XGROUP SETID key group last-id ENTRIESREAD n".
std::string SetIdEffect(std::string_view key, const StreamGroup& g);
// "XGROUP CREATECONSUMER key group consumer".
std::string CreateConsumerEffect(std::string_view key, std::string_view group,
                                 std::string_view consumer);

// "NOGROUP No such consumer group '<group>' for key name '<key>'" (XGROUP, XINFO CONSUMERS).
std::string NoSuchGroupError(std::string_view key, std::string_view group);

}  // namespace lavik
