// The script flags that matter in cluster mode (a shebang's `flags=` or a function's flags), as
// Redis 7.0 applies them: `no-cluster` refuses the script on a cluster node; a script allowed
// cross-slot keys (the flag, or an EVAL without a shebang) may redis.call keys of any slot this
// node serves, otherwise every key it touches must hash to one slot.
//
// Thread safety: plain data.
#pragma once

namespace lavik {

struct ClusterScriptFlags {
  bool no_cluster = false;
  bool allow_cross_slot = false;
};

}  // namespace lavik
