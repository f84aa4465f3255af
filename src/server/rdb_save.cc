#include "server/rdb_save.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "commands/key_copy.h"
#include "commands/multi_shard.h"
#include "commands/propagate.h"
#include "commands/rdb_limits.h"
#include "commands/shards.h"
#include "rdb/file_format.h"
#include "replication/rdb_file.h"
#include "replication/sync_stream.h"
#include "runtime/join.h"
#include "runtime/shard_hop.h"
#include "scripting/function_registry.h"
#include "storage/format.h"
#include "storage/snapshot_gate.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr size_t kSliceEntries = 512;          // index entries per slice of the walk
constexpr size_t kWalkReads = 64;              // a slice's keys read at once (device queue depth)
constexpr uint64_t kWalkBytes = 4 << 20;       // and their records' bytes, about
constexpr size_t kWriteBytes = 1 << 20;        // output is written in pieces of about this size
constexpr uint64_t kWritebackBytes = 8 << 20;  // start the kernel's write-back this often
// The segment pass stops once the snapshots hold this many saved entries (~64 bytes each): the
// index walk, which stops saving an entry once it passed its key, does the rest.
constexpr size_t kSegmentPassMaxSaved = 512 * 1024;

// A file written sequentially; write-back is started every kWritebackBytes (sync_file_range), so
// the final fsync has little left to do and the page cache does not fill with dirty pages.
class OutFile {
 public:
  ~OutFile() { Close(); }
  bool Open(const std::string& path) {
    path_ = path;
    fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) error_ = std::strerror(errno);
    return fd_ >= 0;
  }
  bool is_open() const { return fd_ >= 0; }
  bool Write(std::string_view b) {
    while (!b.empty()) {
      const ssize_t n = write(fd_, b.data(), b.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? std::strerror(errno) : "short write";
        return false;
      }
      b.remove_prefix(static_cast<size_t>(n));
      written_ += static_cast<uint64_t>(n);
    }
    if (written_ - started_ >= kWritebackBytes) {
      sync_file_range(fd_, static_cast<off64_t>(started_),
                      static_cast<off64_t>(written_ - started_), SYNC_FILE_RANGE_WRITE);
      started_ = written_;
    }
    return true;
  }
  bool SyncAndClose() {
    if (fsync(fd_) != 0) {
      error_ = std::strerror(errno);
      return false;
    }
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) {
      error_ = std::strerror(errno);
      return false;
    }
    return true;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  void Remove() {
    Close();
    if (!path_.empty()) unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint64_t written_ = 0, started_ = 0;
  std::string error_;
};

struct SaveRun {
  rdb::FileWriter writer;
  OutFile out;
  SyncStream* stream = nullptr;  // diskless: the output goes to the replicas, not `out`
  std::string dir;
  rdb::EncodeLimits limits = LiveEncodeLimits();
  std::string error;  // the first failure
  // SELECTDB + RESIZEDB go before a database's first key, and again whenever the walk comes
  // back to it from another one (the segment pass meets the databases mixed).
  std::array<uint64_t, kMaxDatabases> db_keys{};
  std::array<uint64_t, kMaxDatabases> db_expires{};
  int selected = -1;
  std::string object;  // Frame's encoding, reused

  void Select(int db) {
    if (db == selected) return;
    selected = db;
    writer.SelectDb(static_cast<uint64_t>(db), db_keys[static_cast<size_t>(db)],
                    db_expires[static_cast<size_t>(db)]);
  }
  bool Fail(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }
  // Frames one key of client database `db` (its stored bytes, type, record and TTL); false, the
  // run failed, if the record does not encode.
  bool Frame(int db, std::string_view stored_key, ValueType type, std::string_view record,
             int64_t expire_ms) {
    object.clear();
    const std::string_view client_key = ClientKey(stored_key);
    if (!rdb::EncodeObject(type, record, limits, &object)) {
      return Fail("the value of key '" + std::string(client_key) + "' is damaged");
    }
    Select(db);
    writer.Key(client_key, expire_ms, object);
    return true;
  }
  bool Drain(bool all) {
    if (writer.pending() >= kWriteBytes || (all && writer.pending() > 0)) {
      if (stream != nullptr) {
        if (!stream->Append(writer.Take())) return Fail("Diskless sync: no replica reads it");
      } else if (!out.Write(writer.Take())) {
        return Fail("Write error saving DB on disk: " + out.error());
      }
    }
    return true;
  }
};

// One key of the walk: read as the snapshot saw it.
struct WalkEntry {
  uint64_t fp = 0;
  uint64_t loc = 0;
  std::string key;
  KeyCopy copy;
  std::string error;  // set: the read failed
};

