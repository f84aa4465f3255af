// The keys of XREAD and XREADGROUP: the first half of the arguments after STREAMS. Their
// CommandSpec reports no key range (Redis's "0 0 0" with movablekeys), so checks that must see
// every key (ACL key patterns) ask here, as they ask numkeys.h for SINTERCARD and friends.
//
// Thread safety: pure function.
#pragma once

#include <span>
#include <string_view>

#include "base/ascii.h"

namespace lavik {

// True with the keys in args[*first..*last] (step 1) if args is an XREAD/XREADGROUP call whose
// options lead to STREAMS and a balanced key/id list; false otherwise (the command rejects it).
inline bool StreamsKeyRange(std::span<const std::string_view> args, int* first, int* last) {
  size_t i = 1;
  for (; i < args.size(); ++i) {
    if (EqualsNoCase(args[i], "block") || EqualsNoCase(args[i], "count")) {
      ++i;
    } else if (EqualsNoCase(args[i], "group")) {
      i += 2;
    } else if (!EqualsNoCase(args[i], "noack")) {
      break;
    }
  }
  if (i >= args.size() || !EqualsNoCase(args[i], "streams")) return false;
  const size_t n = args.size() - i - 1;
  if (n == 0 || n % 2 != 0) return false;
  *first = static_cast<int>(i + 1);
  *last = static_cast<int>(i + n / 2);
  return true;
}

}  // namespace lavik
