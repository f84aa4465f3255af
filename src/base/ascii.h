// ASCII helpers for command arguments (Redis compares option names case-insensitively).
#pragma once

#include <strings.h>

#include <string_view>

namespace lavik {

// True if `arg` equals `word` ignoring ASCII case (e.g. an option such as "nx" or "COUNT").
inline bool EqualsNoCase(std::string_view arg, std::string_view word) {
  return arg.size() == word.size() && strncasecmp(arg.data(), word.data(), arg.size()) == 0;
}

}  // namespace lavik
