// Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO. A bitmap is a
// plain string (ValueType::kString), so GET/SETRANGE/APPEND see the same bytes; the bit
// arithmetic is base/bitops.h. Replies, errors and the order in which arguments are checked
// follow Redis 7.0.15 (BITCOUNT and BITPOS look the key up before parsing their ranges, as it
// does).
//
// Costs: the Store reads and writes whole values, so every command here reads the whole string
// (from DRAM or with one asynchronous device read), and a command that changes it (SETBIT,
// BITFIELD with SET/INCRBY) copies and rewrites the whole value: O(value size). SETBIT and
// BITFIELD skip the write when nothing changes. BITOP holds one source at a time next to the
// result, folding the sources shard by shard under the shards' locks (atomic across workers).
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "base/bitops.h"
#include "base/numbers.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "config/live_settings.h"
#include "notify/keyspace_events.h"
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr std::string_view kErrBitArgument = "ERR The bit argument must be 1 or 0.";
constexpr std::string_view kErrBitOpNot = "ERR BITOP NOT must be called with a single source key.";
constexpr std::string_view kErrBitfieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";
constexpr std::string_view kErrOverflowType = "ERR Invalid OVERFLOW type specified";
constexpr std::string_view kErrBitfieldRo = "ERR BITFIELD_RO only supports the GET subcommand";

