// Master: Lavik serving replicas — the master side of Redis 7.0's replication protocol
// (doc/replication.md, "Lavik as a master").
//
// A replica's PSYNC (or SYNC) runs on its connection's worker, which hands the connection here
// (Attach): the connection stays on its worker, listed as a replica (CLIENT LIST flag S, CLIENT
// KILL TYPE replica) and reading what the replica sends (REPLCONF ACK), while this object's
// thread writes to a duplicate of its socket: +FULLRESYNC <replid> <offset> and the RDB (the
// BGSAVE walk, without stopping the workers: diskless as `$EOF:<mark>` through a SyncStream, or
// `$<len>` from a file), or +CONTINUE and the missing bytes from the backlog, then the command
// stream.
//
// The stream: the workers' write effects (commands/propagate.h) carry a global sequence number;
// the thread drains the per-worker logs, orders the entries by number, and appends them to the
// backlog (SELECT when the database changes, MULTI/EXEC around an entry of several commands,
// PING every repl-ping-replica-period, REPLCONF GETACK * for WAIT). While Lavik itself follows
// a master, the backlog is fed instead with the master's stream as applied (Feed), so a replica
// of ours gets the same history (replid and offsets), and continues after a promotion (PSYNC2).
//
// TLS (PSYNC on a tls-port): the connection gives its TlsSession to this thread
// (Connection::DetachTls), which then also reads the socket — decrypting and parsing the
// replica's REPLCONF ACKs itself — while the connection on its worker only watches for a
// hang-up. One thread owns the SSL object, and a slow replica still blocks no worker.
//
// Thread safety: every public method from any thread (one mutex); the thread does the I/O.
// master.cc: the stream and the replicas' I/O; master_sync.cc: the full sync's RDB;
// master_waits.cc: WAIT and SHUTDOWN's waits; master_failover.cc: FAILOVER.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "commands/propagate.h"
#include "protocol/reply_writer.h"
#include "runtime/mailbox.h"

namespace lavik {

class Replica;
class SyncStream;
class TlsSession;
class Worker;

class Master {
 public:
  struct Deps {
    Replica* replica = nullptr;  // the process's replication identity (replid, offset)
    std::function<std::string(std::string_view)> config_value;
    // Writes an RDB of every database to `path` (or, diskless, to `stream`) in the background,
    // from a snapshot: started(its sequence number: the writes numbered up to it are in the RDB,
    // no later one) once the snapshot is open, then done(ok); both from any thread.
    std::function<void(const std::string& path, std::shared_ptr<SyncStream> stream,
                       std::function<void(uint64_t, int64_t)> started,
                       std::function<void(bool)> done)>
        save_rdb;
    std::function<std::string()> rdb_dir;  // where that file goes (CONFIG dir)
    // FAILOVER's write pause (CLIENT PAUSE WRITE's machinery, apart from CLIENT PAUSE's own).
    std::function<void(bool on)> pause_writes;
  };
  explicit Master(Deps deps);
  ~Master();
  void Stop();

  struct Request {
    uint64_t client_id = 0;
    int fd = -1;          // a duplicate of the connection's socket; the Master owns it
    std::string ip;       // the peer's address, or REPLCONF ip-address
    int port = 0;         // REPLCONF listening-port
    bool psync = true;    // false: the old SYNC (no +FULLRESYNC line)
    bool psync2 = false;  // capa psync2: +CONTINUE names the replid
    // REPLCONF rdb-only 1 (redis-cli --rdb): a full sync whose RDB is all it gets; the
    // connection closes once it is sent, and it never takes the stream.
    bool rdb_only = false;
    bool capa_eof = false;  // REPLCONF capa eof: takes a diskless sync's `$EOF:` payload
    std::string replid;     // PSYNC's arguments
    int64_t offset = -1;
    // TLS: the connection's session, the thread's alone from now on, and the plaintext the
    // connection had decrypted past the PSYNC (net/tls.h must be included where one is made).
    std::unique_ptr<TlsSession> tls;
    std::string tls_input;
  };
  // A PSYNC/SYNC: the thread answers it. From the connection's worker.
  void Attach(Request r);
  // The replica's connection closed (its client freed).
  void Detach(uint64_t client_id);
  // min-replicas-to-write / -max-lag changed (or set at start-up).
  void ConfigChanged();
  // REPLCONF ACK <offset> from a replica's connection.
  void Ack(uint64_t client_id, int64_t offset);
  // When that replica was last heard from (its last ACK, or its sync's progress); 0 if unknown.
  int64_t LastHeardMs(uint64_t client_id);

