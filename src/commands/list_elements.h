// Pure list helpers: Redis's index arithmetic and the element edits of pushes, pops, LREM and
// LPOS on a list's elements (list_ops.h and list_chunks.h use them).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/list_record.h"

namespace lavik {

// Redis's index rules: a negative index counts from the tail. False if out of range.
bool ResolveIndex(uint32_t size, int64_t index, uint32_t* out);
// LRANGE/LTRIM start/stop clamped to the list; false if the range is empty.
bool ClampRange(uint32_t size, int64_t start, int64_t stop, uint32_t* from, uint32_t* to);

// LPUSH pushes each argument at the head in turn (so they end up reversed), RPUSH at the tail.
void PushElements(std::vector<std::string_view>* e, std::span<const std::string_view> add,
                  bool left);
// Removes up to `count` elements from one end into *out (copies), in pop order.
void PopElements(std::vector<std::string_view>* e, uint64_t count, bool left,
                 std::vector<std::string>* out);
// LREM: removes up to |count| occurrences (0: all) from the head (count >= 0) or the tail.
int64_t RemoveElements(std::vector<std::string_view>* e, std::string_view element, int64_t count);
// LPOS: the indices of the matches of `element`, the rank-th first (negative: from the tail),
// at most `count` of them (0: all), looking at no more than `maxlen` elements (0: all).
std::vector<int64_t> FindPositions(const ListView& v, std::string_view element, int64_t rank,
                                   int64_t count, int64_t maxlen);

}  // namespace lavik
