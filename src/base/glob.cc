#include "base/glob.h"

#include <utility>

namespace lavik {
namespace {

// Redis 7.0.15 refuses to recurse past this many nested '*' groups (so a
// pattern of 1000 "*a" groups can match but 1001 never does). Keeping the same
// bound keeps KEYS results identical and the stack bounded.
constexpr int kMaxStarNesting = 1000;

inline int Lower(int c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

// Redis widens `char` to int for range checks; on x86-64 `char` is signed.
inline int Widen(char c) { return static_cast<signed char>(c); }

inline bool SameByte(char a, char b, bool nocase) {
  return nocase ? Lower(Widen(a)) == Lower(Widen(b)) : a == b;
}

class Matcher {
 public:
  Matcher(const char* pattern_end, const char* str_end, bool nocase)
      : pattern_end_(pattern_end), str_end_(str_end), nocase_(nocase) {}

  bool Match(const char* p, const char* s, int nesting) {
    if (nesting > kMaxStarNesting) return false;
    const char* const pe = pattern_end_;
    const char* const se = str_end_;
    while (p < pe && s < se) {
      switch (*p) {
        case '*': {
          while (pe - p > 1 && p[1] == '*') ++p;
          if (pe - p == 1) return true;  // A trailing star swallows the rest.
          for (; s < se; ++s) {
            if (Match(p + 1, s, nesting + 1)) return true;
            if (give_up_) return false;
          }
          // The rest of the pattern failed at every remaining offset. Any
          // enclosing star could only move this one further right, where it
          // has just been shown to fail, so every level can stop now. This
          // turns the exponential backtracking of "a*a*a*...b" into a single
          // sweep.
          give_up_ = true;
          return false;
        }
        case '?':
          ++s;
          break;
        case '[': {
          if (!MatchClass(&p, *s)) return false;
          ++s;
          break;
        }
        case '\\':
          if (pe - p >= 2) ++p;  // A trailing backslash matches itself.
          [[fallthrough]];
        default:
          if (!SameByte(*p, *s, nocase_)) return false;
          ++s;
          break;
      }
      ++p;
      if (s == se) {
        while (p < pe && *p == '*') ++p;
        break;
      }
    }
    return p == pe && s == se;
  }

 private:
  // `*pp` points at '['. Leaves `*pp` on the closing ']' (or on the last
  // pattern byte when the class is unterminated) and returns whether `c` is
  // accepted by the class.
  bool MatchClass(const char** pp, char c) {
    const char* p = *pp + 1;
    const char* const pe = pattern_end_;
    const bool negate = p < pe && *p == '^';
    if (negate) ++p;
    bool hit = false;
    for (;; ++p) {
      if (p == pe) {
        --p;  // Unterminated class: it ends with the pattern.
        break;
      }
      if (*p == '\\' && pe - p >= 2) {
        ++p;
        if (*p == c) hit = true;
      } else if (*p == ']') {
        break;
      } else if (pe - p >= 3 && p[1] == '-') {
        int lo = Widen(p[0]);
        int hi = Widen(p[2]);
        int x = Widen(c);
        if (lo > hi) std::swap(lo, hi);
        if (nocase_) {
          lo = Lower(lo);
          hi = Lower(hi);
          x = Lower(x);
        }
        if (x >= lo && x <= hi) hit = true;
        p += 2;
      } else if (SameByte(*p, c, nocase_)) {
        hit = true;
      }
    }
    *pp = p;
    return hit != negate;
  }

  const char* const pattern_end_;
  const char* const str_end_;
  const bool nocase_;
  // Shared by all recursion levels of one GlobMatch call.
  bool give_up_ = false;
};

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  Matcher matcher(pattern.data() + pattern.size(), str.data() + str.size(), nocase);
  return matcher.Match(pattern.data(), str.data(), 0);
}

}  // namespace lavik