// A bit offset argument. `field_bits` > 0 also takes BITFIELD's "#N" form (N fields of that
// width). As in Redis, the product wraps like a machine multiply before the range check.
bool ParseBitOffsetOrReply(Context& ctx, std::string_view arg, int field_bits, uint64_t* out) {
  const bool fields = field_bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t v;
  if (!ParseInt64(fields ? arg.substr(1) : arg, &v)) {
    ctx.reply->Error(kErrBitOffset);
    return false;
  }
  if (fields)
    v = static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(field_bits));
  if (v < 0 || v / 8 >= LiveSettings::Get(Live().proto_max_bulk_len)) {
    ctx.reply->Error(kErrBitOffset);
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ParseInt64OrReply(Context& ctx, std::string_view arg, int64_t* out) {
  if (ParseInt64(arg, out)) return true;
  ctx.reply->Error(kErrNotInteger);
  return false;
}

// The value paired with `arg` among `words` (matched case-insensitively); false if none.
template <typename T>
bool MatchWord(std::string_view arg, std::initializer_list<std::pair<std::string_view, T>> words,
               T* out) {
  for (const auto& [word, value] : words) {
    if (EqualsNoCase(arg, word)) {
      *out = value;
      return true;
    }
  }
  return false;
}

// BYTE or BIT (the optional unit of BITCOUNT/BITPOS ranges); *in_bits says which.
bool ParseUnitOrReply(Context& ctx, std::string_view arg, bool* in_bits) {
  if (MatchWord<bool>(arg, {{"bit", true}, {"byte", false}}, in_bits)) return true;
  ctx.reply->Error(kErrSyntax);
  return false;
}

// The key's string type, checked after a Lookup: false after replying WRONGTYPE.
bool IsStringOrReply(Context& ctx, const KeyInfo& info) {
  if (!info.exists || info.type == ValueType::kString) return true;
  ctx.reply->Error(kErrWrongType);
  return false;
}

// Looks up the string at ctx.args[1] for a read command. False after replying: WRONGTYPE, or
// `if_missing` when there is no such key.
bool LookupStringOrReply(Context& ctx, int64_t if_missing, KeyInfo* info) {
  *info = ctx.store->LookupRead(ctx.args[1], ctx.now_ms);
  if (!IsStringOrReply(ctx, *info)) return false;
  if (info->exists) return true;
  ctx.reply->Integer(if_missing);
  return false;
}

// A read's outcome: false after replying an I/O error. A key gone meanwhile reads as empty.
bool ReadOkOrReply(Context& ctx, const ReadResult& r) {
  if (r.status != ReadResult::Status::kError) return true;
  ctx.reply->Error(r.error);
  return false;
}

std::string_view ValueOf(const ReadResult& r) { return r.ok() ? r.value : std::string_view(); }

// Reads the string at `key` for a read-modify-write into *value (empty if missing): false after
// replying (WRONGTYPE or an I/O error). *info says whether it exists and where.
TaskOf<bool> ReadForWriteOrReply(Context& ctx, std::string_view key, KeyInfo* info,
                                 std::string* value) {
  Store& st = *ctx.store;
  *info = st.Lookup(key, ctx.now_ms);
  value->clear();
  if (!IsStringOrReply(ctx, *info)) co_return false;
  if (!info->exists) co_return true;
  ReadResult r = co_await st.ReadValue(key, *info);
  if (!ReadOkOrReply(ctx, r)) co_return false;
  if (!r.ok()) info->exists = false;
  value->assign(ValueOf(r));
  co_return true;
}

// Writes the rewritten string if the key is still where it was read; TTL kept. False after
// replying a write error; *applied false means "read again".
TaskOf<bool> WriteBackOrReply(Context& ctx, const KeyInfo& info, std::string_view value,
                              bool* applied) {
  WriteResult w = co_await ctx.store->WriteIf(ctx.args[1], info.exists ? info.loc : 0,
                                              ValueType::kString, value, info.expire_ms, applied);
  if (w.ok()) co_return true;
  ctx.reply->Error(w.error);
  co_return false;
}

Task SetBit(Context& ctx) {
  uint64_t offset;
  if (!ParseBitOffsetOrReply(ctx, ctx.args[2], 0, &offset)) co_return;
  int64_t on;
  if (!ParseInt64(ctx.args[3], &on) || (on & ~int64_t{1}) != 0) {
    ctx.reply->Error(kErrBitValue);
    co_return;
  }
  const uint64_t byte = offset / 8;
  const unsigned char mask = static_cast<unsigned char>(0x80u >> (offset % 8));
  while (true) {
    KeyInfo info;
    std::string v;
    if (!co_await ReadForWriteOrReply(ctx, ctx.args[1], &info, &v)) co_return;
    const bool grows = v.size() <= byte;
    const int old = !grows && (static_cast<unsigned char>(v[byte]) & mask) != 0 ? 1 : 0;
    if (!grows && old == on) {  // nothing changes: no write, no event (as Redis)
      ctx.reply->Integer(old);
      co_return;
    }
    if (grows) v.resize(byte + 1, '\0');
    v[byte] = static_cast<char>(on ? (v[byte] | mask) : (v[byte] & ~mask));
    bool applied = false;
    if (!co_await WriteBackOrReply(ctx, info, v, &applied)) co_return;
    if (!applied) continue;
    NotifyKeyspaceEvent(kNotifyString, "setbit", ctx.args[1]);
    ctx.reply->Integer(old);
    co_return;
  }
}

Task GetBit(Context& ctx) {
  uint64_t offset;
  if (!ParseBitOffsetOrReply(ctx, ctx.args[2], 0, &offset)) co_return;
  Store& st = *ctx.store;
  KeyInfo info;
  if (!LookupStringOrReply(ctx, 0, &info)) co_return;
  ReadResult r = co_await st.ReadValue(ctx.args[1], info);
  if (!ReadOkOrReply(ctx, r)) co_return;
  std::string_view v = ValueOf(r);
  const uint64_t byte = offset / 8;
  const bool set =
      byte < v.size() && (static_cast<unsigned char>(v[byte]) & (0x80u >> (offset % 8)));
  ctx.reply->Integer(set ? 1 : 0);
}

// BITCOUNT key [start end [BYTE|BIT]]
Task BitCount(Context& ctx) {
  Store& st = *ctx.store;
  KeyInfo info;
  if (!LookupStringOrReply(ctx, 0, &info)) co_return;
  const size_t argc = ctx.args.size();
  int64_t start = 0, end = -1;
  bool in_bits = false;
  if (argc == 4 || argc == 5) {
    if (!ParseInt64OrReply(ctx, ctx.args[2], &start)) co_return;
    if (!ParseInt64OrReply(ctx, ctx.args[3], &end)) co_return;
    if (argc == 5 && !ParseUnitOrReply(ctx, ctx.args[4], &in_bits)) co_return;
  } else if (argc != 2) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  ReadResult r = co_await st.ReadValue(ctx.args[1], info);
  if (!ReadOkOrReply(ctx, r)) co_return;
  std::string_view v = ValueOf(r);
  // Both ends counted from the end, the wrong way round: nothing (before clamping).
  if (start < 0 && end < 0 && start > end) {
    ctx.reply->Integer(0);
    co_return;
  }
  BitRange range = ResolveBitRange(start, end, v.size(), in_bits);
  ctx.reply->Integer(static_cast<int64_t>(CountBits(v, range)));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
Task BitPos(Context& ctx) {
  int64_t bit;
  if (!ParseInt64OrReply(ctx, ctx.args[2], &bit)) co_return;
  if (bit != 0 && bit != 1) {
    ctx.reply->Error(kErrBitArgument);
    co_return;
  }
  Store& st = *ctx.store;
  KeyInfo info;
  // A missing key is an endless run of zeros.
  if (!LookupStringOrReply(ctx, bit ? -1 : 0, &info)) co_return;
  const size_t argc = ctx.args.size();
  int64_t start = 0, end = -1;
  bool in_bits = false;
  const bool end_given = argc >= 5;
  if (argc > 6) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (argc >= 4 && !ParseInt64OrReply(ctx, ctx.args[3], &start)) co_return;
  if (argc == 6 && !ParseUnitOrReply(ctx, ctx.args[5], &in_bits)) co_return;
  if (end_given && !ParseInt64OrReply(ctx, ctx.args[4], &end)) co_return;
  ReadResult r = co_await st.ReadValue(ctx.args[1], info);
  if (!ReadOkOrReply(ctx, r)) co_return;
  std::string_view v = ValueOf(r);
  BitRange range = ResolveBitRange(start, end, v.size(), in_bits);
  int64_t pos = FindBit(v, static_cast<int>(bit), range);
  // No clear bit up to the string's end and no explicit end: the zero padding right after it.
  if (pos < 0 && bit == 0 && !end_given && !range.empty) pos = static_cast<int64_t>(v.size() * 8);
  ctx.reply->Integer(pos);
}

// BITOP AND|OR|XOR|NOT destkey srckey [srckey ...]: the sources are folded into one result on
// their shards, under the locks of every shard involved, then the result replaces destkey (or
// deletes it when empty).
Task BitOp(Context& ctx) {
  BitOpKind op;
  if (!MatchWord<BitOpKind>(ctx.args[1],
                            {{"and", BitOpKind::kAnd},
                             {"or", BitOpKind::kOr},
                             {"xor", BitOpKind::kXor},
                             {"not", BitOpKind::kNot}},
                            &op)) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (op == BitOpKind::kNot && ctx.args.size() != 4) {
    ctx.reply->Error(kErrBitOpNot);
    co_return;
  }
  KeyPlan plan(ctx, ctx.args.subspan(2));  // keys()[0] is destkey
  std::string result;
  std::string error;
  bool first = true;
  co_await plan.Lock();
  for (int s : plan.shards()) {
    if (!error.empty()) break;
    co_await plan.Run(s, [&, s](Store& st) -> Task {
      for (size_t i = 1; i < plan.keys().size() && error.empty(); ++i) {
        if (plan.shard_of(i) != s) continue;
        KeyInfo info = st.LookupRead(plan.keys()[i], ctx.now_ms);
        if (info.exists && info.type != ValueType::kString) {
          error = kErrWrongType;
          break;
        }
        ReadResult r;
        if (info.exists) r = co_await st.ReadValue(plan.keys()[i], info);
        if (r.status == ReadResult::Status::kError) {
          error = r.error;
          break;
        }
        BitOpFold(op, ValueOf(r), first, &result);  // a missing key folds in as ""
        first = false;
      }
    });
  }
  if (error.empty()) {
    co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
      WriteResult w;
      bool existed = false;
      if (result.empty()) {
        w = co_await st.Delete(plan.keys()[0], ctx.now_ms, &existed);
      } else {
        w = co_await st.Write(plan.keys()[0], ValueType::kString, result, 0);
      }
      if (!w.ok()) error = w.error;
      if (w.ok() && (!result.empty() || existed)) {
        NotifyKeyspaceEvent(result.empty() ? kNotifyGeneric : kNotifyString,
                            result.empty() ? "del" : "set", plan.keys()[0]);
      }
    });
  }
  co_await plan.Unlock();
  if (!error.empty()) {
    ctx.reply->Error(error);
  } else {
    ctx.reply->Integer(static_cast<int64_t>(result.size()));
  }
}

