// What a read of a collection key returns (ReadCollection in collection_access.h,
// ReadChunked in collection_chunks.h): the scope a command needs and the bytes and view read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/chunk_format.h"
#include "storage/collection.h"
#include "storage/store.h"

namespace lavik {

// Which part of a collection a command needs. A one-record collection is always read whole;
// for a chunked one (doc/collections.md) only the chunks the scope names are read.
struct ReadScope {
  enum class Kind {
    kAll,      // every entry (materialised in memory from the chunks: O(n))
    kMembers,  // the chunks holding `members` (point commands; the view holds only those)
    kCount,    // no entries: the root's count (HLEN/SCARD/ZCARD)
    kScan,     // chunks from the one holding `cursor`, about `count` entries (H/S/ZSCAN)
    kRandom,   // one chunk drawn with probability count/total: a uniform pick inside it is a
               // uniform pick of the collection (SRANDMEMBER, SPOP, HRANDFIELD, ZRANDMEMBER)
  };
  Kind kind = Kind::kAll;
  std::span<const std::string_view> members;
  uint64_t cursor = 0;
  int64_t count = 0;

  static ReadScope Members(std::span<const std::string_view> m) {
    return ReadScope{Kind::kMembers, m, 0, 0};
  }
  static ReadScope Count() { return ReadScope{Kind::kCount, {}, 0, 0}; }
  static ReadScope Scan(uint64_t cursor, int64_t count) {
    return ReadScope{Kind::kScan, {}, cursor, count};
  }
  static ReadScope Random() { return ReadScope{Kind::kRandom, {}, 0, 0}; }
};

struct CollectionRead {
  KeyInfo info;         // info.exists false: no such key (view is then empty)
  ReadResult record;    // the bytes, valid until the next call on the Store
  std::string copy;     // the bytes, when the caller asked for a copy (or concatenated chunks)
  CollectionView view;  // over `copy` if copied, else over `record` (or one chunk's bytes)
  uint64_t size = 0;    // entries in the whole collection (not only in the view)
  // Chunked collections: the root, the chunks the view covers (indices into root.chunks, in
  // order) and their bytes; scan_next is the scan cursor past the covered chunks (0: the end).
  bool chunked = false;
  ChunkRoot root;
  std::vector<size_t> covered;
  std::vector<std::string> chunk_bytes;
  uint64_t scan_next = 0;
};

}  // namespace lavik
