// Store: one shard's keys — the compact DRAM index, the value cache, the TTL table and the log on
// the data file — behind the typed operations command handlers call. Handlers never see RESP
// here.
//
// Completion model (doc/threading.md): operations that may need the device are coroutines —
// `ReadResult r = co_await store.Read(key, now);` — and resume on this worker when the io_uring
// read completes; the worker serves other connections meanwhile. Index-only operations (Lookup,
// counts, expiry) are synchronous. A write appends its record to the shard's write buffer and
// updates the index at once (no suspension between the two), so writes to one key are ordered;
// under appendfsync always it then waits until the record is durable.
//
// Values read are views: valid until the next call on this Store (copy them to keep them).
//
// Expiry: a key whose TTL passed is removed from the index on access (Lookup) and by
// ActiveExpireCycle. No record is written for it: the record itself carries expire_ms, so the
// expired record stays on the device as the key's deletion marker (kept like a tombstone) until
// nothing older can resurface.
//
// Keyspace notifications (notify/keyspace_events.h): the Store reports what only it sees — a key
// created ("new"), a key expired ("expired", on access or by the active cycle), a read that found
// no key ("keymiss") — each behind one branch when its class is off. The active cycle knows an
// expired key only by fingerprint: when "expired" is on, its record (the deletion marker) is read
// back afterwards for the name, so those events come a little after the expiry itself.
//
// Thread safety: none; a Store belongs to one worker.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/db_key.h"
#include "base/slot.h"
#include "runtime/mailbox.h"
#include "runtime/task.h"
#include "runtime/task_of.h"
#include "storage/chunk_format.h"
#include "storage/data_file.h"
#include "storage/device.h"
#include "storage/index.h"
#include "storage/shard_log.h"
#include "storage/value_cache.h"
#include "storage/value_type.h"

namespace lavik {

struct StoreOptions {
  SyncPolicy sync = SyncPolicy::kEverysec;
  size_t cache_bytes = 64u << 20;
  size_t buffer_bytes = 2u << 20;  // one write buffer; large records are those above it
  size_t max_buffers = 8;
  uint32_t shard_count = 1;  // to tell this shard's records from others' (slot ranges)
};

struct StoreStats {
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t expired_keys = 0;
  uint64_t dirty = 0;
  uint64_t corrupt_records = 0;
  uint64_t device_reads = 0;
  uint64_t buffer_reads = 0;
  uint64_t defrag_segments = 0;
  uint64_t defrag_records = 0;
  uint64_t tombstones_dropped = 0;
  uint64_t lazyfreed_chunks = 0;  // chunks of dead collections the background sweep deleted
};

struct KeyInfo {
  bool exists = false;
  ValueType type = ValueType::kString;
  int64_t expire_ms = 0;  // 0 = no TTL
  uint64_t loc = 0;       // the record's location word: changes with every write of the key
  uint64_t fp = 0;        // the key's fingerprint, when Store::Lookup found it (0: not known)
};

struct ReadResult {
  enum class Status { kOk, kNotFound, kError };
  Status status = Status::kNotFound;
  KeyInfo info;
  std::string_view key;    // the key as stored in the record (for scans)
  std::string_view value;  // valid until the next call on the Store
  std::string error;       // kError: the reply text, e.g. "ERR data corruption ..."
  AlignedBuffer buffer;    // owns the bytes when they came from the device
  bool ok() const { return status == Status::kOk; }
};

struct WriteResult {
  enum class Status { kOk, kNoSpace, kError };
  Status status = Status::kOk;
  std::string error;  // the reply text (without '-')
  bool ok() const { return status == Status::kOk; }
};

class Store;

// Told about the keys writes change, for WATCH (transaction/transaction.h) and client-side
// caching (tracking/tracking.h). Relocations by defrag
// and expiry are not changes (an expired watched key is caught by its TTL at EXEC). Runs on the
// store's worker, synchronously inside the write.
class KeyObserver {
 public:
  virtual void KeyChanged(std::string_view key) = 0;
  // FLUSHALL (db -1) or FLUSHDB of physical database `db` is about to drop keys of `store`
  // (its keys can still be looked up).
  virtual void BeforeFlush(Store& store, int db) = 0;
  // The key with this fingerprint expired (lazily or actively); only the tracking observer
  // cares (a watched key's expiry is caught by its TTL at EXEC).
  virtual void KeyExpired(uint64_t /*fp*/) {}

