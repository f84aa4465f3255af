#include "commands/slot_keys.h"

#include <algorithm>
#include <utility>

#include "base/slot.h"
#include "runtime/join.h"
#include "storage/index.h"
#include "storage/store.h"

namespace lavik {
namespace {

// Device reads in flight at once: deep enough for the SSD's parallelism (~10k IOPS at depth 1,
// 40-70k at 8-128 on these machines), small enough not to crowd out foreground reads.
constexpr size_t kReadsInFlight = 32;

struct Name {
  std::string key;
  bool ok = false;
};

Task ReadKeyName(Store& st, uint64_t fp, uint64_t l, Name* out) {
  ReadResult r = co_await st.ReadAt(fp, l);
  if (!r.ok()) co_return;  // a damaged record: not served as a key
  out->key.assign(r.key);  // copied before any other call on the store
  out->ok = true;
}

}  // namespace

size_t CountKeysInSlot(const Store& st, uint16_t slot) { return st.slot_size(slot); }

void SlotEntries(const Store& st, uint16_t slot, size_t max, int64_t now_ms,
                 std::vector<std::pair<uint64_t, uint64_t>>* out) {
  out->clear();
  if (!Index::slot_fingerprints() || slot >= kNumSlots || max == 0) return;
  uint64_t cursor = Index::SlotStart(slot);
  do {
    cursor = st.ScanEntries(cursor, 64, [&](uint64_t fp, uint64_t l) {
      if (Index::FpSlot(fp) != slot || Index::FpDb(fp) != 0) return;
      if (loc::Type(l) == ValueType::kChunk || out->size() >= max) return;
      if (st.ExpiredFp(fp, now_ms)) return;
      out->emplace_back(fp, l);
    });
    // The next cursor past the slot's range (or the end): every entry of the slot was seen.
  } while (cursor != 0 && Index::FpSlot(cursor) == slot && out->size() < max);
}

Task KeysInSlot(Store& st, uint16_t slot, size_t max, int64_t now_ms,
                std::vector<std::string>* out) {
  out->clear();
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  SlotEntries(st, slot, max, now_ms, &entries);
  std::vector<Name> names(entries.size());
  for (size_t first = 0; first < entries.size(); first += kReadsInFlight) {
    Join join;
    const size_t last = std::min(entries.size(), first + kReadsInFlight);
    for (size_t i = first; i < last; ++i) {
      Task t = ReadKeyName(st, entries[i].first, entries[i].second, &names[i]);
      join.Add();
      if (t.Start(&Join::OnDone, &join)) join.Done();
    }
    co_await join;
  }
  out->reserve(names.size());
  for (Name& n : names) {
    if (n.ok) out->push_back(std::move(n.key));
  }
}

}  // namespace lavik
