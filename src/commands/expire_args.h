// Parsing of the expiry options shared by SET, GETEX, SETEX/PSETEX (Redis 7.0 t_string.c rules).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "commands/command.h"

namespace lavik {

enum SetFlag : uint32_t {
  kSetNx = 1 << 0,
  kSetXx = 1 << 1,
  kSetGet = 1 << 2,
  kSetKeepTtl = 1 << 3,
  kSetPersist = 1 << 4,
  kSetEx = 1 << 5,
  kSetPx = 1 << 6,
  kSetExAt = 1 << 7,
  kSetPxAt = 1 << 8,
};
inline constexpr uint32_t kSetAnyExpire = kSetEx | kSetPx | kSetExAt | kSetPxAt;

enum class ExpireUnit { kSeconds, kMilliseconds };

struct ExtendedSetArgs {
  uint32_t flags = 0;
  int64_t expire_at_ms = 0;     // absolute; valid if flags & kSetAnyExpire, once resolved
  std::string_view expire_arg;  // the EX/PX/EXAT/PXAT argument as given
};

// Parses args (options after the fixed ones) for SET (is_set) or GETEX. On error writes the
// reply and returns false. `resolve`: the expire time is checked and made absolute too (SET);
// GETEX does that later with ResolveExpireOrReply, since Redis looks the key up in between (a
// missing key is nil whatever the time says).
bool ParseExtendedSetArgsOrReply(Context& ctx, std::span<const std::string_view> opts, bool is_set,
                                 ExtendedSetArgs* out, bool resolve = true);
bool ResolveExpireOrReply(Context& ctx, ExtendedSetArgs* a);

// Turns a relative/absolute expire argument into absolute ms (Redis getExpireMillisecondsOrReply).
bool ExpireAtMsOrReply(Context& ctx, std::string_view arg, ExpireUnit unit, bool relative,
                       int64_t* out);

}  // namespace lavik
