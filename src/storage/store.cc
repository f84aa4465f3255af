#include "storage/store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/slot.h"
#include "notify/keyspace_events.h"
#include "runtime/shard_hop.h"
#include "storage/format.h"

namespace lavik {

std::string_view TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kStream:
      return "stream";
    case ValueType::kChunk:
      return "none";  // internal: no client key has this type
  }
  return "none";
}

Store::Store(uint32_t shard, DataFile* file, std::unique_ptr<Device> device, StoreOptions options)
    : shard_(shard),
      file_(file),
      device_(std::move(device)),
      sync_(options.sync),
      shard_count_(std::max<uint32_t>(1, options.shard_count)),
      log_(file, device_.get(), shard, options.sync, options.buffer_bytes, options.max_buffers),
      cache_(options.cache_bytes) {
  if (Index::slot_fingerprints()) slot_keys_ = std::make_unique<uint32_t[]>(kNumSlots);
}

Store::~Store() = default;

WriteResult Store::Failure(const std::string& what) const {
  return WriteResult{WriteResult::Status::kError, "ERR " + what};
}

uint64_t Store::RecordLen(uint64_t l) const {
  uint64_t len = loc::Len(l);
  if (len != 0) return len;
  auto it = large_lens_.find(l);
  if (it != large_lens_.end()) return it->second;
  if (!snap_large_lens_.empty()) {  // a large record that died while a snapshot was open
    auto dead = snap_large_lens_.find(l);
    if (dead != snap_large_lens_.end()) return dead->second;
  }
  return 0;
}

void Store::Account(uint64_t l, uint64_t len) {
  file_->live_bytes(file_->SegmentOf(loc::Offset(l))).fetch_add(static_cast<int64_t>(len));
}

void Store::Unaccount(uint64_t l) {
  uint64_t len = RecordLen(l);
  uint32_t seg = file_->SegmentOf(loc::Offset(l));
  file_->live_bytes(seg).fetch_sub(static_cast<int64_t>(len));
  if (!large_lens_.empty()) {
    auto it = large_lens_.find(l);
    if (it != large_lens_.end()) {
      // A large record owns its whole run: free it once no read is using it (and no snapshot
      // may read it: Tick holds the release while one is open).
      pending_release_.push_back({seg, RunLength(it->second), cut_taken_});
      if (!snaps_.empty()) snap_large_lens_[l] = it->second;
      large_lens_.erase(it);
    }
  }
}

void Store::SetTtl(uint64_t fp, int64_t expire_ms) {
  auto [it, inserted] = ttl_.try_emplace(fp, Ttl{expire_ms, 0});
  if (inserted) {
    it->second.slot = static_cast<uint32_t>(ttl_keys_.size());
    ttl_keys_.push_back(fp);
    ++db_expires_[static_cast<size_t>(Index::FpDb(fp))];
  } else {
    it->second.expire_ms = expire_ms;
  }
}

void Store::DropTtl(uint64_t fp) {
  auto it = ttl_.find(fp);
  if (it == ttl_.end()) return;
  uint32_t slot = it->second.slot;
  uint64_t last = ttl_keys_.back();
  ttl_keys_[slot] = last;
  ttl_[last].slot = slot;
  ttl_keys_.pop_back();
  ttl_.erase(it);
  --db_expires_[static_cast<size_t>(Index::FpDb(fp))];
}

int64_t Store::ExpireOf(uint64_t fp) const {
  auto it = ttl_.find(fp);
  return it == ttl_.end() ? 0 : it->second.expire_ms;
}

bool Store::ExpiredFp(uint64_t fp, int64_t now_ms) const {
  int64_t e = ExpireOf(fp);
  return e != 0 && e < now_ms;  // Redis: expired once now > when
}

