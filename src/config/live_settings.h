// LiveSettings: the parameters command handlers read while they run, on any worker, kept current
// by the registry: WireLiveSettings() copies them in at start-up and again on every CONFIG SET
// of one of them. Handlers read Live() instead of reaching the server's registry (which lives
// above them and is guarded by the CONFIG mutex).
//
// Thread safety: any thread; relaxed atomics (a command sees the old or the new value, never a
// torn one). Only WireLiveSettings' hooks write.
#pragma once

#include <atomic>
#include <cstdint>

namespace lavik {

class ConfigRegistry;

struct LiveSettings {
  // The longest string a command may build (SETRANGE, APPEND, SETBIT offsets, LCS's table).
  std::atomic<int64_t> proto_max_bulk_len{512LL * 1024 * 1024};
  std::atomic<int64_t> hll_sparse_max_bytes{3000};
  // Redis's encoding thresholds: what OBJECT ENCODING reports and DUMP writes.
  std::atomic<int64_t> hash_max_listpack_entries{512};
  std::atomic<int64_t> hash_max_listpack_value{64};
  std::atomic<int64_t> zset_max_listpack_entries{128};
  std::atomic<int64_t> zset_max_listpack_value{64};
  std::atomic<int64_t> set_max_intset_entries{512};
  std::atomic<int64_t> list_max_listpack_size{-2};
  std::atomic<int64_t> stream_node_max_entries{100};
  std::atomic<int64_t> stream_node_max_bytes{4096};
  // lazyfree-lazy-expire: a key the server expires reaches its replicas as UNLINK, not DEL.
  std::atomic<bool> lazyfree_lazy_expire{false};

  static int64_t Get(const std::atomic<int64_t>& v) { return v.load(std::memory_order_relaxed); }
};

// The process's settings.
const LiveSettings& Live();

// Copies every LiveSettings parameter from `registry` now and installs the hooks that keep them
// current. Called once, by the server, before the workers start.
void WireLiveSettings(ConfigRegistry* registry);

}  // namespace lavik