// Reads an entry's record (which names the key), then the key whole (a chunked collection too)
// through the snapshot. A string is its record: its value is the one just read, not read twice.
// Runs beside the other reads of its window; each holds the snapshot view only while it runs.
Task ReadWalkEntry(Store* st, uint64_t snap, int64_t now, WalkEntry* e) {
  Store::SnapshotReads view(*st, snap);
  ReadResult r = co_await st->ReadAt(e->fp, e->loc);
  if (!r.ok()) {
    e->error =
        r.status == ReadResult::Status::kError ? r.error : "a record of the snapshot is missing";
    co_return;
  }
  e->key.assign(r.key);
  const KeyInfo info = st->LookupRead(e->key, now);
  if (info.exists && info.type == ValueType::kString && info.loc == e->loc) {
    e->copy.exists = true;
    e->copy.type = info.type;
    e->copy.record.assign(r.value.data(), r.value.size());
    e->copy.expire_ms = info.expire_ms;
    co_return;
  }
  std::string error;
  if (!co_await ReadKeyCopy(*st, e->key, now, &e->copy, &error)) e->error = std::move(error);
}

// One slice of a shard's walk of physical database `db` (on the shard's worker): up to
// kSliceEntries of its snapshot's entries from *cursor, read in windows of concurrent reads (one
// at a time, the device's latency bounded the walk at ~10k keys/s) and framed in index order.
// A window holds at most kWalkReads keys and about kWalkBytes of records; a collection, which
// may be chunked (its size unknown until read), is read alone.
Task SaveSlice(SaveRun* run, Store& st, uint64_t snap, int db, int client_db, uint64_t* cursor) {
  std::vector<WalkEntry> entries;
  *cursor = st.SnapshotScan(snap, *cursor, kSliceEntries, db, [&](uint64_t fp, uint64_t l) {
    WalkEntry& e = entries.emplace_back();
    e.fp = fp;
    e.loc = l;
  });
  const int64_t now = NowMs();
  for (size_t first = 0; first < entries.size();) {
    Join join;
    size_t last = first;
    uint64_t bytes = 0;
    while (last < entries.size() && last - first < kWalkReads && bytes < kWalkBytes) {
      const bool alone = IsChunkableType(loc::Type(entries[last].loc));
      if (alone && last > first) break;
      bytes += st.LargeLen(entries[last].loc);
      Task t = ReadWalkEntry(&st, snap, now, &entries[last++]);
      join.Add();
      if (t.Start(&Join::OnDone, &join)) join.Done();
      if (alone) break;
    }
    co_await join;
    for (; first < last; ++first) {
      WalkEntry& e = entries[first];
      if (!e.error.empty()) {
        run->Fail(e.error);
        co_return;
      }
      if (!e.copy.exists) continue;
      if (!run->Frame(client_db, e.key, e.copy.type, e.copy.record, e.copy.expire_ms)) co_return;
      std::string().swap(e.copy.record);  // a window's values are freed as they are framed
    }
  }
  run->Drain(false);
}

// The segment pass (doc/rdb.md "Walk speed"), one segment of a shard (on its worker): reads the
// segment whole, and frames each record that is the view's version of its key (the view names
// that very record), a string straight from the bytes read, a collection through ReadWalkEntry
// (it may be chunked). Each record judged is marked, so the index walk after it skips it.
// `client_db`: physical database → the client's number at the snapshot's start.
Task ScanSegmentStep(SaveRun* run, Store& st, uint64_t snap, size_t i,
                     const std::array<int, kMaxDatabases>& client_db) {
  AlignedBuffer buf;
  uint32_t seg = 0;
  uint64_t base = 0, size = 0, seq = 0;
  bool ok = false;
  co_await st.ReadSnapshotSegment(snap, i, &buf, &seg, &base, &size, &seq, &ok);
  if (!ok) co_return;  // its keys are left to the index walk
  RecordScanner scanner(buf.data(), size, seq);
  RecordView v;
  const int64_t now = NowMs();
  size_t in_slice = 0;
  while (scanner.Next(&v) && run->error.empty()) {
    const uint64_t off = base + scanner.end_offset() - v.length;
    const auto type = static_cast<ValueType>(v.header.type);
    if (!v.header.tombstone() && type != ValueType::kChunk) {
      KeyInfo info;
      {
        Store::SnapshotReads view(st, snap);
        info = st.LookupRead(v.key, now);
      }
      // (A database past `databases` has no client number: the index walk skips it too.)
      const int db = client_db[static_cast<size_t>(SplitDbKey(v.key).db)];
      if (info.exists && loc::Offset(info.loc) == off && db >= 0) {
        if (type == ValueType::kString && info.type == ValueType::kString) {
          if (!run->Frame(db, v.key, type, v.value, info.expire_ms)) co_return;
        } else {
          WalkEntry e;
          e.fp = Index::Fingerprint(v.key);
          e.loc = info.loc;
          co_await ReadWalkEntry(&st, snap, now, &e);
          if (!e.error.empty()) {
            run->Fail(e.error);
            co_return;
          }
          if (e.copy.exists &&
              !run->Frame(db, v.key, e.copy.type, e.copy.record, e.copy.expire_ms)) {
            co_return;
          }
        }
      }
    }
    st.SnapshotScanned(snap, seg, off + v.length);
    if (++in_slice >= kSliceEntries) {
      in_slice = 0;
      if (!run->Drain(false)) co_return;
      co_await YieldToLoop();  // the worker's clients between slices, as the index walk
    }
  }
  run->Drain(false);
}

