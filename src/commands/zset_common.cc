#include "commands/zset_common.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "base/numbers.h"

namespace lavik {

std::string EncodeScore(double score) {
  const uint64_t bits = std::bit_cast<uint64_t>(score);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(bits >> (8 * i));
  return out;
}

double ScoreAt(const CollectionView& v, uint32_t i) {
  const std::string_view b = v.value(i);
  if (b.size() != 8) return 0;
  uint64_t bits = 0;
  for (int k = 0; k < 8; ++k) bits |= uint64_t{static_cast<uint8_t>(b[k])} << (8 * k);
  return std::bit_cast<double>(bits);
}

std::vector<ZEntry> SortedEntries(const CollectionView& v) {
  std::vector<ZEntry> out;
  out.reserve(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) out.push_back({ScoreAt(v, i), v.field(i)});
  std::sort(out.begin(), out.end(), ZLess);
  return out;
}

std::vector<ZEntry> RankWindow(const CollectionView& v, uint32_t first, uint32_t last,
                               bool reverse) {
  std::vector<ZEntry> all;
  all.reserve(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) all.push_back({ScoreAt(v, i), v.field(i)});
  // After nth_element every entry from `first` on ranks >= first; sorting the smallest
  // k of those gives ranks first..last.
  if (first > 0) std::nth_element(all.begin(), all.begin() + first, all.end(), ZLess);
  std::partial_sort(all.begin() + first, all.begin() + last + 1, all.end(), ZLess);
  std::vector<ZEntry> out(all.begin() + first, all.begin() + last + 1);
  if (reverse) std::reverse(out.begin(), out.end());
  return out;
}

namespace {

bool ParseScoreBound(std::string_view s, double* v, bool* ex) {
  *ex = !s.empty() && s[0] == '(';
  if (*ex) s.remove_prefix(1);
  // Redis zslParseRange is plain strtod up to the end of the argument: "" and "(" are 0, a
  // leading space and an overflow to inf pass (ParseDouble refuses those); NaN does not.
  const std::string text(s);
  if (text.find('\0') != std::string::npos) return false;
  char* end = nullptr;
  *v = std::strtod(text.c_str(), &end);
  return *end == '\0' && !std::isnan(*v);
}

bool ParseLexBound(std::string_view s, LexBound* b) {
  if (s == "-" || s == "+") {
    b->kind = s == "-" ? LexBound::kNegInf : LexBound::kPosInf;
    return true;
  }
  if (s.empty() || (s[0] != '[' && s[0] != '(')) return false;
  b->kind = LexBound::kValue;
  b->exclusive = s[0] == '(';
  b->value = s.substr(1);
  return true;
}

}  // namespace

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r) {
  return ParseScoreBound(min, &r->min, &r->minex) && ParseScoreBound(max, &r->max, &r->maxex);
}

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* r) {
  return ParseLexBound(min, &r->min) && ParseLexBound(max, &r->max);
}

bool LexRange::Above(std::string_view m) const {
  switch (min.kind) {
    case LexBound::kNegInf:
      return true;
    case LexBound::kPosInf:
      return false;
    case LexBound::kValue:
      break;
  }
  return min.exclusive ? m > min.value : m >= min.value;
}

bool LexRange::Below(std::string_view m) const {
  switch (max.kind) {
    case LexBound::kNegInf:
      return false;
    case LexBound::kPosInf:
      return true;
    case LexBound::kValue:
      break;
  }
  return max.exclusive ? m < max.value : m <= max.value;
}

void ReplyEntries(Context& ctx, const std::vector<ZEntry>& entries, bool withscores, bool nested) {
  const bool pairs = withscores && nested && ctx.reply->resp() >= 3;
  ctx.reply->Array(withscores && !pairs ? entries.size() * 2 : entries.size());
  for (const ZEntry& e : entries) {
    if (pairs) ctx.reply->Array(2);
    ctx.reply->Bulk(e.member);
    if (withscores) ctx.reply->Double(e.score);
  }
}

}  // namespace lavik
