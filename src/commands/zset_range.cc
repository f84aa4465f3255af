#include "commands/zset_range.h"

#include <algorithm>
#include <cmath>

#include "base/ascii.h"
#include "base/numbers.h"
#include "protocol/errors.h"

namespace lavik {

bool ParseZRangeOrReply(Context& ctx, size_t key, ZRangeForm form, ZRangeSpec* spec) {
  enum { kAuto = -1 };
  int by = kAuto;
  int rev = kAuto;
  switch (form) {
    case ZRangeForm::kZRange:
    case ZRangeForm::kStore:
      break;
    case ZRangeForm::kRevRank:
      by = ZRangeSpec::kRank;
      rev = 1;
      break;
    case ZRangeForm::kByScore:
    case ZRangeForm::kRevByScore:
      by = ZRangeSpec::kScore;
      rev = form == ZRangeForm::kRevByScore;
      break;
    case ZRangeForm::kByLex:
    case ZRangeForm::kRevByLex:
      by = ZRangeSpec::kLex;
      rev = form == ZRangeForm::kRevByLex;
      break;
  }
  const bool store = form == ZRangeForm::kStore;
  for (size_t j = key + 3; j < ctx.args.size(); ++j) {
    const std::string_view o = ctx.args[j];
    const size_t left = ctx.args.size() - j - 1;
    if (!store && EqualsNoCase(o, "withscores")) {
      spec->withscores = true;
    } else if (EqualsNoCase(o, "limit") && left >= 2) {
      if (!ParseInt64(ctx.args[j + 1], &spec->offset) ||
          !ParseInt64(ctx.args[j + 2], &spec->limit)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      j += 2;
    } else if (rev == kAuto && EqualsNoCase(o, "rev")) {
      rev = 1;
    } else if (by == kAuto && EqualsNoCase(o, "bylex")) {
      by = ZRangeSpec::kLex;
    } else if (by == kAuto && EqualsNoCase(o, "byscore")) {
      by = ZRangeSpec::kScore;
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  spec->rev = rev == 1;
  spec->by = by == kAuto ? ZRangeSpec::kRank : static_cast<ZRangeSpec::By>(by);
  // Redis checks only the count: "LIMIT 5 -1" on a rank range is an error too, "no LIMIT" not.
  if (spec->limit != -1 && spec->by == ZRangeSpec::kRank) {
    ctx.reply->Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (spec->withscores && spec->by == ZRangeSpec::kLex) {
    ctx.reply->Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  std::string_view min = ctx.args[key + 1], max = ctx.args[key + 2];
  // Reversed score and lex ranges name the max first.
  if (spec->rev && spec->by != ZRangeSpec::kRank) std::swap(min, max);
  switch (spec->by) {
    case ZRangeSpec::kRank:
      if (!ParseInt64(min, &spec->start) || !ParseInt64(max, &spec->end)) {
        ctx.reply->Error(kErrNotInteger);
        return false;
      }
      break;
    case ZRangeSpec::kScore:
      if (!ParseScoreRange(min, max, &spec->score)) {
        ctx.reply->Error(kErrMinMaxNotFloat);
        return false;
      }
      break;
    case ZRangeSpec::kLex:
      if (!ParseLexRange(min, max, &spec->lex)) {
        ctx.reply->Error(kErrMinMaxNotLex);
        return false;
      }
      break;
  }
  return true;
}

bool RankBounds(const ZRangeSpec& spec, uint32_t n, uint32_t* first, uint32_t* last) {
  int64_t start = spec.start, end = spec.end;
  const int64_t len = n;
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return false;
  if (end >= len) end = len - 1;
  // Reversed ranks count from the top.
  *first = static_cast<uint32_t>(spec.rev ? len - 1 - end : start);
  *last = static_cast<uint32_t>(spec.rev ? len - 1 - start : end);
  return true;
}

std::vector<ZEntry> SelectRange(const std::vector<ZEntry>& sorted, const ZRangeSpec& spec) {
  std::vector<ZEntry> out;
  const auto n = static_cast<int64_t>(sorted.size());
  if (spec.by == ZRangeSpec::kRank) {
    uint32_t first, last;
    if (!RankBounds(spec, static_cast<uint32_t>(n), &first, &last)) return out;
    out.assign(sorted.begin() + first, sorted.begin() + last + 1);
    if (spec.rev) std::reverse(out.begin(), out.end());
    return out;
  }
  // Redis skips `offset` entries one by one while any remain: a negative offset skips them all.
  if (spec.offset < 0) return out;
  int64_t skip = spec.offset;
  auto in = [&](const ZEntry& e) {
    return spec.by == ZRangeSpec::kScore ? spec.score.Contains(e.score)
                                         : spec.lex.Contains(e.member);
  };
  for (int64_t k = 0; k < n; ++k) {
    const ZEntry& e = sorted[static_cast<size_t>(spec.rev ? n - 1 - k : k)];
    if (!in(e)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    if (spec.limit >= 0 && static_cast<int64_t>(out.size()) >= spec.limit) break;
    out.push_back(e);
  }
  return out;
}

std::vector<ZEntry> SelectFromSet(const CollectionView& v, const ZRangeSpec& spec) {
  if (spec.by == ZRangeSpec::kRank) {
    uint32_t first, last;
    if (!RankBounds(spec, v.size(), &first, &last)) return {};
    return RankWindow(v, first, last, spec.rev);
  }
  // Which entries match does not depend on their order, so only the matches are sorted.
  std::vector<ZEntry> matches;
  for (uint32_t i = 0; i < v.size(); ++i) {
    const ZEntry e{ScoreAt(v, i), v.field(i)};
    if (spec.by == ZRangeSpec::kScore ? spec.score.Contains(e.score)
                                      : spec.lex.Contains(e.member)) {
      matches.push_back(e);
    }
  }
  std::sort(matches.begin(), matches.end(), ZLess);
  // Offset, limit and direction as SelectRange applies them, over the matches only.
  ZRangeSpec all = spec;
  all.by = ZRangeSpec::kScore;
  all.score = ScoreRange{-HUGE_VAL, HUGE_VAL, false, false};
  return SelectRange(matches, all);
}

}  // namespace lavik
