#include "commands/lcs.h"

#include <memory>
#include <new>

#include "base/ascii.h"
#include "base/numbers.h"
#include "commands/multi_shard.h"
#include "config/live_settings.h"
#include "protocol/errors.h"
#include "storage/store.h"

namespace lavik {

LcsStatus ComputeLcs(std::string_view a, std::string_view b, bool traceback,
                     uint64_t max_table_bytes, LcsResult* out) {
  constexpr uint64_t kMaxLen = UINT32_MAX - 1;
  if (a.size() >= kMaxLen || b.size() >= kMaxLen) return LcsStatus::kTooLong;
  const auto alen = static_cast<uint32_t>(a.size());
  const auto blen = static_cast<uint32_t>(b.size());
  const uint64_t width = uint64_t{blen} + 1;
  const uint64_t cells = (uint64_t{alen} + 1) * width;  // < 2^64: both factors < 2^32
  if (cells > UINT64_MAX / sizeof(uint32_t) || cells * sizeof(uint32_t) > max_table_bytes) {
    return LcsStatus::kTableTooBig;
  }
  // t[i * width + j]: the LCS length of a[0..i) and b[0..j).
  std::unique_ptr<uint32_t[]> t(new (std::nothrow) uint32_t[cells]);
  if (t == nullptr) return LcsStatus::kNoMemory;
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& { return t[i * width + j]; };
  for (uint32_t j = 0; j <= blen; ++j) at(0, j) = 0;
  for (uint32_t i = 1; i <= alen; ++i) {
    at(i, 0) = 0;
    for (uint32_t j = 1; j <= blen; ++j) {
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  *out = LcsResult{};
  out->length = at(alen, blen);
  if (!traceback) return LcsStatus::kOk;

  // Walk back from the end: a match extends the current run one byte to the left; a step
  // without a match (or reaching the first byte of either string) closes the run.
  out->sequence.resize(out->length);
  size_t pos = out->length;
  LcsRange run;
  bool in_run = false;
  uint32_t i = alen, j = blen;
  while (i > 0 && j > 0) {
    bool close = false;
    if (a[i - 1] == b[j - 1]) {
      out->sequence[--pos] = a[i - 1];
      if (!in_run) {
        run = LcsRange{i - 1, i - 1, j - 1, j - 1};
        in_run = true;
      } else if (run.a_start == i && run.b_start == j) {
        --run.a_start;
        --run.b_start;
      } else {
        close = true;  // not adjacent (unreachable: a match always follows the previous one)
      }
      if (run.a_start == 0 || run.b_start == 0) close = true;
      --i;
      --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      close = in_run;
    }
    if (close) {
      out->ranges.push_back(run);
      in_run = false;
    }
  }
  return LcsStatus::kOk;
}

namespace {

constexpr std::string_view kErrLcsNotString = "ERR The specified keys must contain string values";
constexpr std::string_view kErrLcsLenAndIdx =
    "ERR If you want both the length and indexes, please just use IDX.";

struct LcsArgs {
  bool len = false;
  bool idx = false;
  bool withmatchlen = false;
  int64_t minmatchlen = 0;
};

bool ParseLcsArgsOrReply(Context& ctx, LcsArgs* a) {
  for (size_t j = 3; j < ctx.args.size(); ++j) {
    const std::string_view o = ctx.args[j];
    if (EqualsNoCase(o, "idx")) {
      a->idx = true;
    } else if (EqualsNoCase(o, "len")) {
      a->len = true;
    } else if (EqualsNoCase(o, "withmatchlen")) {
      a->withmatchlen = true;
    } else if (EqualsNoCase(o, "minmatchlen") && j + 1 < ctx.args.size()) {
      if (!ParseInt64(ctx.args[++j], &a->minmatchlen)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      if (a->minmatchlen < 0) a->minmatchlen = 0;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  if (a->len && a->idx) {
    ctx.reply->Error(kErrLcsLenAndIdx);
    return false;
  }
  return true;
}

void ReplyLcsMatches(Context& ctx, const LcsResult& r, const LcsArgs& a) {
  std::vector<const LcsRange*> shown;
  for (const LcsRange& m : r.ranges) {
    if (m.length() >= static_cast<uint64_t>(a.minmatchlen)) shown.push_back(&m);
  }
  ctx.reply->Map(2);
  ctx.reply->Bulk("matches");
  ctx.reply->Array(shown.size());
  for (const LcsRange* m : shown) {
    ctx.reply->Array(a.withmatchlen ? 3 : 2);
    ctx.reply->Array(2);
    ctx.reply->Integer(m->a_start);
    ctx.reply->Integer(m->a_end);
    ctx.reply->Array(2);
    ctx.reply->Integer(m->b_start);
    ctx.reply->Integer(m->b_end);
    if (a.withmatchlen) ctx.reply->Integer(m->length());
  }
  ctx.reply->Bulk("len");
  ctx.reply->Integer(r.length);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: missing keys are empty strings;
// the type check comes before the options, as in Redis.
Task Lcs(Context& ctx) {
  KeyPlan plan(ctx, ctx.args.subspan(1, 2));
  std::string values[2];
  bool not_string = false;
  std::string error;
  co_await plan.Lock();
  for (size_t k = 0; k < 2; ++k) {
    co_await plan.Run(plan.shard_of(k), [&, k](Store& st) -> Task {
      const KeyInfo info = st.LookupRead(plan.keys()[k], ctx.now_ms);
      if (!info.exists) co_return;
      if (info.type != ValueType::kString) {
        not_string = true;
        co_return;
      }
      ReadResult r = co_await st.ReadValue(plan.keys()[k], info);
      if (r.status == ReadResult::Status::kError) error = r.error;
      if (r.ok()) values[k].assign(r.value.data(), r.value.size());
    });
  }
  co_await plan.Unlock();
  if (not_string) {
    ctx.reply->Error(kErrLcsNotString);
    co_return;
  }
  if (!error.empty()) {
    ctx.reply->Error(error);
    co_return;
  }
  LcsArgs a;
  if (!ParseLcsArgsOrReply(ctx, &a)) co_return;
  LcsResult r;
  switch (ComputeLcs(values[0], values[1], !a.len,
                     static_cast<uint64_t>(LiveSettings::Get(Live().proto_max_bulk_len)), &r)) {
    case LcsStatus::kOk:
      break;
    case LcsStatus::kTooLong:
      ctx.reply->Error("ERR String too long for LCS");
      co_return;
    case LcsStatus::kTableTooBig:
      ctx.reply->Error(
          "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
      co_return;
    case LcsStatus::kNoMemory:
      ctx.reply->Error("ERR Insufficient memory, failed allocating transient memory for LCS");
      co_return;
  }
  if (a.idx) {
    ReplyLcsMatches(ctx, r, a);
  } else if (a.len) {
    ctx.reply->Integer(r.length);
  } else {
    ctx.reply->Bulk(r.sequence);
  }
}

const CommandSpec kLcsCommands[] = {
    {"lcs", -3, kCmdReadOnly, 1, 2, 1, &Lcs, "@read @string @slow", "string",
     "Find longest common substring", "7.0.0"},
};

}  // namespace

std::span<const CommandSpec> LcsCommands() { return kLcsCommands; }

}  // namespace lavik
