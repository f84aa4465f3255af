#include "config/live_settings.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config_registry.h"

namespace lavik {
namespace {

LiveSettings& Mutable() {
  static LiveSettings settings;
  return settings;
}

struct Field {
  const char* name;
  std::atomic<int64_t> LiveSettings::*field;
};

constexpr Field kFields[] = {
    {"proto-max-bulk-len", &LiveSettings::proto_max_bulk_len},
    {"hll-sparse-max-bytes", &LiveSettings::hll_sparse_max_bytes},
    {"hash-max-listpack-entries", &LiveSettings::hash_max_listpack_entries},
    {"hash-max-listpack-value", &LiveSettings::hash_max_listpack_value},
    {"zset-max-listpack-entries", &LiveSettings::zset_max_listpack_entries},
    {"zset-max-listpack-value", &LiveSettings::zset_max_listpack_value},
    {"set-max-intset-entries", &LiveSettings::set_max_intset_entries},
    {"list-max-listpack-size", &LiveSettings::list_max_listpack_size},
    {"stream-node-max-entries", &LiveSettings::stream_node_max_entries},
    {"stream-node-max-bytes", &LiveSettings::stream_node_max_bytes},
};

// The registry stores these parameters normalised to plain integers (memory units in bytes).
void Store(std::atomic<int64_t>* to, std::string_view value) {
  to->store(std::strtoll(std::string(value).c_str(), nullptr, 10), std::memory_order_relaxed);
}

}  // namespace

const LiveSettings& Live() { return Mutable(); }

void WireLiveSettings(ConfigRegistry* registry) {
  for (const Field& f : kFields) {
    std::atomic<int64_t>* to = &(Mutable().*f.field);
    if (const std::string* v = registry->Value(f.name)) Store(to, *v);
    registry->OnChange(f.name, [to](std::string_view v) {
      Store(to, v);
      return Status::Ok();
    });
  }
  std::atomic<bool>* lazy_expire = &Mutable().lazyfree_lazy_expire;
  if (const std::string* v = registry->Value("lazyfree-lazy-expire")) *lazy_expire = *v == "yes";
  registry->OnChange("lazyfree-lazy-expire", [lazy_expire](std::string_view v) {
    lazy_expire->store(v == "yes", std::memory_order_relaxed);
    return Status::Ok();
  });
}

}  // namespace lavik
