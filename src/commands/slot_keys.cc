#include "commands/slot_keys.h"

#include "base/db_key.h"
#include "base/slot.h"
#include "storage/index.h"
#include "storage/store.h"

namespace lavik {

Task KeysInSlot(Store& st, uint16_t slot, size_t max, int64_t now_ms,
                std::vector<std::string>* out) {
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  uint64_t cursor = 0;
  do {
    cursor = st.ScanIndex(cursor, 1024, 0,
                          [&](uint64_t fp, uint64_t l) { entries.emplace_back(fp, l); });
  } while (cursor != 0);
  size_t found = 0;
  for (const auto& [fp, l] : entries) {
    if (found >= max) break;
    if (st.ExpiredFp(fp, now_ms)) continue;
    ReadResult r = co_await st.ReadAt(fp, l);
    if (!r.ok()) continue;
    const SplitKey k = SplitDbKey(r.key);
    if (k.db != 0 || KeyHashSlot(k.key) != slot) continue;
    out->emplace_back(k.key);
    ++found;
  }
}

}  // namespace lavik