void Store::CountEntry(uint64_t fp, uint64_t old, uint64_t now) {
  size_t& keys = db_keys_[static_cast<size_t>(Index::FpDb(fp))];
  const bool was_key = old != 0 && loc::Type(old) != ValueType::kChunk;
  const bool is_key = now != 0 && loc::Type(now) != ValueType::kChunk;
  if (old != 0) --(was_key ? keys : internal_records_);
  if (now != 0) ++(is_key ? keys : internal_records_);
  // Cluster layout: the slot is in the fingerprint, so the count needs no key (one branch when
  // cluster mode is off).
  if (slot_keys_ != nullptr && was_key != is_key && Index::FpDb(fp) == 0) {
    slot_keys_[Index::FpSlot(fp)] += is_key ? 1 : -1;
  }
}

void Store::Install(uint64_t fp, uint64_t l, int64_t expire_ms) {
  SnapNote(fp);
  uint64_t old = index_.Upsert(fp, l);
  CountEntry(fp, old, l);
  if (old != 0) Unaccount(old);
  if (expire_ms != 0) {
    SetTtl(fp, expire_ms);
  } else {
    DropTtl(fp);
  }
}

void Store::ExpireEntry(uint64_t fp, uint64_t l, const std::string_view* key) {
  if (tracking_observer_ != nullptr) tracking_observer_->KeyExpired(fp);
  SnapNote(fp);
  index_.Erase(fp, nullptr);
  CountEntry(fp, l, 0);
  // The record stays (the deletion marker below): InspectExpired reads it back for a root the
  // chunk registry does not know, or for the name of a key to report "expired".
  const bool inspect = roots_unknown_ && IsChunkableType(loc::Type(l)) && !chunks_.known(fp);
  bool name = false;
  if (KeyspaceEventsOn(kNotifyExpired)) [[unlikely]] {
    if (key != nullptr) {
      NotifyKeyspaceEvent(kNotifyExpired, "expired", *key);
    } else {
      name = true;
    }
  }
  bool propagate = false;
  if (expired_on_ != nullptr && expired_on_() && loc::Type(l) != ValueType::kChunk) [[unlikely]] {
    if (key != nullptr) {
      expired_emit_(*key);
    } else {
      propagate = true;
    }
  }
  if (inspect || name || propagate) expired_records_.push_back({fp, l, inspect, name, propagate});
  chunks_.KeyDying(fp);
  DropTtl(fp);
  cache_.Erase(fp);
  // The expired record stays on the device as the key's deletion marker; its live bytes stay
  // counted until the sweeper drops it (origin: past its own segment).
  uint64_t seg_seq = file_->seq(file_->SegmentOf(loc::Offset(l))).load();
  // A large record is alone in its run: only older segments can hold older versions.
  tombstones_[l] = IsLarge(l) ? seg_seq : seg_seq + 1;
  ++stats_.expired_keys;
  if (expire_hook_ != nullptr) expire_hook_(fp, loc::Type(l));
}

void Store::ReportCreate(uint64_t fp, std::string_view key, ValueType type) {
  if (type == ValueType::kChunk) return;
  uint64_t old;
  bool exists = index_.Get(fp, &old);
  // A write over a value past its TTL that no look-up removed yet: Redis expires it first.
  if (exists && loc::Ttl(old) && ExpiredFp(fp, NowMs())) {
    NotifyKeyspaceEvent(kNotifyExpired, "expired", key);
    exists = false;
  }
  if (!exists) NotifyKeyspaceEvent(kNotifyNew, "new", key);
}

void Store::StartInspectingExpired() {
  if (expired_records_.empty() || inspecting_) return;
  inspecting_ = true;
  Task t = InspectExpired();
  t.Start(nullptr, nullptr);
}

KeyInfo Store::Lookup(std::string_view key, int64_t now_ms) {
  uint64_t fp = Index::Fingerprint(key);
  if (snap_reading_ != nullptr) [[unlikely]] {
    return SnapLookup(fp, now_ms);
  }
  uint64_t l;
  if (!index_.Get(fp, &l)) return KeyInfo{};
  int64_t expire = 0;
  if (loc::Ttl(l)) {
    expire = ExpireOf(fp);
    if (expire != 0 && expire < now_ms) {
      ExpireEntry(fp, l, &key);
      return KeyInfo{};
    }
  }
  return KeyInfo{true, loc::Type(l), expire, l, fp};
}