// --- BITFIELD ---

enum class FieldOp { kGet, kSet, kIncrBy };

struct BitfieldStep {
  FieldOp op;
  BitfieldType type;
  uint64_t offset;
  int64_t arg;  // SET's value or INCRBY's increment
  BitfieldOverflow overflow;
};

// Parses the subcommands after the key. False after replying. *last_bit: the highest bit a SET
// or INCRBY touches; *writes: whether there is one.
bool ParseBitfieldOrReply(Context& ctx, std::vector<BitfieldStep>* steps, bool* writes,
                          uint64_t* last_bit) {
  BitfieldOverflow overflow = BitfieldOverflow::kWrap;
  *writes = false;
  *last_bit = 0;
  for (size_t j = 2; j < ctx.args.size(); ++j) {
    const size_t left = ctx.args.size() - j - 1;
    std::string_view sub = ctx.args[j];
    BitfieldStep step{};
    if (EqualsNoCase(sub, "get") && left >= 2) {
      step.op = FieldOp::kGet;
    } else if (EqualsNoCase(sub, "set") && left >= 3) {
      step.op = FieldOp::kSet;
    } else if (EqualsNoCase(sub, "incrby") && left >= 3) {
      step.op = FieldOp::kIncrBy;
    } else if (EqualsNoCase(sub, "overflow") && left >= 1) {
      if (!MatchWord<BitfieldOverflow>(ctx.args[++j],
                                       {{"wrap", BitfieldOverflow::kWrap},
                                        {"sat", BitfieldOverflow::kSat},
                                        {"fail", BitfieldOverflow::kFail}},
                                       &overflow)) {
        ctx.reply->Error(kErrOverflowType);
        return false;
      }
      continue;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
    if (!ParseBitfieldType(ctx.args[j + 1], &step.type)) {
      ctx.reply->Error(kErrBitfieldType);
      return false;
    }
    if (!ParseBitOffsetOrReply(ctx, ctx.args[j + 2], step.type.bits, &step.offset)) return false;
    if (step.op != FieldOp::kGet) {
      *writes = true;
      *last_bit = std::max(*last_bit, step.offset + step.type.bits - 1);
      if (!ParseInt64OrReply(ctx, ctx.args[j + 3], &step.arg)) return false;
    }
    step.overflow = overflow;
    steps->push_back(step);
    j += step.op == FieldOp::kGet ? 2 : 3;
  }
  return true;
}

// Runs the steps in order on `v` (grown to hold every written field). Each reply is a value or
// nullopt (an overflow under FAIL: that step writes nothing). Returns whether a step changed v —
// every step that wrote, when `grew` (v was padded for them), as Redis counts changes.
bool ApplyBitfield(const std::vector<BitfieldStep>& steps, std::string* v,
                   std::vector<std::optional<int64_t>>* replies, bool grew) {
  bool changed = false;
  for (const BitfieldStep& s : steps) {
    const int64_t old = GetBitfield(*v, s.offset, s.type);
    if (s.op == FieldOp::kGet) {
      replies->emplace_back(old);
      continue;
    }
    int64_t next;
    const bool incr = s.op == FieldOp::kIncrBy;
    const bool overflowed =
        BitfieldAdd(s.type, incr ? old : s.arg, incr ? s.arg : 0, s.overflow, &next);
    if (overflowed && s.overflow == BitfieldOverflow::kFail) {
      replies->emplace_back(std::nullopt);
      continue;
    }
    replies->emplace_back(incr ? next : old);
    SetBitfield(v, s.offset, s.type, static_cast<uint64_t>(next));
    changed |= grew || next != old;
  }
  return changed;
}

void ReplyBitfield(Context& ctx, const std::vector<std::optional<int64_t>>& replies) {
  ctx.reply->Array(replies.size());
  for (const auto& r : replies) {
    if (r) {
      ctx.reply->Integer(*r);
    } else {
      ctx.reply->Null();
    }
  }
}

Task BitfieldGeneric(Context& ctx, bool read_only_command) {
  std::vector<BitfieldStep> steps;
  bool writes;
  uint64_t last_bit;
  if (!ParseBitfieldOrReply(ctx, &steps, &writes, &last_bit)) co_return;
  std::vector<std::optional<int64_t>> replies;
  replies.reserve(steps.size());
  Store& st = *ctx.store;
  if (!writes) {
    KeyInfo info = st.LookupRead(ctx.args[1], ctx.now_ms);
    if (!IsStringOrReply(ctx, info)) co_return;
    ReadResult r;
    if (info.exists && !steps.empty()) r = co_await st.ReadValue(ctx.args[1], info);
    if (!ReadOkOrReply(ctx, r)) co_return;
    std::string_view v = ValueOf(r);
    for (const BitfieldStep& s : steps) replies.emplace_back(GetBitfield(v, s.offset, s.type));
    ReplyBitfield(ctx, replies);
    co_return;
  }
  if (read_only_command) {
    ctx.reply->Error(kErrBitfieldRo);
    co_return;
  }
  bool changed = false;
  while (true) {
    KeyInfo info;
    std::string v;
    if (!co_await ReadForWriteOrReply(ctx, ctx.args[1], &info, &v)) co_return;
    const size_t need = static_cast<size_t>(last_bit / 8 + 1);
    const bool grows = v.size() < need;
    if (grows) v.resize(need, '\0');
    replies.clear();
    // As in Redis, a key is created (or padded) even when every write fails under FAIL.
    changed = ApplyBitfield(steps, &v, &replies, grows);
    if (!changed && !grows) break;
    bool applied = false;
    if (!co_await WriteBackOrReply(ctx, info, v, &applied)) co_return;
    if (applied) break;
  }
  if (changed) NotifyKeyspaceEvent(kNotifyString, "setbit", ctx.args[1]);  // as Redis: a change
  ReplyBitfield(ctx, replies);
}

Task Bitfield(Context& ctx) { co_await BitfieldGeneric(ctx, false); }
Task BitfieldRo(Context& ctx) { co_await BitfieldGeneric(ctx, true); }

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kBitmapCommands[] = {
    {"setbit", 4, kW, 1, 1, 1, &SetBit, "@write @bitmap @slow", "bitmap",
     "Sets or clears the bit at offset in the string value stored at key", "2.2.0"},
    {"getbit", 3, kR | kCmdFast, 1, 1, 1, &GetBit, "@read @bitmap @fast", "bitmap",
     "Returns the bit value at offset in the string value stored at key", "2.2.0"},
    {"bitcount", -2, kR, 1, 1, 1, &BitCount, "@read @bitmap @slow", "bitmap",
     "Count set bits in a string", "2.6.0"},
    {"bitpos", -3, kR, 1, 1, 1, &BitPos, "@read @bitmap @slow", "bitmap",
     "Find first bit set or clear in a string", "2.8.7"},
    {"bitop", -4, kW, 2, -1, 1, &BitOp, "@write @bitmap @slow", "bitmap",
     "Perform bitwise operations between strings", "2.6.0"},
    {"bitfield", -2, kW, 1, 1, 1, &Bitfield, "@write @bitmap @slow", "bitmap",
     "Perform arbitrary bitfield integer operations on strings", "3.2.0"},
    {"bitfield_ro", -2, kR | kCmdFast, 1, 1, 1, &BitfieldRo, "@read @bitmap @fast", "bitmap",
     "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
     "6.0.0"},
};

}  // namespace

std::span<const CommandSpec> BitmapCommands() { return kBitmapCommands; }

}  // namespace lavik
