// Number parsing and formatting with Redis 7.0's exact rules (util.c:
// string2ll, string2d, string2ld, ld2string; the "%.17g" double replies).
// Clients depend on these byte for byte: which strings INCR accepts, how
// ZSCORE and INCRBYFLOAT print. Parse* never allocate for normal-sized input;
// the buffer-based Format* never allocate.
//
// Thread safety: all functions are reentrant. Floating-point parsing uses the
// C library and so assumes the process keeps the default "C" LC_NUMERIC locale
// (the decimal point is '.'), as Redis does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik {

// Longest FormatInt64/FormatUint64 output: "-9223372036854775808" and
// "18446744073709551615" are both 20 bytes.
inline constexpr size_t kMaxInt64Chars = 20;
// Longest FormatDouble output, e.g. "-2.2250738585072014e-308" (24), rounded up.
inline constexpr size_t kMaxDoubleChars = 32;
// Redis's MAX_LONG_DOUBLE_CHARS: ParseLongDouble rejects input this long or
// longer, and it bounds FormatLongDouble's "%.17Lf" output.
inline constexpr size_t kMaxLongDoubleChars = 5 * 1024;

// Redis string2ll: optional '-', then "0" alone or a digit 1-9 followed by
// digits; nothing else. Rejects "", "-", "-0", "01", "+1", " 1", "1 ", "1e3",
// inputs of 21+ bytes and anything outside int64_t. `*out` is written only on
// success.
bool ParseInt64(std::string_view s, int64_t* out);

// Unsigned twin of ParseInt64 with the same strict grammar minus the sign:
// "0" or [1-9][0-9]*, at most UINT64_MAX. (Redis's string2ull falls back to
// strtoull and so also takes " 1" or "+1"; Lavik keeps the strict form.)
bool ParseUint64(std::string_view s, uint64_t* out);

// Redis string2d (ZADD scores, getDoubleFromObject): whatever strtod accepts
// consuming the whole input, except an empty string, a leading space, NaN, and
// overflow or underflow to zero. So "1e5", ".5", "5.", "+1", "0x10", "inf",
// "-Infinity" and subnormals like "4.9e-324" are accepted; "nan", "1e400",
// "1e-400", " 1" and "1 " are not. `*out` is written only on success.
bool ParseDouble(std::string_view s, double* out);

// Redis string2ld (INCRBYFLOAT, HINCRBYFLOAT): the ParseDouble rules on the
// x87 long double range (so "1e-400" and "1e4000" are fine), and input of
// kMaxLongDoubleChars bytes or more is rejected.
bool ParseLongDouble(std::string_view s, long double* out);

// Decimal text of `v` into `buf` (room for kMaxInt64Chars); returns the length.
// No terminating NUL is written.
size_t FormatInt64(int64_t v, char* buf);
size_t FormatUint64(uint64_t v, char* buf);

// Redis's double reply text (RESP2 bulk / RESP3 double, ZSCORE, ZINCRBY):
// printf "%.17g", with "inf", "-inf" and "nan" spelled out. So 1.5 -> "1.5",
// 1.1 -> "1.1000000000000001", 1 -> "1", 1e20 -> "1e+20", -0.0 -> "-0".
// `buf` needs kMaxDoubleChars bytes; returns the length, no NUL written.
size_t FormatDouble(double v, char* buf);
std::string FormatDouble(double v);

// Redis ld2string in LD_STR_HUMAN mode (INCRBYFLOAT / HINCRBYFLOAT results):
// "%.17Lf" with trailing zeros and a trailing '.' removed, "-0" folded to "0",
// "inf"/"-inf"/"nan" spelled out. So 10.5+0.1 -> "10.6", 5e3 -> "5000",
// 1e-20 -> "0". Large values print every integer digit (1e308 -> 309 digits).
std::string FormatLongDouble(long double v);

}  // namespace lavik
