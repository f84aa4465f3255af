#include "commands/collection_chunks.h"

#include <algorithm>
#include <vector>

#include "base/random.h"
#include "base/slot.h"
#include "storage/chunked.h"
#include "storage/index.h"

namespace lavik {
TaskOf<ChunkedRead> ReadChunked(Store& st, std::string_view key, bool with_values,
                                const ReadScope& scope, CollectionRead* out, std::string* error) {
  ChunkRoot& root = out->root;
  if (!ParseChunkRoot(out->record.value, &root) ||
      (root.flags & kRootFlagValues) != (with_values ? kRootFlagValues : 0)) {
    *error = kErrCollectionCorrupt;
    co_return ChunkedRead::kError;
  }
  // A snapshot's walk reads roots that may be gone: only the current ones teach the registry.
  if (!st.snapshot_reading()) st.chunks().NoteRead(Index::Fingerprint(key), root);
  out->chunked = true;
  out->size = root.total;
  std::vector<size_t>& covered = out->covered;
  switch (scope.kind) {
    case ReadScope::Kind::kAll:
      for (size_t i = 0; i < root.chunks.size(); ++i) covered.push_back(i);
      break;
    case ReadScope::Kind::kMembers:
      for (std::string_view m : scope.members) covered.push_back(root.ChunkOf(MemberHash(m)));
      std::sort(covered.begin(), covered.end());
      covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
      break;
    case ReadScope::Kind::kCount:
      break;
    case ReadScope::Kind::kRandom: {
      uint64_t pick = RandomBelow(root.total);
      size_t i = 0;
      while (i + 1 < root.chunks.size() && pick >= root.chunks[i].count) {
        pick -= root.chunks[i].count;
        ++i;
      }
      covered.push_back(i);
      break;
    }
    case ReadScope::Kind::kScan: {
      int64_t entries = 0;
      for (size_t i = root.ChunkOf(scope.cursor); i < root.chunks.size(); ++i) {
        covered.push_back(i);
        entries += root.chunks[i].count;
        if (entries >= scope.count) break;
      }
      const size_t next = covered.empty() ? root.chunks.size() : covered.back() + 1;
      out->scan_next = next < root.chunks.size() ? root.chunks[next].first : 0;
      break;
    }
  }
  out->chunk_bytes.resize(covered.size());
  for (size_t k = 0; k < covered.size(); ++k) {
    const ChunkRef& c = root.chunks[covered[k]];
    const ChunkRead r =
        co_await ReadChunk(st, root.slot, root.id, c.number, &out->chunk_bytes[k], error);
    if (r == ChunkRead::kError) co_return ChunkedRead::kError;
    if (r == ChunkRead::kMissing) co_return ChunkedRead::kRetry;
  }
  if (covered.size() == 1) {
    if (!out->view.Parse(out->chunk_bytes[0], with_values)) {
      *error = kErrCollectionCorrupt;
      co_return ChunkedRead::kError;
    }
  } else if (covered.size() > 1) {
    std::vector<CollectionView> views(covered.size());
    std::vector<CollectionRange> parts;
    for (size_t k = 0; k < covered.size(); ++k) {
      if (!views[k].Parse(out->chunk_bytes[k], with_values)) {
        *error = kErrCollectionCorrupt;
        co_return ChunkedRead::kError;
      }
      parts.push_back({&views[k], 0, views[k].size()});
    }
    out->copy = ConcatRanges(parts, with_values);
    if (!out->view.Parse(out->copy, with_values)) {
      *error = kErrCollectionCorrupt;
      co_return ChunkedRead::kError;
    }
  }
  co_return ChunkedRead::kOk;
}

}  // namespace lavik
