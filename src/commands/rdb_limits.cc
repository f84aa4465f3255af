#include "commands/rdb_limits.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "config/live_settings.h"

namespace lavik {

rdb::EncodeLimits LiveEncodeLimits() {
  const LiveSettings& l = Live();
  auto get = [](const std::atomic<int64_t>& v) {
    return static_cast<uint64_t>(std::max<int64_t>(0, LiveSettings::Get(v)));
  };
  rdb::EncodeLimits e;
  e.hash_max_listpack_entries = get(l.hash_max_listpack_entries);
  e.hash_max_listpack_value = get(l.hash_max_listpack_value);
  e.zset_max_listpack_entries = get(l.zset_max_listpack_entries);
  e.zset_max_listpack_value = get(l.zset_max_listpack_value);
  e.set_max_intset_entries = get(l.set_max_intset_entries);
  // list-max-listpack-size -1..-5 are node sizes of 4..64 KiB; a positive count keeps the
  // default node size (the object stays loadable, only its node split differs from Redis's).
  const int64_t list = LiveSettings::Get(l.list_max_listpack_size);
  if (list < 0 && list >= -5) e.list_max_listpack_bytes = uint64_t{4096} << (-list - 1);
  e.stream_node_max_entries = get(l.stream_node_max_entries);
  e.stream_node_max_bytes = get(l.stream_node_max_bytes);
  return e;
}

}  // namespace lavik