  // While following a master: one command of its stream as applied, its bytes as the master
  // sent them (as Redis proxies its master's stream), `offset_before` the offset before it.
  // Wakes the thread only if a replica of ours is attached and the thread sleeps idle.
  void Feed(int64_t offset_before, std::string_view command);

  // Every write numbered so far is in the backlog (master_repl_offset counts it): a cluster
  // master paused for a manual failover reports its offset once this holds.
  bool StreamSettled();
  // While a cluster manual failover pauses writes: no PING or GETACK goes into the stream.
  void SetFailoverPause(bool on) { failover_pause_.store(on, std::memory_order_relaxed); }

  // A dump.rdb's replication fields (server/rdb_save.h RdbReplHooks): while watched, the
  // stream offset after each merged entry is kept, so OffsetOfSeq can tell the offset of a
  // snapshot's last write. Calls nest.
  void WatchSeqs(bool on);
  // The offset (and the stream's database then, -1 none) right after the entry numbered `seq`:
  // false while the merge has not passed it.
  bool OffsetOfSeq(uint64_t seq, int64_t* offset, int* db);
  // The backlog exists (a replica attached once): Redis writes a master's fields only then.
  bool backlog_active() const { return backlog_on_.load(std::memory_order_relaxed); }
  // Start-up: the dump.rdb loaded into a master said its history ended at `offset`, kept as
  // replid2 (Replica::RestoreFromRdb). The backlog starts right after it, empty, and the
  // writes from now on go to it, so a former replica continuing at offset+1 gets them.
  void RestoreBacklogAt(int64_t offset);

  // Shutdown, after Stop() and once the workers stopped: merges what they logged last (writes
  // that ran while the server drained), so the stream's offset counts every write in the data.
  // True with the final offset and the stream's database (0 if none selected yet) if there is
  // a backlog and nothing is missing from the order.
  bool FinishStream(int64_t* offset, int* db);

  // min-replicas-to-write: writes are refused (-NOREPLICAS) while this is true.
  bool refuses_writes() const { return refuse_writes_.load(std::memory_order_relaxed); }

  // INFO replication: connected_slaves and the slaveN lines; then the backlog fields.
  void AppendSlaves(std::string* out);
  void AppendBacklog(std::string* out);
  void WriteReplicas(ReplyWriter& w);  // ROLE's third element
  size_t replica_count();
  // INFO stats: sync_full, sync_partial_ok, sync_partial_err.
  std::atomic<int64_t> sync_full{0}, sync_partial_ok{0}, sync_partial_err{0};

  // WAIT: posted back to `home` once `need` replicas acknowledged every write made before it
  // (seq), or at `deadline_ms` (0: none), with the number that did in `count`.
  struct Waiter : MailboxItem {
    Worker* home = nullptr;
    int64_t need = 0;
    int64_t deadline_ms = 0;
    uint64_t seq = 0;
    int64_t offset = -1;  // the stream offset of seq, once merged
    int64_t count = 0;
  };
  // True (w->count set) if answered at once: enough replicas, or !may_block (inside MULTI).
  bool AddWaiter(Waiter* w, bool may_block);

  // SHUTDOWN's wait for lagging replicas (shutdown-timeout; Redis 7.0's isReadyToShutdown):
  // every replica, online or still syncing, acknowledged the whole stream, and every write
  // numbered so far is in it. True at once without replicas.
  bool ReplicasInSync();
  // Starts that wait (the server holds writes meanwhile): REPLCONF GETACK * goes out, PINGs
  // wait, and `done` is called from the replication thread, once, with kInSync, kTimedOut (at
  // `deadline_ms`) or kAborted (AbortShutdownWait). False if a wait already runs.
  enum ShutdownOutcome : int { kInSync = 0, kTimedOut = 1, kAborted = 2 };
  bool StartShutdownWait(int64_t deadline_ms, std::function<void(int)> done);
  bool AbortShutdownWait();  // false if none runs
  // Redis's finishShutdown log: a warning per lagging replica, then "N of M replicas are in
  // sync when shutting down." (nothing without replicas).
  void LogShutdownSync();

