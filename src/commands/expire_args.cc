#include "commands/expire_args.h"

#include <strings.h>

#include <climits>
#include <string>

#include "base/ascii.h"
#include "base/numbers.h"
#include "protocol/errors.h"

namespace lavik {
namespace {}  // namespace

bool ExpireAtMsOrReply(Context& ctx, std::string_view arg, ExpireUnit unit, bool relative,
                       int64_t* out) {
  int64_t v;
  if (!ParseInt64(arg, &v)) {
    ctx.reply->Error(kErrNotInteger);
    return false;
  }
  if (v <= 0 || (unit == ExpireUnit::kSeconds && v > LLONG_MAX / 1000)) {
    ctx.reply->Error(InvalidExpireTimeError(ctx.spec->name));
    return false;
  }
  if (unit == ExpireUnit::kSeconds) v *= 1000;
  if (relative) {
    // Overflow of the addition is an invalid expire time, as in Redis.
    if (v > LLONG_MAX - ctx.now_ms) {
      ctx.reply->Error(InvalidExpireTimeError(ctx.spec->name));
      return false;
    }
    v += ctx.now_ms;
  }
  *out = v;
  return true;
}

bool ParseExtendedSetArgsOrReply(Context& ctx, std::span<const std::string_view> opts, bool is_set,
                                 ExtendedSetArgs* out, bool resolve) {
  uint32_t& f = out->flags;
  std::string_view& expire_arg = out->expire_arg;
  for (size_t j = 0; j < opts.size(); ++j) {
    std::string_view o = opts[j];
    bool has_next = j + 1 < opts.size();
    if (EqualsNoCase(o, "nx") && !(f & kSetXx) && is_set) {
      f |= kSetNx;
    } else if (EqualsNoCase(o, "xx") && !(f & kSetNx) && is_set) {
      f |= kSetXx;
    } else if (EqualsNoCase(o, "get") && is_set) {
      f |= kSetGet;
    } else if (EqualsNoCase(o, "keepttl") && !(f & (kSetPersist | kSetAnyExpire)) && is_set) {
      f |= kSetKeepTtl;
    } else if (EqualsNoCase(o, "persist") && !is_set && !(f & (kSetAnyExpire | kSetKeepTtl))) {
      f |= kSetPersist;
    } else if (EqualsNoCase(o, "ex") &&
               !(f & (kSetKeepTtl | kSetPersist | kSetExAt | kSetPx | kSetPxAt)) && has_next) {
      f |= kSetEx;
      expire_arg = opts[++j];
    } else if (EqualsNoCase(o, "px") &&
               !(f & (kSetKeepTtl | kSetPersist | kSetEx | kSetExAt | kSetPxAt)) && has_next) {
      f |= kSetPx;
      expire_arg = opts[++j];
    } else if (EqualsNoCase(o, "exat") &&
               !(f & (kSetKeepTtl | kSetPersist | kSetEx | kSetPx | kSetPxAt)) && has_next) {
      f |= kSetExAt;
      expire_arg = opts[++j];
    } else if (EqualsNoCase(o, "pxat") &&
               !(f & (kSetKeepTtl | kSetPersist | kSetEx | kSetExAt | kSetPx)) && has_next) {
      f |= kSetPxAt;
      expire_arg = opts[++j];
    } else {
      ctx.reply->Error(kErrSyntax);
      return false;
    }
  }
  return !resolve || ResolveExpireOrReply(ctx, out);
}

bool ResolveExpireOrReply(Context& ctx, ExtendedSetArgs* a) {
  const uint32_t f = a->flags;
  if (!(f & kSetAnyExpire)) return true;
  ExpireUnit unit = (f & (kSetEx | kSetExAt)) ? ExpireUnit::kSeconds : ExpireUnit::kMilliseconds;
  bool relative = (f & (kSetEx | kSetPx)) != 0;
  return ExpireAtMsOrReply(ctx, a->expire_arg, unit, relative, &a->expire_at_ms);
}

}  // namespace lavik