KeyInfo Store::LookupRead(std::string_view key, int64_t now_ms) {
  KeyInfo info = Lookup(key, now_ms);
  if (snap_reading_ != nullptr) [[unlikely]] {
    return info;  // the snapshot's walk: not a client's read
  }
  ++(info.exists ? stats_.keyspace_hits : stats_.keyspace_misses);
  if (!info.exists) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key);
  return info;
}

TaskOf<ReadResult> Store::Read(std::string_view key, int64_t now_ms, bool count_stats) {
  KeyInfo info = count_stats ? LookupRead(key, now_ms) : Lookup(key, now_ms);
  if (!info.exists) co_return ReadResult{};
  ReadResult r = co_await ReadRecord(FingerprintOf(key, info), info.loc, key);
  r.info = info;
  co_return r;
}

TaskOf<ReadResult> Store::ReadValue(std::string_view key, const KeyInfo& info) {
  ReadResult r = co_await ReadRecord(FingerprintOf(key, info), info.loc, key);
  r.info = info;
  co_return r;
}

TaskOf<ReadResult> Store::ReadAt(uint64_t fp, uint64_t l) {
  ReadResult r = co_await ReadRecord(fp, l, std::string_view());
  if (r.ok()) r.info = KeyInfo{true, loc::Type(l), ExpireOf(fp), l};
  co_return r;
}

TaskOf<ReadResult> Store::ReadRecord(uint64_t fp, uint64_t l, std::string_view want_key) {
  ReadResult r;
  if (!want_key.empty()) {
    if (const std::string* v = CachedRecord(fp, l)) {
      r.status = ReadResult::Status::kOk;
      r.key = want_key;
      r.value = *v;
      co_return r;
    }
  }
  const uint64_t off = loc::Offset(l);
  const uint64_t len = RecordLen(l);
  const uint32_t seg = file_->SegmentOf(off);
  const uint64_t seg_seq = file_->seq(seg).load();
  RecordView v;
  RecordStatus st;
  if (const char* mem = log_.InMemory(off, len)) {
    ++stats_.buffer_reads;
    st = DecodeRecord(mem, len, seg_seq, &v);
  } else {
    // Only the sectors holding the record (DataFile::read_align: 512 B on most devices).
    const uint64_t align = file_->read_align();
    const uint64_t from = off & ~(align - 1);
    const uint64_t to = (off + len + align - 1) & ~(align - 1);
    r.buffer = device_->Buffer(to - from);
    file_->readers(seg).fetch_add(1);
    // Other coroutines of the worker run while this read waits: they must see the normal view
    // (Store::SnapshotReads).
    const Snapshot* const view = snap_reading_;
    snap_reading_ = nullptr;
    int res = co_await device_->Read(r.buffer.data(), to - from, from);
    snap_reading_ = view;
    file_->readers(seg).fetch_sub(1);
    ++stats_.device_reads;
    if (res < 0 || static_cast<uint64_t>(res) != to - from) {
      r.status = ReadResult::Status::kError;
      r.error = std::string("ERR I/O error reading the data file: ") +
                std::strerror(res < 0 ? -res : EIO);
      co_return r;
    }
    st = DecodeRecord(r.buffer.data() + (off - from), len, seg_seq, &v);
  }
  if (st != RecordStatus::kOk) {
    ++stats_.corrupt_records;
    r.status = ReadResult::Status::kError;
    r.error = "ERR data corruption: the record at offset " + std::to_string(off) +
              " of the data file failed verification (" + RecordStatusName(st) + ")";
    co_return r;
  }
  if (!want_key.empty() && v.key != want_key) {
    // Another key with the same 64-bit fingerprint (doc/index.md): never serve its value.
    ++stats_.corrupt_records;
    r.status = ReadResult::Status::kError;
    r.error = "ERR key fingerprint collision: the record found belongs to another key";
    co_return r;
  }
  r.status = ReadResult::Status::kOk;
  r.key = v.key;
  r.value = v.value;
  if (!want_key.empty() && snap_reading_ == nullptr) cache_.Put(fp, l, v.value);
  co_return r;
}

