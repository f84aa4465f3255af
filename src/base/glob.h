// Glob-style pattern matching with the exact semantics of Redis's
// stringmatchlen(), as used by KEYS, SCAN MATCH, PSUBSCRIBE and CONFIG GET.
//
// Pattern syntax:
//   *        any run of bytes (possibly empty)
//   ?        exactly one byte
//   [abc]    one byte from the set; [^abc] one byte not in the set
//   [a-z]    one byte in the range; reversed ranges ([z-a]) are swapped
//   \x       the byte x literally (also inside [...])
// Redis quirks that are reproduced on purpose, because clients observe them:
//   - A subject must be non-empty to match anything: GlobMatch("*", "") is
//     false. KEYS and SCAN special-case the lone "*" pattern before calling.
//   - An unterminated class ("[abc") runs to the end of the pattern.
//   - Range bounds compare bytes as signed chars (x86-64 Redis), so a range
//     spanning 0x7f/0x80 behaves like Redis on that platform.
//   - Inside [...] an escaped byte is compared case-sensitively even when
//     nocase is set.
//   - Patterns whose '*' groups nest deeper than 1000 never match; this bounds
//     recursion depth the same way Redis 7.0.15 does.
// Cost: the "no longer match can help" cut-off (see glob.cc) keeps patterns
// such as "a*a*a*a*b" linear-ish in the subject instead of exponential.
//
// Thread safety: pure function, callable from any thread.
#pragma once

#include <string_view>

namespace lavik {

// True when `str` matches `pattern`. With `nocase`, ASCII letters compare
// case-insensitively (C locale, as Redis runs).
bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace lavik