uint64_t ResidentBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Holds one worker for the instant a snapshot begins: opens its store's snapshot, says so, and
// spins until the starter releases every worker.
struct ParkAll {
  std::atomic<int> arrived{0};
  std::atomic<bool> release{false};
};

struct Park : MailboxItem {
  std::shared_ptr<ParkAll> all;
  Store* store = nullptr;
  uint64_t id = 0;
};

void RunPark(MailboxItem* item) {
  auto* p = static_cast<Park*>(item);
  p->store->BeginSnapshot(p->id);
  p->all->arrived.fetch_add(1, std::memory_order_release);
  while (!p->all->release.load(std::memory_order_acquire)) std::this_thread::yield();
  delete p;
}

Task UnlockAll(ShardSet& shards) {
  for (int w = 0; w < shards.size(); ++w) {
    Shard* s = &shards.at(w);
    co_await ShardHop(s->worker, [s]() { s->Unlock(); });
  }
}

// Single-shard writes suspended mid-way, on every shard (Shard::writes_suspended).
int SuspendedWrites(ShardSet& shards) {
  int n = 0;
  for (int w = 0; w < shards.size(); ++w) n += shards.at(w).writes_suspended();
  return n;
}
constexpr int64_t kDrainUs = 50'000;  // the longest the locks are held waiting for them
constexpr int kDrainAttempts = 100;   // then the snapshot opens anyway (with a warning)

std::atomic<uint64_t> g_snapshot_ids{0};
constexpr int kReplAttempts = 100;  // openings tried while our master's stream is mid-command

RdbReplHooks& ReplHooks() {
  static RdbReplHooks hooks;
  return hooks;
}

}  // namespace