TaskOf<bool> Store::LearnRoot(std::string_view key, uint64_t fp) {
  uint64_t cur = 0;
  if (!index_.Get(fp, &cur) || !IsChunkableType(loc::Type(cur)) || chunks_.known(fp)) {
    co_return true;
  }
  ReadResult r = co_await ReadRecord(fp, cur, key);
  ChunkRoot root;
  uint64_t now = 0;
  // Still the record we read (no suspension from here on).
  if (r.ok() && IsChunkRoot(r.value) && ParseChunkRoot(r.value, &root) && index_.Get(fp, &now) &&
      now == cur) {
    chunks_.NoteRead(fp, root);
  }
  co_return true;
}

Task Store::InspectExpired() {
  while (!expired_records_.empty()) {
    std::vector<ExpiredRecord> batch;
    batch.swap(expired_records_);
    for (const ExpiredRecord& e : batch) {
      if (tombstones_.count(e.loc) == 0) continue;  // the marker (and its bytes) is gone already
      ReadResult r = co_await ReadRecord(e.fp, e.loc, std::string_view());
      if (!r.ok()) continue;
      ChunkRoot root;
      if (e.root && IsChunkRoot(r.value) && ParseChunkRoot(r.value, &root)) {
        chunks_.QueueUnreferenced(root);
      }
      if (e.name) NotifyKeyspaceEvent(kNotifyExpired, "expired", r.key);
      // Written again since it expired: that write went to the replicas after the expiry, and
      // a DEL now would undo it there.
      uint64_t now_at;
      if (e.propagate && !index_.Get(e.fp, &now_at)) expired_emit_(r.key);
    }
  }
  inspecting_ = false;
}

size_t Store::ActiveExpireCycle(int64_t now_ms, int64_t budget_us) {
  // Redis's sampling loop: 20 random keys with a TTL, again while more than a quarter expired.
  const int64_t deadline = MonotonicUs() + budget_us;
  size_t deleted = 0;
  while (!ttl_keys_.empty()) {
    size_t sampled = 0, expired = 0;
    for (; sampled < 20 && !ttl_keys_.empty(); ++sampled) {
      rnd_ = rnd_ * 6364136223846793005ULL + 1442695040888963407ULL;
      uint64_t fp = ttl_keys_[(rnd_ >> 11) % ttl_keys_.size()];
      if (ExpireOf(fp) >= now_ms) continue;
      uint64_t l;
      if (index_.Get(fp, &l)) {
        ExpireEntry(fp, l);
      } else {
        DropTtl(fp);
      }
      ++expired;
    }
    deleted += expired;
    if (expired * 4 <= sampled || MonotonicUs() >= deadline) break;
  }
  StartInspectingExpired();  // the names of the keys expired (when "expired" is reported)
  return deleted;
}

Task SweepDeadChunks(Store& st, size_t budget) {
  constexpr size_t kBatch = 64;  // tombstones per loop turn
  while (budget > 0) {
    std::vector<ChunkRegistry::Dead> dead = st.chunks().Take(std::min(budget, kBatch));
    if (dead.empty()) break;
    budget -= dead.size();
    for (size_t i = 0; i < dead.size(); ++i) {
      const ChunkRegistry::Dead& d = dead[i];
      // A collection that came back to life (a key refers to its id again) keeps its chunks.
      if (st.chunks().referenced(d.id)) continue;
      bool existed;
      WriteResult w = co_await st.Delete(ChunkKey(d.slot, d.id, d.number), 0, &existed);
      if (!w.ok()) {
        // Device full or failing: keep the rest queued for a later tick.
        for (size_t j = i; j < dead.size(); ++j) st.chunks().Requeue(dead[j]);
        co_return;
      }
      ++st.stats().lazyfreed_chunks;
    }
    co_await YieldToLoop();
  }
}

