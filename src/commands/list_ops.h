// The list operations list_family.cc and list_blocking.cc share: the element helpers
// (list_elements.h), argument parsing of the LEFT|RIGHT and LMPOP forms, and the multi-key pops
// (LMOVE, LMPOP) that the blocking forms retry after a wake-up.
//
// Thread safety: MoveOnce/MPopOnce run on the handler's worker
// between plan.Lock() and plan.Unlock() and reach each key's worker through the plan.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "commands/list_elements.h"
#include "commands/multi_shard.h"
#include "storage/list_record.h"

namespace lavik {

// LEFT or RIGHT; replies a syntax error otherwise.
bool ParseSideOrReply(Context& ctx, std::string_view arg, bool* left);

struct MoveResult {
  bool moved = false;
  std::string element;
  std::string error;
  int dst_shard = -1;  // where the element was pushed (to wake blocked clients there)
};

// One LMOVE of plan.keys()[0] to plan.keys()[1] under the plan's locks: nothing moved if the
// source is missing (before any type check of the destination, as Redis).
Task MoveOnce(Context& ctx, KeyPlan& plan, bool from_left, bool to_left, MoveResult* out);

struct MPopArgs {
  size_t numkeys = 0;
  bool left = true;
  int64_t count = 1;
};

// [B]LMPOP's numkeys key... LEFT|RIGHT [COUNT count], numkeys at args[numkeys_at].
bool ParseMPopArgsOrReply(Context& ctx, size_t numkeys_at, MPopArgs* a);

struct PopResult {
  std::string key;  // empty: every list was empty
  std::vector<std::string> elements;
  std::string error;
};

// Pops from the first non-empty list of plan.keys() (in argument order) under the plan's locks.
Task MPopOnce(Context& ctx, KeyPlan& plan, const MPopArgs& a, PopResult* out);

// [key, [elements]], a null array if nothing was popped, or the error.
void ReplyMPop(Context& ctx, const PopResult& r);

}  // namespace lavik
