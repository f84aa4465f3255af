// One value as an RDB object: the type byte and the serialized object (rdbSaveObjectType +
// rdbSaveObject / rdbLoadObjectType + rdbLoadObject of Redis 7.0), to and from Lavik's value
// records (storage/value_type.h; a collection, list or stream in its one-record encoding).
//
// Encoding picks what Redis 7.0 writes for the same value under the given limits: a string as
// STRING; a list as QUICKLIST_2 of listpack nodes; a set as INTSET or SET; a sorted set as
// ZSET_LISTPACK or ZSET_2; a hash as HASH_LISTPACK or HASH; a stream as STREAM_LISTPACKS_2.
// Decoding also reads the encodings older Redis versions wrote and 7.0 still loads (LIST,
// ZIPLIST and QUICKLIST lists, ZSET, ZSET_ZIPLIST, HASH_ZIPMAP, HASH_ZIPLIST, STREAM_LISTPACKS).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rdb/source.h"
#include "storage/value_type.h"

namespace lavik::rdb {

// Redis's encoding thresholds (the *-max-listpack-* and stream-node-* configs), defaulting to
// the values Lavik and Debian's redis-server 7.0.15 start with.
struct EncodeLimits {
  uint64_t hash_max_listpack_entries = 512;
  uint64_t hash_max_listpack_value = 64;
  uint64_t zset_max_listpack_entries = 128;
  uint64_t zset_max_listpack_value = 64;
  uint64_t set_max_intset_entries = 512;
  uint64_t list_max_listpack_bytes = 8192;  // list-max-listpack-size -2
  uint64_t stream_node_max_entries = 100;
  uint64_t stream_node_max_bytes = 4096;
};

// Appends the type byte and the object for `record` (a value of `type`, one record). False if
// the record is damaged (nothing useful is appended then).
bool EncodeObject(ValueType type, std::string_view record, const EncodeLimits& limits,
                  std::string* out);

// Reads a type byte and its object from `src` into *type and *record (Lavik's one-record
// encoding). False for a truncated or malformed object, an unknown type, or a value Redis
// refuses to load (an empty collection, duplicate members, a NaN score...).
bool DecodeObject(ByteSource& src, ValueType* type, std::string* record);

// The stream halves (stream_rdb.cc).
bool EncodeStreamObject(std::string_view record, const EncodeLimits& limits, std::string* out);
bool DecodeStreamObject(ByteSource& src, uint8_t rdb_type, std::string* record);

}  // namespace lavik::rdb