  // FAILOVER [TO host port [FORCE]] [TIMEOUT ms] (doc/replication.md, "FAILOVER"): writes
  // paused, then, once the target (or any replica) acknowledged the whole stream, this server
  // follows it with PSYNC ... FAILOVER. The state as INFO's master_failover_state shows it.
  enum FailoverState : int { kNoFailover = 0, kWaitingForSync = 1, kFailoverInProgress = 2 };
  struct FailoverRequest {
    std::string host;  // empty: any replica
    int port = 0;
    bool force = false;
    int64_t timeout_ms = 0;  // 0: none
  };
  // The error to reply ("" for +OK), Redis's checks in Redis's order.
  std::string StartFailover(const FailoverRequest& r);
  std::string AbortFailover();  // FAILOVER ABORT ("" for +OK)
  int failover_state() const { return failover_.load(std::memory_order_relaxed); }

 private:
  // One replica (the thread's; mu_ held). master.cc, master_failover.cc.
  struct Slave {
    Request req;
    enum class State { kNew, kWaitSave, kSendRdb, kOnline, kDead } state = State::kNew;
    bool announced = false;  // +FULLRESYNC sent (a full sync waits for its RDB)
    std::string out;         // control bytes before anything else
    int64_t sent = 0;        // the stream's last offset sent
    int rdb_fd = -1;
    uint64_t rdb_len = 0, rdb_sent = 0;
    std::string chunk;  // RDB bytes read but not yet sent
    size_t chunk_at = 0;
    // A diskless sync: the stream it reads, the bytes of it sent, the end mark queued.
    std::shared_ptr<SyncStream> stream;
    uint64_t stream_sent = 0;
    bool mark_queued = false;
    int64_t wait_since_ms = 0;  // when it began waiting for an RDB (repl-diskless-sync-delay)
    // After a diskless payload the stream waits for the replica's first ACK, as Redis's
    // repl_start_cmd_stream_on_ack: bytes right after the end mark would hide it from a replica
    // that looks for the mark at the end of what it read.
    bool await_ack = false;
    int64_t ack = 0;
    int64_t ack_ms = 0;
    int64_t newline_ms = 0;
    bool want_out = false;  // the socket was full: wait for POLLOUT
    // TLS: ciphertext sealed but not yet sent (at most one chunk is sealed ahead of the
    // socket), plaintext received and not yet parsed, and whether the socket has input.
    std::string cipher;
    std::string tls_in;
    bool readable = false;

    ~Slave();  // closes the socket and the RDB file
    std::string Name() const { return req.ip + ":" + std::to_string(req.port); }
    std::string_view StateName() const;  // INFO's state=
  };
  // kWaitMerge: a replica waits, the RDB is not asked for yet; kStarting: asked for, its
  // snapshot's sequence number not known yet; kRunning: the stream's start is fixed.
  enum class SaveState { kNone, kWaitMerge, kStarting, kRunning };

  void EnsureThread();
  // mu_ held: the backlog starts, empty, right after `offset`; our writes are propagated.
  void OpenBacklogAt(int64_t offset);
  void Loop();
  void Merge();                         // drain the workers' logs into the backlog
  void Append(std::string_view bytes);  // to the backlog, advancing the offset
  void AppendEntry(const repl::Entry& e);
  void Handle(Slave& s, int64_t now_ms);   // one replica's I/O
  void Answer(Slave& s);                   // PSYNC/SYNC's reply
  void ReadTls(Slave& s, int64_t now_ms);  // TLS: the replica's REPLCONF ACKs
  void Lost(Slave& s);                     // the replica closed its end
  void NoteMerged();                       // an entry was merged (kStarting: its offset is kept)
  // Sends what of `b` the socket takes (TLS: seals it first), adding it to *sent; false once
  // the replica was dropped. A full socket sets want_out and returns true.
  bool SendRaw(Slave& s, std::string_view b, size_t* sent);
  bool SendSome(Slave& s, std::string_view b, size_t* sent);
  int64_t ConfigInt(std::string_view name, int64_t dflt) const;
  // master_sync.cc: the full sync.
  void MaybeStartSave();             // a waiting replica's RDB, once it may start
  void FixStreamStart();             // kStarting: the snapshot's number is known
  void StartStream(int64_t offset);  // the full sync's stream starts after `offset`
  void SaveDone(bool ok);
  void QueueNextSave();  // a replica still waits for an RDB: the next one starts
  // Whether the next RDB may start (repl-diskless-sync-delay / -max-replicas) and its form.
  bool SaveMayStart(int64_t now_ms, bool* diskless);
  void FeedStream();  // diskless: frees what every reader sent, or abandons a stream none reads
  // kSendRdb of a diskless sync: sends what the stream has; true once the whole RDB is sent.
  bool SendStream(Slave& s);
  // kSendRdb from the file: sends what the socket takes; true once the whole file is sent.
  bool SendRdbFile(Slave& s);
  static constexpr size_t kSendChunk = 256 << 10;
  void Trim();
  void Drop(Slave& s, const std::string& why);
  void CheckWaiters(int64_t now_ms);
  bool InSyncLocked() const;               // mu_ held: ReplicasInSync
  void CheckShutdownWait(int64_t now_ms);  // mu_ held
  void Cron(int64_t now_ms);
  void Wake();
  static void WakeThunk();
  int64_t EndOffset() const;            // the backlog's last byte (= master_repl_offset)
  void UpdateFailover(int64_t now_ms);  // mu_ held: Redis's updateFailoverStatus
  void FailoverPsyncDone(bool ok, const std::string& why);  // from the replication thread
  void EndFailover(const std::string& why);                 // mu_ held: Redis's abortFailover
  void ClearFailover();                                     // mu_ held: state none, writes resume
  Slave* FindSlave(const std::string& host, int port);
  int64_t HistLen() const;