 protected:
  ~KeyObserver() = default;
};

class Store {
 public:
  Store(uint32_t shard, DataFile* file, std::unique_ptr<Device> device, StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- Index only ---
  // The live key's type, TTL and location (an expired key is removed first).
  KeyInfo Lookup(std::string_view key, int64_t now_ms);
  // As Lookup, counting a keyspace hit or miss (read commands, as Redis does).
  KeyInfo LookupRead(std::string_view key, int64_t now_ms);
  // Client-visible keys (chunk records of chunked collections are not keys).
  size_t size() const { return index_.size() - internal_records_; }
  // Every index entry, keys and internal records (checkpoints).
  size_t records() const { return index_.size(); }
  size_t internal_records() const { return internal_records_; }
  size_t expires() const { return ttl_.size(); }
  // The same per physical database (base/db_key.h; the index knows each entry's database).
  size_t db_size(int db) const { return db_keys_[static_cast<size_t>(db)]; }
  size_t db_expires(int db) const { return db_expires_[static_cast<size_t>(db)]; }
  // Cluster layout only (Index::SetSlotFingerprints before the store was built): database-0
  // keys of this shard in a Redis Cluster hash slot, kept by every index change (64 KiB per
  // shard; no per-key cost). 0 when the layout is plain.
  size_t slot_size(uint16_t slot) const {
    return slot_keys_ != nullptr && slot < kNumSlots ? slot_keys_[slot] : 0;
  }
  // The index's entries in fingerprint order from `cursor` (Index::Scan), keys and internal
  // records alike (commands/slot_keys.h filters them).
  uint64_t ScanEntries(uint64_t cursor, size_t count,
                       const std::function<void(uint64_t fp, uint64_t loc)>& fn) const {
    return index_.Scan(cursor, count, fn);
  }
  // True if some physical database other than `db` has keys here.
  bool OtherDbsHaveKeys(int db) const {
    for (int d = 0; d < kMaxDatabases; ++d) {
      if (d != db && db_keys_[static_cast<size_t>(d)] != 0) return true;
    }
    return false;
  }

  // Hints for the commands about to run on a batch of keys (net/connection.h): what looking them
  // up and reading or replacing their cached values touches — the index bucket, the value
  // cache's slot, its entry and the value — is loaded into the CPU's cache one level at a time
  // for every key of the batch, so the cache misses overlap instead of coming one after another.
  // PrefetchKey starts a key (its first level); PrefetchFlush does the rest for the keys started
  // since the last flush. Changes no data.
  static constexpr size_t kPrefetchMax = ValueCache::kPrefetchBatchMax;
  void PrefetchKey(std::string_view key) {
    const uint64_t fp = Index::Fingerprint(key);
    index_.Prefetch(fp);
    cache_.PrefetchSlot(fp);
    if (prefetch_count_ < prefetch_fps_.size()) prefetch_fps_[prefetch_count_++] = fp;
  }
  void PrefetchFlush();

  // --- Reads ---
  // The key's value (count_stats: count a hit or miss). kNotFound if missing or expired.
  TaskOf<ReadResult> Read(std::string_view key, int64_t now_ms, bool count_stats);
  // The value of a key just looked up (no suspension between the Lookup and this call).
  TaskOf<ReadResult> ReadValue(std::string_view key, const KeyInfo& info);
  // The value ReadValue would give at once from the value cache, or null if it is not cached
  // (then ReadValue reads it). Valid until the store next changes. `info` is the key's, as
  // Lookup gave it (its fingerprint is used).
  const std::string* CachedValue(std::string_view key, const KeyInfo& info) {
    return CachedRecord(FingerprintOf(key, info), info.loc);
  }
  // The record at a location word (for SCAN, KEYS, RANDOMKEY: the key comes with it).
  TaskOf<ReadResult> ReadAt(uint64_t fp, uint64_t loc);

  // --- Writes (the key's previous value, TTL and type are replaced) ---
  TaskOf<WriteResult> Write(std::string_view key, ValueType type, std::string_view value,
                            int64_t expire_ms);
  // Write without suspending, when nothing would make it wait (no large record in flight, room
  // in the log's buffer, appendfsync not "always", roots known, not a large record): true once
  // written, as a completed Write. False: nothing was done, and Write must be awaited instead.
  bool TryWriteNow(std::string_view key, ValueType type, std::string_view value, int64_t expire_ms);
  // Writes only if the key still has location `expected` (0 = must not exist): read-modify-
  // write commands retry when another write came in while they read. *applied says which.
  TaskOf<WriteResult> WriteIf(std::string_view key, uint64_t expected, ValueType type,
                              std::string_view value, int64_t expire_ms, bool* applied);
  // Deletes the key (a tombstone record). *existed says whether it was there.
  TaskOf<WriteResult> Delete(std::string_view key, int64_t now_ms, bool* existed);
  // Deletes the key only if it is still at location `expected`; *applied says whether it did.
  TaskOf<WriteResult> DeleteIf(std::string_view key, uint64_t expected, bool* applied);
  // Removes every key of this shard from memory (recovery fallback).
  void Clear();
  // FLUSHALL in three steps: BeginFlush (once) takes the flush seq; PrepareFlush (every shard)
  // syncs the log, drops the keys and closes the open segment, so later writes land in newer
  // segments; CommitFlush (once) writes the superblock's flush_seq, which makes every older
  // segment dead for recovery (blocking write: FLUSHALL is rare); ReleaseFlushed (every shard)
  // frees those segments.
  uint64_t BeginFlush() { return file_->NextSegmentSeq(); }
  Task PrepareFlush(bool* ok);
  bool CommitFlush(uint64_t flush_seq, std::string* error);
  void ReleaseFlushed(uint64_t flush_seq);
  // FLUSHDB of one physical database while others hold keys: syncs the log, drops that
  // database's keys and closes the open segment; the caller then writes the superblock's flush
  // seq for the database (DataFile::SetDbFlushSeq). The dropped records' space goes to defrag.
  Task FlushDb(int db, bool* ok);

  // --- Background work, driven by the worker ---
  size_t ActiveExpireCycle(int64_t now_ms, int64_t budget_us);
  // Timer tick (~100 ms): flushes the log tail, syncs under everysec, frees dead large runs.
  void Tick(int64_t now_ms);
  // After every loop turn: queued buffers are written at once (a writer may wait for one), and
  // the open buffer's tail too when a client waits for durability.
  void EndOfTurn() { log_.Kick(log_.has_waiters() || sync_ == SyncPolicy::kAlways); }
  Task FlushAndSync(bool* ok) { return log_.FlushAndSync(ok); }
  // CONFIG SET appendfsync, on the store's worker: the next write follows the new policy.
  void set_sync_policy(SyncPolicy policy) {
    sync_ = policy;
    log_.set_policy(policy);
  }
  // One defrag pass if free segments run low (or `force`): relocates the sparsest sealed
  // segments' live records and frees them, yielding to the loop between slices.
  Task Defrag(bool force);
  bool defrag_running() const { return defrag_running_; }
  void set_defrag_paused(bool paused) { defrag_paused_ = paused; }
  // Tomb raider: forgets tombstones nothing older can be shadowed by. Returns how many.
  size_t SweepTombstones();

  // --- Replication cuts (doc/storage-format.md "Replication cut") ---
  // A replica's data file names a consistency point in its superblock, and a restart after a
  // crash drops every record written after it. So no record a cut may need is reclaimed until a
  // later cut is durable: defrag and dead large runs wait, from capture k on, for a cut newer
  // than k (or for the cuts to be voided). Captures are numbered from 1.
  // Where this shard's log stands (the caller holds every command of the stream before it done
  // and none after it started); *number: this capture's number.
  CutPosition CaptureCut(uint64_t* number) {
    *number = ++cut_taken_;
    return log_.Position();
  }
  // Captures up to `number` are in the superblock's cut, on stable storage.
  void CutDurable(uint64_t number);
  // No cut names any capture so far (the superblock's cut was cleared).
  void CutsVoided();
  // Start-up after a rollback to the superblock's cut: the data are that cut (capture 1,
  // durable), so nothing it names is reclaimed before a newer cut is.
  void StartAtCut() { cut_taken_ = cut_durable_ = 1; }
  uint64_t cut_durable() const { return cut_durable_; }

  // --- Iteration (SCAN, KEYS, RANDOMKEY) ---
  // Keys of physical database `db` in fingerprint order from cursor; returns the next cursor
  // (0 = done). May visit more than `count` index entries to find a key of a small database.
  uint64_t ScanIndex(uint64_t cursor, size_t count, int db,
                     const std::function<void(uint64_t fp, uint64_t loc)>& fn) const;
  // A random key of physical database `db`; false if it has none here.
  bool RandomEntry(uint64_t rnd, int db, uint64_t* fp, uint64_t* loc) const;
  void ForEachEntry(const std::function<void(uint64_t fp, uint64_t loc)>& fn) const {
    index_.ForEach(fn);
  }
  bool ExpiredFp(uint64_t fp, int64_t now_ms) const;

  // --- Point-in-time snapshots (doc/storage-format.md "Snapshots": the RDB walk) ---
  // BeginSnapshot freezes the view `id` of this shard: from now on, the first change of an index
  // entry (a write, a deletion, an expiry, a relocation) that the snapshot may still read saves
  // the entry as it was (location and TTL; the record stays in the log: nothing that can hold a
  // record the view names is reclaimed while a snapshot is open — defrag frees no segment, large
  // runs wait). The view reads those saved entries instead of the index's. No value is copied.
  // While no snapshot is open the write path pays one branch (`snaps_` empty).
  void BeginSnapshot(uint64_t id);
  void EndSnapshot(uint64_t id);
  bool snapshot_active() const { return !snaps_.empty(); }
  // The key and TTL counts of physical database `db` when the snapshot began.
  size_t SnapshotDbSize(uint64_t id, int db) const;
  size_t SnapshotDbExpires(uint64_t id, int db) const;
  // As ScanIndex, over the view: the keys of `db` the snapshot holds in the cursor's range,
  // with their location at the start (keys created since are skipped, keys deleted or replaced
  // since are given with their old location). Marks everything of `db` below `cursor` as walked
  // (the view no longer saves changes to those keys). Call SnapshotDbDone after the last slice.
  uint64_t SnapshotScan(uint64_t id, uint64_t cursor, size_t count, int db,
                        const std::function<void(uint64_t fp, uint64_t loc)>& fn);
  void SnapshotDbDone(uint64_t id, int db);
  // The segment pass of a walk (doc/rdb.md "Walk speed"): the log segments this shard had when
  // the snapshot began, read whole and in file order instead of one record at a time. A caller
  // reads segment `i` (< SnapshotSegments) into *buf: *size bytes of records from the one after
  // its header block, which RecordScanner decodes with *seq; `*base` is their file offset. false:
  // the segment cannot be read that way any more (freed and reused, or a read failed) and its
  // keys are left to SnapshotScan. After each record it has judged (framed, or found not to be
  // the snapshot's), the caller marks it with SnapshotScanned: SnapshotScan then skips every
  // entry whose record lies in a marked range.
  size_t SnapshotSegments(uint64_t id) const;
  Task ReadSnapshotSegment(uint64_t id, size_t i, AlignedBuffer* buf, uint32_t* seg, uint64_t* base,
                           uint64_t* size, uint64_t* seq, bool* ok);
  void SnapshotScanned(uint64_t id, uint32_t seg, uint64_t upto);
  // Entries the snapshots saved so far (INFO, tests).
  size_t snapshot_saved() const;
  // While one lives, reads on this Store (Lookup, LookupRead, Read, ReadValue, ReadAt) see view
  // `id`: index entries as they were when it began, no expiry side effects, no statistics, no
  // cache fills. Only the walk's own call chain sees it: a read that waits for the device puts
  // the normal view back while it waits (other coroutines of the worker run then) and restores
  // the snapshot view when it resumes. The reader must not suspend otherwise while it lives.
  class SnapshotReads {
   public:
    SnapshotReads(Store& st, uint64_t id);
    ~SnapshotReads() { st_.snap_reading_ = nullptr; }
    SnapshotReads(const SnapshotReads&) = delete;
    SnapshotReads& operator=(const SnapshotReads&) = delete;

   private:
    Store& st_;
  };
  bool snapshot_reading() const { return snap_reading_ != nullptr; }

  // --- Start-up and checkpoint ---
  // Recovery: applies a record found in the log (log order). `loc` is its location word.
  // `value` (when known) lets the chunk registry learn the roots of chunked collections.
  void RecoverRecord(uint64_t fp, uint64_t loc, uint32_t len, bool tombstone, int64_t expire_ms,
                     uint64_t origin, int64_t now_ms, bool large, std::string_view value = {},
                     std::string_view key = {});
  // After a full log scan: chunk records no live root names by collection id (a crash before
  // their root landed, or a root whose deletion marker is long gone) go to the sweep.
  // Returns how many.
  size_t FinishRecovery();
  // After recovery or a checkpoint load: the per-shard record seq continues from `seq`.
  void set_seq(uint64_t seq) { seq_ = std::max(seq_, seq); }
  uint64_t seq() const { return seq_; }
  const std::unordered_map<uint64_t, uint64_t>& tombstones() const { return tombstones_; }
  int64_t ExpireOf(uint64_t fp) const;
  void LoadEntry(uint64_t fp, uint64_t loc, uint64_t len, int64_t expire_ms, bool large);
  void LoadTombstone(uint64_t loc, uint64_t origin, uint32_t len, bool large);
  bool IsLarge(uint64_t loc) const { return large_lens_.count(loc) != 0; }

  // --cache-mb / CONFIG SET cache-mb: this shard's share of the DRAM value cache.
  void SetCacheMb(int64_t total_mb, int shards) {
    cache_mb_applied_ = total_mb;
    cache_.SetCapacity(static_cast<size_t>(total_mb) * (size_t{1} << 20) /
                       static_cast<size_t>(shards));
  }
  int64_t cache_mb_applied() const { return cache_mb_applied_; }
  DataFile& file() { return *file_; }

  StoreStats& stats() { return stats_; }
  const StoreStats& stats() const { return stats_; }
  const ValueCache& cache() const { return cache_; }
  ValueCache& cache() { return cache_; }
  const Device& device() const { return *device_; }
  Device& device() { return *device_; }
  const ShardLog& log() const { return log_; }
  ShardLog& log() { return log_; }
  size_t tombstone_count() const { return tombstones_.size(); }
  uint64_t LargeLen(uint64_t loc) const { return RecordLen(loc); }
  size_t index_memory() const { return index_.memory_bytes(); }
  size_t ttl_memory() const { return ttl_.size() * 48 + ttl_keys_.capacity() * 8; }
  void NoteWrite() { ++stats_.dirty; }
  // Chunked collections: the roots this shard knows and the dead chunks its sweep deletes.
  ChunkRegistry& chunks() { return chunks_; }
  const ChunkRegistry& chunks() const { return chunks_; }
  // WATCH: set only while some client watches a key of this shard, so a write pays one branch.
  void set_key_observer(KeyObserver* o) { key_observer_ = o; }
  // Told, synchronously inside the write, of every value a write leaves at a key (not
  // relocations) and of every deletion of a key (`deleted`; `type` then means nothing; not
  // expiry): blocked clients are served from it (commands/list_wait.h), and XREADGROUP readers
  // of a stream that goes fail (blocking/stream_blocking.cc).
  using WriteHook = void (*)(void* arg, std::string_view key, ValueType type, bool deleted);
  void set_write_hook(WriteHook hook, void* arg) {
    write_hook_ = hook;
    write_hook_arg_ = arg;
  }
  // Told of every key that expires (lazily or actively), by fingerprint: the store expires
  // without reading the key's name. Runs on the shard's worker, inside the expiring call.
  using ExpireHook = void (*)(uint64_t fp, ValueType type);
  void set_expire_hook(ExpireHook hook) { expire_hook_ = hook; }
  // Replication (set once at start-up, before the workers run): while `on()` says so, every
  // key that expires here is given by name to `emit` (a DEL for the replicas, as Redis sends),
  // on the shard's worker. A key expired by fingerprint (the active cycle) is named once its
  // record is read back (InspectExpired), and only if it was not written again meanwhile.
  using ExpiredKeyOn = bool (*)();
  using ExpiredKeyEmit = void (*)(std::string_view stored_key);
  static void SetExpiredKeySink(ExpiredKeyOn on, ExpiredKeyEmit emit) {
    expired_on_ = on;
    expired_emit_ = emit;
  }
  KeyObserver* key_observer() const { return key_observer_; }
  // Client-side caching (tracking/tracking.h): a second observer, set only while the worker
  // tracks keys, prefixes or clients.
  void set_tracking_observer(KeyObserver* o) { tracking_observer_ = o; }

 private:
  struct Ttl {
    int64_t expire_ms;
    uint32_t slot;  // index in ttl_keys_
  };
  // A snapshot's saved entries and walk position (BeginSnapshot).
  struct Snapshot {
    struct Saved {
      uint64_t loc;  // 0: the key did not exist when the snapshot began
      int64_t expire_ms;
    };
    uint64_t id = 0;
    std::map<uint64_t, Saved> saved;  // fingerprint → entry at the start (ordered: SnapshotScan)
    std::array<size_t, kMaxDatabases> db_keys{};
    std::array<size_t, kMaxDatabases> db_expires{};
    struct Segment {
      uint32_t seg;
      uint64_t seq;
      uint64_t end;  // the open segment: where the log's next record went; 0: a sealed one
    };
    std::vector<Segment> segments;  // the log's segments at the start, in file order
    // Segment pass: per segment, the file offset below which every record was judged.
    std::unordered_map<uint32_t, uint64_t> scanned;
    bool InScanned(uint32_t seg, uint64_t offset) const {
      if (scanned.empty()) return false;
      auto it = scanned.find(seg);
      return it != scanned.end() && offset < it->second;
    }
    uint32_t done_dbs = 0;  // physical databases walked completely (bit per database)
    int walk_db = -1;       // the database being walked, and the cursor below which it was
    uint64_t walk_cursor = 0;
    // Whether the walk has read every key at this fingerprint already (no need to save it).
    bool Walked(uint64_t fp) const {
      const int db = Index::FpDb(fp);
      return (done_dbs >> db & 1u) != 0 || (db == walk_db && fp < walk_cursor);
    }
  };
  // Before an index entry of `fp` changes: every open snapshot that may still read it saves it.
  void SnapNote(uint64_t fp) {
    if (!snaps_.empty()) [[unlikely]] {
      SnapSave(fp);
    }
  }
  void SnapSave(uint64_t fp);
  Snapshot* FindSnapshot(uint64_t id) const;
  // The snapshot view's entry of `fp` (reads under SnapshotReads).
  KeyInfo SnapLookup(uint64_t fp, int64_t now_ms) const;

  // The one append path (values, tombstones, relocations). `expect` is checked right before
  // the record is placed, with no suspension in between: the key must still be at that location
  // (~0: anything; 0: must not exist). *applied says whether the record was written, and
  // *loc_out where (either may be null: not wanted).
  // kMarkerCopy: defrag moving a deletion marker; the index is left alone.
  enum class Effect { kInstall, kTombstone, kMarkerCopy };
  TaskOf<WriteResult> Append(std::string_view key, uint64_t fp, ValueType type,
                             std::string_view value, int64_t expire_ms, uint8_t flags,
                             uint64_t expect, uint64_t* loc_out, bool* applied,
                             Effect effect = Effect::kInstall);
  uint64_t Place(std::string_view key, uint64_t fp, ValueType type, std::string_view value,
                 int64_t expire_ms, uint8_t flags, uint64_t expect, const ShardLog::Slot& slot,
                 size_t len, uint64_t* loc_out, Effect effect);
  // Write after a start from a checkpoint that left roots unknown: learns the key's first.
  TaskOf<WriteResult> WriteLearningRoot(std::string_view key, ValueType type,
                                        std::string_view value, int64_t expire_ms);
  TaskOf<WriteResult> AppendLarge(std::string_view key, uint64_t fp, ValueType type,
                                  std::string_view value, int64_t expire_ms, uint64_t* loc_out);
  // Resumes the writes waiting for the large record of `fp` (on a later loop turn).
  void EndLargeFlight(uint64_t fp);
  // Suspends until no large record is on its way to the device (FLUSHALL / FLUSHDB).
  Task LargeWritesLanded();
  void Install(uint64_t fp, uint64_t loc, int64_t expire_ms);
  // Keeps internal_records_ and db_keys_ right when the index entry of `fp` goes from old_loc
  // to new_loc (0: absent).
  void CountEntry(uint64_t fp, uint64_t old_loc, uint64_t new_loc);
  Task SweepChunks();
  // After a start from a checkpoint (no values seen), the registry may not know a root yet:
  // these learn it before a write replaces the key, or from the expired record afterwards.
  TaskOf<bool> LearnRoot(std::string_view key, uint64_t fp);
  // Reads back the queued expired records (expired_records_): unknown roots, and the names of
  // keys expired by fingerprint for "expired". StartInspectingExpired runs it if idle.
  Task InspectExpired();
  void Unaccount(uint64_t loc);
  void Account(uint64_t loc, uint64_t len);
  uint64_t RecordLen(uint64_t loc) const;
  // `key`: the key, when the caller knows it (a look-up); else its record is read for the
  // "expired" event (if that is on).
  void ExpireEntry(uint64_t fp, uint64_t loc, const std::string_view* key = nullptr);
  // Before a write installs `key`: the events of a key (re)created ("expired" for an old value
  // past its TTL, "new").
  void ReportCreate(uint64_t fp, std::string_view key, ValueType type);
  void StartInspectingExpired();
  void SetTtl(uint64_t fp, int64_t expire_ms);
  void DropTtl(uint64_t fp);
  // The key's fingerprint: the one Lookup put in `info`, else computed.
  static uint64_t FingerprintOf(std::string_view key, const KeyInfo& info) {
    return info.fp != 0 ? info.fp : Index::Fingerprint(key);
  }
  // The cached value of the record at `loc`, or null (a snapshot's walk peeks, so the current
  // version stays the cached one).
  const std::string* CachedRecord(uint64_t fp, uint64_t loc) {
    return snap_reading_ == nullptr ? cache_.Get(fp, loc) : cache_.Peek(fp, loc);
  }
  TaskOf<ReadResult> ReadRecord(uint64_t fp, uint64_t loc, std::string_view want_key);
  WriteResult Failure(const std::string& what) const;
  Task DefragSegment(uint32_t seg, bool* ok);
  Task ReleaseLarge(uint32_t first, uint32_t count);
  uint32_t RunLength(uint64_t record_len) const;
  void NoteKeyChanged(std::string_view key) {
    if (key_observer_ != nullptr) key_observer_->KeyChanged(key);
    if (tracking_observer_ != nullptr) tracking_observer_->KeyChanged(key);
  }

  const uint32_t shard_;
  DataFile* file_;
  std::unique_ptr<Device> device_;
  SyncPolicy sync_;
  const uint32_t shard_count_;
  ShardLog log_;
  Index index_;
  ValueCache cache_;
  std::unordered_map<uint64_t, Ttl> ttl_;
  std::vector<uint64_t> ttl_keys_;
  // Deletion markers still needed (tombstone records and expired records): location → origin
  // segment seq. Defrag keeps relocating them until SweepTombstones drops them.
  std::unordered_map<uint64_t, uint64_t> tombstones_;
  std::unordered_map<uint64_t, uint32_t> large_lens_;  // loc → length, for large records
  // Keys with a large record on its way to the device (AppendLarge): fingerprint → the writes
  // to the same key waiting for it to be in place (Append), resumed on a later loop turn, so a
  // write issued after the large one never lands before it (doc/storage-format.md).
  std::unordered_map<uint64_t, std::vector<MailboxItem*>> large_in_flight_;
  // Dead large runs to free: the first segment, the segments in the run, and the capture
  // count when it died (freed once CutFreeAllowed says so).
  struct DeadRun {
    uint32_t first;
    uint32_t count;
    uint64_t cut;
  };
  std::vector<DeadRun> pending_release_;
  std::array<uint64_t, kPrefetchMax> prefetch_fps_{};  // PrefetchKey's since the last flush
  size_t prefetch_count_ = 0;
  // Replication cuts: captures taken, the newest durable one, captures voided up to.
  uint64_t cut_taken_ = 0;
  uint64_t cut_durable_ = 0;
  uint64_t cut_void_ = 0;
  std::vector<std::coroutine_handle<>> cut_waiters_;  // defrag waiting for CutFreeAllowed
  // Space that held records at capture `k` may be reused: no cut names a capture <= k, or a
  // newer one is durable.
  bool CutFreeAllowed(uint64_t k) const { return k <= cut_void_ || cut_durable_ > k; }
  // Resumes at the next CutDurable or CutsVoided (callers check CutFreeAllowed again).
  struct CutAwaiter {
    Store* st;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h) { st->cut_waiters_.push_back(h); }
    void await_resume() const {}
  };
  void WakeCutWaiters();
  std::vector<std::pair<uint32_t, uint32_t>> flushed_runs_;  // large runs dropped by FLUSHALL
  uint64_t seq_ = 0;
  uint64_t rnd_ = 0x9E3779B97F4A7C15ULL;
  StoreStats stats_;
  bool defrag_running_ = false;
  uint32_t defrag_victim_ = DataFile::kNoSegment;
  bool defrag_paused_ = false;
  int64_t cache_mb_applied_ = -1;
  KeyObserver* key_observer_ = nullptr;
  KeyObserver* tracking_observer_ = nullptr;
  WriteHook write_hook_ = nullptr;
  void* write_hook_arg_ = nullptr;
  ExpireHook expire_hook_ = nullptr;
  static inline ExpiredKeyOn expired_on_ = nullptr;
  static inline ExpiredKeyEmit expired_emit_ = nullptr;
  size_t internal_records_ = 0;                     // index entries of type kChunk
  std::array<size_t, kMaxDatabases> db_keys_{};     // client keys per physical database
  std::array<size_t, kMaxDatabases> db_expires_{};  // TTL entries per physical database
  std::unique_ptr<uint32_t[]> slot_keys_;           // cluster layout: keys per slot (db 0)
  std::vector<std::unique_ptr<Snapshot>> snaps_;    // open snapshots (usually none)
  const Snapshot* snap_reading_ = nullptr;          // SnapshotReads' view
  // Lengths of large records that died while a snapshot was open (it may still read them).
  std::unordered_map<uint64_t, uint32_t> snap_large_lens_;
  ChunkRegistry chunks_;
  bool chunk_sweep_running_ = false;
  bool roots_unknown_ = false;  // collections were loaded from a checkpoint
  // Expired records to read back (InspectExpired): a root whose chunks the registry does not
  // know, and/or a key expired by fingerprint whose name "expired" must report.
  struct ExpiredRecord {
    uint64_t fp;
    uint64_t loc;
    bool root;
    bool name;
    bool propagate;  // the name goes to the expired-key sink (SetExpiredKeySink)
  };
  std::vector<ExpiredRecord> expired_records_;
  bool inspecting_ = false;
  // During a log scan: the chunk records seen (fingerprint → which chunk), for FinishRecovery.
  std::unordered_map<uint64_t, ChunkRegistry::Dead> recovered_chunks_;
};

// Deletes up to `budget` queued dead chunks of `st` (tombstones), yielding to the loop between
// small batches so a 10M-member DEL never stalls the worker. Started by Store::Tick.
Task SweepDeadChunks(Store& st, size_t budget);

}  // namespace lavik