Task BeginRdbSnapshot(ShardSet& shards, RdbSnapshot* snap) {
  const RdbReplHooks& hooks = ReplHooks();
  if (hooks.watch) hooks.watch(true);
  bool by_seq = false;
  for (int attempt = 1;; ++attempt) {
    snap->id = g_snapshot_ids.fetch_add(1) + 1;
    // Every shard's lock (ascending, as any multi-shard command): no command that spans shards
    // is between two of its steps. Then the flush gate; a FLUSHDB waiting for these locks may
    // hold it, so give the locks back and retry rather than wait holding them.
    // Then, the locks held so no command starts anywhere, the single-shard writes suspended
    // mid-way (a device read, appendfsync always's sync) finish: the snapshot holds every
    // command whole or not at all, and the replication number read below counts exactly the
    // writes in it. Usually a millisecond; past kDrainUs the locks go back for a while.
    for (int drains = 0;;) {
      for (int w = 0; w < shards.size(); ++w) co_await ShardLockAwaiter(&shards.at(w), snap);
      if (SnapshotGate::TryBeginSnapshot()) {
        const int64_t deadline = MonotonicUs() + kDrainUs;
        while (SuspendedWrites(shards) > 0 && MonotonicUs() < deadline) co_await YieldToLoop();
        if (SuspendedWrites(shards) == 0) break;
        if (++drains == kDrainAttempts) {
          LogWarning("RDB snapshot: " + std::to_string(SuspendedWrites(shards)) +
                     " write(s) stayed suspended mid-way for seconds; the snapshot opens without "
                     "them finished");
          break;
        }
        SnapshotGate::EndSnapshot();
      }
      co_await UnlockAll(shards);
      co_await YieldToLoop();
    }
    // The instant: every other worker parked in RunPark (its snapshot open), then this one's,
    // the sequence number, the database map and the replication history, with nothing running
    // anywhere else.
    auto all = std::make_shared<ParkAll>();
    Worker* const home = Worker::Current();
    int parked = 0;
    for (int w = 0; w < shards.size(); ++w) {
      Shard& s = shards.at(w);
      if (s.worker == home) continue;
      auto* p = new Park();
      p->all = all;
      p->store = &s.store;
      p->id = snap->id;
      p->run = &RunPark;
      s.worker->Post(p);
      ++parked;
    }
    while (all->arrived.load(std::memory_order_acquire) < parked) co_await YieldToLoop();
    for (int w = 0; w < shards.size(); ++w) {
      if (shards.at(w).worker == home) shards.at(w).store.BeginSnapshot(snap->id);
    }
    snap->seq = repl::LastSeq();
    for (int d = 0; d < kMaxDatabases; ++d)
      snap->physical[static_cast<size_t>(d)] = DbMap::Physical(d);
    snap->open = true;
    snap->repl = RdbReplInfo{};
    by_seq = false;
    const bool known = !hooks.at_instant || hooks.at_instant(&snap->repl, &by_seq);
    all->release.store(true, std::memory_order_release);
    co_await UnlockAll(shards);
    if (known) break;
    // A command of our master's stream was in flight: whether its effect is in the snapshot
    // cannot be told, so the offset could not match. Again, once it finished.
    if (attempt == kReplAttempts) {
      LogWarning(
          "RDB snapshot: our master's stream kept a command in flight; the RDB gets no "
          "replication fields");
      snap->repl.valid = false;
      break;
    }
    co_await EndRdbSnapshot(shards, snap);
    co_await YieldToLoop();
  }
  if (snap->repl.valid && by_seq) {
    // A master: the offset right after the snapshot's last write, once the merge passed it.
    const int64_t deadline = NowMs() + 2000;
    int db = -1;
    while (!hooks.offset_of_seq(snap->seq, &snap->repl.offset, &db)) {
      if (NowMs() > deadline) {
        LogWarning(
            "RDB snapshot: the stream offset of its last write is not known; the RDB gets "
            "no replication fields");
        snap->repl.valid = false;
        break;
      }
      co_await YieldToLoop();
    }
    // As Redis's slaveseldb: -1 (no SELECT sent yet) is saved as 0.
    snap->repl.db = db < 0 ? 0 : db;
  }
  if (hooks.watch) hooks.watch(false);
}

void SetRdbReplHooks(RdbReplHooks hooks) { ReplHooks() = std::move(hooks); }

Task EndRdbSnapshot(ShardSet& shards, RdbSnapshot* snap) {
  if (!snap->open) co_return;
  snap->open = false;
  for (int w = 0; w < shards.size(); ++w) {
    Shard* s = &shards.at(w);
    const uint64_t id = snap->id;
    co_await ShardHop(s->worker, [s, id]() { s->store.EndSnapshot(id); });
  }
  SnapshotGate::EndSnapshot();
}