  Deps deps_;
  std::mutex mu_;
  std::thread thread_;
  bool stop_ = false;
  int wake_fd_ = -1;
  std::vector<std::unique_ptr<Slave>> slaves_;
  std::vector<Waiter*> waiters_;

  // Backlog: the bytes from offset first_ (buf_[0]) to the end of the stream.
  bool backlog_ = false;
  std::atomic<bool> backlog_on_{false};  // backlog_, for backlog_active() without the lock
  std::string buf_;
  int64_t first_ = 1;
  int64_t end_ = 0;         // the offset of the last byte (master_repl_offset)
  int64_t merged_end_ = 0;  // end_ after the last write merged (PING and GETACK come after)
  int64_t size_ = 1 << 20;  // repl-backlog-size
  int cur_db_ = -1;         // the stream's database (-1: a SELECT goes first)
  bool feed_wake_ = true;   // the thread sleeps idle: Feed wakes it (for a replica of ours)

  // Ordering the workers' entries.
  uint64_t next_seq_ = 1;
  std::map<uint64_t, std::vector<ReplOp>> pending_;
  std::vector<repl::Entry> drained_;

  // Full sync: one RDB at a time, shared by the replicas that wait for it.
  SaveState save_ = SaveState::kNone;
  uint64_t save_seq_ = 0;
  int64_t save_offset_ = 0;
  std::string save_path_;
  bool save_diskless_ = false;            // the running save writes to stream_, not a file
  std::shared_ptr<SyncStream> stream_;    // until no replica reads it
  bool stream_started_ = false;           // its readers were given it (StartStream)
  std::atomic<int> save_result_{-1};      // -1 running, 0 failed, 1 done
  std::atomic<int64_t> snap_seq_{-1};     // the snapshot's sequence number (-1: not open yet)
  std::atomic<int64_t> snap_offset_{-1};  // and its stream offset (-1: not known)
  bool chained_save_ = false;             // asked for while we follow a master
  // kStarting: (sequence number, end_ right after it) of each entry merged since the request.
  std::vector<std::pair<uint64_t, int64_t>> merged_at_;
  int64_t activated_ms_ = 0;
  // WatchSeqs: (sequence number, end_ and cur_db_ right after it) of each entry merged meanwhile.
  int watchers_ = 0;
  struct SeqEnd {
    uint64_t seq;
    int64_t end;
    int db;
  };
  std::vector<SeqEnd> seq_ends_;

  int64_t last_ping_ms_ = 0;
  bool want_ack_ = false;
  std::atomic<bool> refuse_writes_{false};

  // FAILOVER (mu_ for all but the state's atomic copy, read by INFO and the commands).
  std::atomic<int> failover_{kNoFailover};
  std::string fo_host_;  // the target ("" until chosen when FAILOVER named none)
  int fo_port_ = 0;
  bool fo_force_ = false;
  int64_t fo_end_ms_ = 0;
  // SHUTDOWN's wait (StartShutdownWait): its callback (empty: none runs) and deadline.
  std::function<void(int)> sd_done_;
  int64_t sd_deadline_ms_ = 0;
  // A cluster manual failover's pause (SetFailoverPause): no PING or GETACK either.
  std::atomic<bool> failover_pause_{false};
  static Master* instance_;
};

}  // namespace lavik
