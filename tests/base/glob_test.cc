#include "base/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace lavik {
namespace {

struct GlobCase {
  std::string pattern;
  std::string str;
  bool match;
};

void ExpectAll(const std::vector<GlobCase>& cases, bool nocase = false) {
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.str, nocase), c.match)
        << "pattern '" << c.pattern << "' str '" << c.str << "' nocase " << nocase;
  }
}

TEST(GlobTest, Literals) {
  ExpectAll({
      {"hello", "hello", true},
      {"hello", "hell", false},
      {"hello", "helloo", false},
      {"hello", "Hello", false},
      {"", "", true},
      {"", "a", false},
      {"a", "", false},
  });
}

TEST(GlobTest, Star) {
  ExpectAll({
      {"h*o", "hello", true},
      {"h*o", "ho", true},
      {"h*o", "hellx", false},
      {"*llo", "hello", true},
      {"he*", "he", true},
      {"***", "x", true},
      {"a**b", "ab", true},
      {"*a*", "a", true},
      {"*a*", "bbb", false},
      {"*.txt", "notes.txt", true},
      {"*.txt", "notes.txt.bak", false},
      // Redis never matches an empty subject with a non-empty pattern; KEYS
      // and SCAN special-case a lone "*" instead.
      {"*", "", false},
      {"*", "anything", true},
  });
}

TEST(GlobTest, QuestionMark) {
  ExpectAll({
      {"h?llo", "hello", true},
      {"h?llo", "hallo", true},
      {"h?llo", "hllo", false},
      {"??", "ab", true},
      {"??", "a", false},
      {"?", std::string(1, '\0'), true},
  });
}

TEST(GlobTest, Classes) {
  ExpectAll({
      {"h[ae]llo", "hello", true},
      {"h[ae]llo", "hallo", true},
      {"h[ae]llo", "hillo", false},
      {"h[^e]llo", "hallo", true},
      {"h[^e]llo", "hello", false},
      {"h[a-b]llo", "hbllo", true},
      {"h[a-b]llo", "hcllo", false},
      {"h[b-a]llo", "hallo", true},  // Reversed range is swapped.
      {"[0-9][0-9]", "42", true},
      {"[0-9][0-9]", "4x", false},
      {"[a-cx-z]", "y", true},
      {"[a-cx-z]", "m", false},
      {"[]]", "]", false},  // "[]" is an empty class, then a literal ']'.
      {"[]]", "x]", false},
      {"[\\]]", "]", true},
      {"[\\-]", "-", true},
      {"[a-]", "]", true},  // "a-]" is a range ending at ']'; the class runs on.
      {"[abc", "b", true},  // Unterminated class runs to the end of pattern.
      {"[abc", "d", false},
      {"[^", "x", true},
      {"[", "x", false},
  });
}

TEST(GlobTest, Escapes) {
  ExpectAll({
      {"h\\*llo", "h*llo", true},
      {"h\\*llo", "hello", false},
      {"\\?", "?", true},
      {"\\?", "a", false},
      {"\\[a]", "[a]", true},
      {"a\\", "a\\", true},  // A trailing backslash matches itself.
      {"\\\\", "\\", true},
  });
}

TEST(GlobTest, HighBytesCompareSigned) {
  // Range bounds are signed chars, as in x86-64 Redis: [\x80-a] is the
  // interval [-128, 97], which holds 0x00-0x61 and all high bytes.
  ExpectAll({
      {"[\x80-a]", "\xff", true},
      {"[\x80-a]", "A", true},
      {"[\x80-a]", "b", false},
      {"[a-\xff]", "\xff", true},
      {"[a-\xff]", "b", false},
      {"[\x80-\xff]", "\xc3", true},
      {"\xc3*", "\xc3\xa9t\xc3\xa9", true},
  });
}

TEST(GlobTest, NoCase) {
  ExpectAll(
      {
          {"HeLLo", "hello", true},
          {"h*O", "HELLO", true},
          {"[A-C]", "b", true},
          {"[a-c]", "B", true},
          {"[^A]", "a", false},
          {"[X]", "x", true},
          {"[\\X]", "x", false},  // Escaped class member stays case-sensitive.
          {"\\X", "x", true},
          {"maxmemory*", "MAXMEMORY-policy", true},
      },
      /*nocase=*/true);
  EXPECT_FALSE(GlobMatch("HeLLo", "hello"));
}

TEST(GlobTest, EmbeddedNul) {
  const std::string key("a\0b", 3);
  EXPECT_TRUE(GlobMatch(std::string("a\0b", 3), key));
  EXPECT_TRUE(GlobMatch("a?b", key));
  EXPECT_TRUE(GlobMatch("a*", key));
  EXPECT_FALSE(GlobMatch("a", key));
}

TEST(GlobTest, StarNestingLimit) {
  // redis-server 7.0.15: KEYS with 1000 "*a" groups matches a key of 1000
  // 'a's; with 1001 groups nothing matches.
  std::string pattern;
  for (int i = 0; i < 1000; ++i) pattern += "*a";
  EXPECT_TRUE(GlobMatch(pattern, std::string(1000, 'a')));
  pattern += "*a";
  EXPECT_FALSE(GlobMatch(pattern, std::string(1001, 'a')));
}

TEST(GlobTest, PathologicalPatternsStayFast) {
  const std::string subject(100000, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*a*b", subject));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c", subject));
  EXPECT_TRUE(GlobMatch("a*a*a*a*a*a*a*a*a", subject));
  std::string many_stars;
  for (int i = 0; i < 500; ++i) many_stars += "?*";
  EXPECT_FALSE(GlobMatch(many_stars + "b", subject));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // Without the cut-off these take longer than the age of the universe; with
  // it they are a few sweeps over the subject (generous bound for sanitizers).
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

}  // namespace
}  // namespace lavik