Task Store::SweepChunks() {
  // A slice per tick (~100 ms): ~5 000 chunks a second, so a 10M-member collection (~2 500
  // chunks) is gone in about half a second without one long stall.
  co_await SweepDeadChunks(*this, 512);
  chunk_sweep_running_ = false;
}

bool Store::RandomEntry(uint64_t rnd, int db, uint64_t* fp, uint64_t* loc) const {
  if (db_keys_[static_cast<size_t>(db)] == 0) return false;
  // Chunk records and other databases' keys are not candidates: draw again a few times, then
  // take the first key of the database after a random point (a database much smaller than the
  // shard's index).
  for (int i = 0; i < 64; ++i) {
    if (!index_.Random(rnd, fp, loc)) return false;
    if (loc::Type(*loc) != ValueType::kChunk && Index::FpDb(*fp) == db) return true;
    // A full mix (splitmix64's finaliser): every bit of the next draw changes, not only the
    // high ones an LCG step would (callers step their own generator with an LCG).
    rnd += 0x9E3779B97F4A7C15ULL;
    rnd = (rnd ^ (rnd >> 30)) * 0xBF58476D1CE4E5B9ULL;
    rnd = (rnd ^ (rnd >> 27)) * 0x94D049BB133111EBULL;
    rnd ^= rnd >> 31;
  }
  bool found = false;
  auto take = [&](uint64_t f, uint64_t l) {
    if (!found) {
      *fp = f;
      *loc = l;
      found = true;
    }
  };
  uint64_t cursor = rnd & ~uint64_t{0xFF};
  for (int pass = 0; pass < 2 && !found; ++pass) {
    do {
      cursor = ScanIndex(cursor, 256, db, take);
    } while (!found && cursor != 0);
  }
  return found;
}

uint64_t Store::ScanIndex(uint64_t cursor, size_t count, int db,
                          const std::function<void(uint64_t fp, uint64_t loc)>& fn) const {
  size_t matched = 0;
  // Chunk records are not keys (storage/chunk_format.h). A database much smaller than the
  // index would return mostly empty pages: look further (bounded), as Redis scans only the
  // database's own table.
  const size_t budget = count * 64;
  size_t visited = 0;
  do {
    cursor = index_.Scan(cursor, count, [&](uint64_t fp, uint64_t l) {
      ++visited;
      if (loc::Type(l) != ValueType::kChunk && Index::FpDb(fp) == db) {
        ++matched;
        fn(fp, l);
      }
    });
  } while (cursor != 0 && matched == 0 && visited < budget);
  return cursor;
}

void Store::Tick(int64_t now_ms) {
  log_.Tick(now_ms);
  StartInspectingExpired();
  if (chunks_.pending() > 0 && !chunk_sweep_running_) {
    chunk_sweep_running_ = true;
    Task t = SweepChunks();
    t.Start(nullptr, nullptr);
  }
  if (!pending_release_.empty() && snaps_.empty()) {
    std::vector<DeadRun> runs;
    runs.swap(pending_release_);
    for (const DeadRun& run : runs) {
      if (!CutFreeAllowed(run.cut)) {
        pending_release_.push_back(run);  // a rollback to a cut may still read it
        continue;
      }
      Task t = ReleaseLarge(run.first, run.count);
      t.Start(nullptr, nullptr);
    }
  }
}

void Store::PrefetchFlush() {
  const size_t n = prefetch_count_;
  prefetch_count_ = 0;
  cache_.PrefetchBatch(prefetch_fps_.data(), n);
}

void Store::CutDurable(uint64_t number) {
  cut_durable_ = std::max(cut_durable_, number);
  WakeCutWaiters();
}

void Store::CutsVoided() {
  cut_void_ = cut_taken_;
  WakeCutWaiters();
}

void Store::WakeCutWaiters() {
  std::vector<std::coroutine_handle<>> ready;
  ready.swap(cut_waiters_);
  for (auto h : ready) h.resume();
}

}  // namespace lavik