namespace {

// The snapshot's RDB, whole, into run's output (the file or the stream); run.error on failure.
Task WalkRdb(ShardSet& shards, const RdbSnapshot& snap, SaveRun& run) {
  const uint64_t id = snap.id;
  run.writer.Aux("redis-ver", "7.0.15");
  run.writer.Aux("redis-bits", "64");
  run.writer.Aux("ctime", std::to_string(NowMs() / 1000));
  run.writer.Aux("used-mem", std::to_string(ResidentBytes()));
  if (snap.repl.valid) {
    // As Redis 7.0's rdbSaveInfoAuxFields, between used-mem and aof-base.
    run.writer.Aux("repl-stream-db", std::to_string(snap.repl.db));
    run.writer.Aux("repl-id", snap.repl.replid);
    run.writer.Aux("repl-offset", std::to_string(snap.repl.offset));
  }
  run.writer.Aux("aof-base", "0");
  for (const FunctionLibrary& lib : FunctionRegistry::Get().List()) run.writer.Function(lib.code);
  // Keys go under the databases' numbers as they were when the snapshot began (SWAPDB after it
  // is not in the file); SaveRun::Select writes SELECTDB + RESIZEDB (the counts at the start;
  // Redis's loader takes them only as a hint) before a database's keys.
  std::array<int, kMaxDatabases> client_db;
  client_db.fill(-1);
  for (int d = 0; d < DbMap::Count(); ++d) {
    const int pdb = snap.physical[static_cast<size_t>(d)];
    client_db[static_cast<size_t>(pdb)] = d;
    for (int w = 0; w < shards.size(); ++w) {
      co_await ShardHop(shards.at(w).worker, [&, w]() {
        const Store& st = shards.at(w).store;
        run.db_keys[static_cast<size_t>(d)] += st.SnapshotDbSize(id, pdb);
        run.db_expires[static_cast<size_t>(d)] += st.SnapshotDbExpires(id, pdb);
      });
    }
  }
  // First the segment pass over every shard's log, then the index walk for what it left: keys
  // in large records, in segments it could not read whole, and every key while the entries the
  // view saved meanwhile (each write to a key it has not reached saves one) are too many.
  for (int w = 0; w < shards.size() && run.error.empty(); ++w) {
    size_t count = 0;
    co_await ShardHop(shards.at(w).worker,
                      [&, w]() { count = shards.at(w).store.SnapshotSegments(id); });
    for (size_t i = 0; i < count && run.error.empty(); ++i) {
      bool stop = false;
      co_await ShardCall(shards.at(w).worker, [&, w, i]() -> Task {
        Store& st = shards.at(w).store;
        if (st.snapshot_saved() > kSegmentPassMaxSaved) {
          stop = true;
          co_return;
        }
        co_await ScanSegmentStep(&run, st, id, i, client_db);
      });
      if (stop) break;
      co_await YieldToLoop();
      if (run.stream != nullptr) co_await run.stream->Space();
    }
  }
  for (int d = 0; d < DbMap::Count() && run.error.empty(); ++d) {
    const int pdb = snap.physical[static_cast<size_t>(d)];
    if (run.db_keys[static_cast<size_t>(d)] == 0) continue;
    for (int w = 0; w < shards.size() && run.error.empty(); ++w) {
      uint64_t cursor = 0;
      do {
        co_await ShardCall(shards.at(w).worker, [&, w]() -> Task {
          Store& st = shards.at(w).store;
          co_await SaveSlice(&run, st, id, pdb, d, &cursor);
          if (cursor == 0) st.SnapshotDbDone(id, pdb);
        });
        co_await YieldToLoop();  // also when the shard is this worker's own
        // Diskless: the walk waits while the replicas have a full buffer to send.
        if (run.stream != nullptr) co_await run.stream->Space();
      } while (cursor != 0 && run.error.empty());
    }
  }
  if (run.error.empty()) {
    run.writer.Finish();
    run.Drain(true);
  }
}

Task WriteRdbFile(ShardSet& shards, const RdbSnapshot& snap, const std::string& dir,
                  const std::string& dbfilename, bool* ok, const std::string& temp_name) {
  SaveRun run;
  run.dir = dir.empty() ? "." : dir;
  const std::string target = RdbFilePath(dir, dbfilename);
  const std::string temp =
      run.dir + "/" + (temp_name.empty() ? "temp-" + std::to_string(getpid()) + ".rdb" : temp_name);
  if (!run.out.Open(temp)) {
    LogWarning("Failed opening the temp RDB file " + temp + " for saving: " + run.out.error());
    co_return;
  }
  co_await WalkRdb(shards, snap, run);
  if (run.error.empty() && !run.out.SyncAndClose()) {
    run.Fail("Write error saving DB on disk: " + run.out.error());
  }
  if (run.error.empty() && rename(temp.c_str(), target.c_str()) != 0) {
    run.Fail("Error moving temp DB file " + temp + " on the final destination " + target + ": " +
             std::strerror(errno));
  }
  if (!run.error.empty()) {
    LogWarning(run.error);
    run.out.Remove();
    co_return;
  }
  LogNotice("DB saved on disk");
  *ok = true;
}

}  // namespace

Task SaveRdbFile(ShardSet& shards, std::string dir, std::string dbfilename, bool* ok,
                 std::string temp_name, RdbSnapshot* given) {
  *ok = false;
  RdbSnapshot own;
  RdbSnapshot* const snap = given != nullptr ? given : &own;
  if (!snap->open) co_await BeginRdbSnapshot(shards, snap);
  co_await WriteRdbFile(shards, *snap, dir, dbfilename, ok, temp_name);
  co_await EndRdbSnapshot(shards, snap);
}

Task StreamRdb(ShardSet& shards, SyncStream* stream, bool* ok, RdbSnapshot* snap) {
  *ok = false;
  SaveRun run;
  run.stream = stream;
  co_await WalkRdb(shards, *snap, run);
  co_await EndRdbSnapshot(shards, snap);
  if (!run.error.empty()) {
    LogWarning(run.error);
    stream->Finish(false);
    co_return;
  }
  stream->Finish(true);
  *ok = true;
}

}  // namespace lavik
