#include "commands/list_elements.h"

#include <algorithm>

namespace lavik {

bool ResolveIndex(uint32_t size, int64_t index, uint32_t* out) {
  if (index < 0) index += size;
  if (index < 0 || index >= static_cast<int64_t>(size)) return false;
  *out = static_cast<uint32_t>(index);
  return true;
}

bool ClampRange(uint32_t size, int64_t start, int64_t stop, uint32_t* from, uint32_t* to) {
  const auto n = static_cast<int64_t>(size);
  if (start < 0) start = std::max<int64_t>(start + n, 0);
  if (stop < 0) stop += n;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *from = static_cast<uint32_t>(start);
  *to = static_cast<uint32_t>(stop);
  return true;
}

void PushElements(std::vector<std::string_view>* e, std::span<const std::string_view> add,
                  bool left) {
  if (!left) {
    e->insert(e->end(), add.begin(), add.end());
    return;
  }
  e->insert(e->begin(), add.rbegin(), add.rend());
}

void PopElements(std::vector<std::string_view>* e, uint64_t count, bool left,
                 std::vector<std::string>* out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(count, e->size()));
  if (left) {
    for (size_t i = 0; i < n; ++i) out->emplace_back((*e)[i]);
    e->erase(e->begin(), e->begin() + static_cast<std::ptrdiff_t>(n));
  } else {
    for (size_t i = 0; i < n; ++i) out->emplace_back((*e)[e->size() - 1 - i]);
    e->resize(e->size() - n);
  }
}

int64_t RemoveElements(std::vector<std::string_view>* e, std::string_view element, int64_t count) {
  // |INT64_MIN| does not fit: any count that large means "all" in practice.
  const uint64_t limit = count == 0  ? UINT64_MAX
                         : count < 0 ? (count == INT64_MIN ? UINT64_MAX : uint64_t(-count))
                                     : uint64_t(count);
  uint64_t removed = 0;
  if (count >= 0) {
    auto keep = e->begin();
    for (auto it = e->begin(); it != e->end(); ++it) {
      if (removed < limit && *it == element) {
        ++removed;
      } else {
        *keep++ = *it;
      }
    }
    e->erase(keep, e->end());
  } else {
    std::vector<std::string_view> kept;
    kept.reserve(e->size());
    for (auto it = e->rbegin(); it != e->rend(); ++it) {
      if (removed < limit && *it == element) {
        ++removed;
      } else {
        kept.push_back(*it);
      }
    }
    e->assign(kept.rbegin(), kept.rend());
  }
  return static_cast<int64_t>(removed);
}

std::vector<int64_t> FindPositions(const ListView& v, std::string_view element, int64_t rank,
                                   int64_t count, int64_t maxlen) {
  std::vector<int64_t> out;
  const int64_t n = v.size();
  // A rank of INT64_MIN has no positive counterpart; it can never be reached anyway.
  const uint64_t skip =
      rank > 0 ? uint64_t(rank) - 1 : (rank == INT64_MIN ? UINT64_MAX : uint64_t(-rank) - 1);
  uint64_t matches = 0;
  for (int64_t k = 0; k < n && (maxlen == 0 || k < maxlen); ++k) {
    const int64_t i = rank > 0 ? k : n - 1 - k;
    if (v.element(static_cast<uint32_t>(i)) != element) continue;
    if (matches++ < skip) continue;
    out.push_back(i);
    if (count != 0 && static_cast<int64_t>(out.size()) >= count) break;
  }
  return out;
}

}  // namespace lavik
