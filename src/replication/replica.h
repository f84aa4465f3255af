// Replica: Lavik following a Redis master (REPLICAOF host port), the replica side of Redis's
// replication protocol as redis-server 7.0 speaks it (doc/replication.md).
//
// One replication thread per process runs the link's life: connect, PING, REPLCONF
// listening-port / capa eof capa psync2, PSYNC (`? -1` the first time, then the master's replid
// and the offset processed + 1), then either +FULLRESYNC — every database flushed, the RDB
// payload ($<len> or the diskless $EOF:<mark> form) streamed from the socket into the shards
// (rdb_stream.h), never held in memory — or +CONTINUE (the data kept). The socket then becomes a
// Connection on worker 0 whose handler is this object: the master's command stream is parsed
// and run by the server's normal request path (its RequestHandler). A command whose keys are on
// one other worker runs apart from the link (the server's lanes: that worker runs them in the
// stream's order, one after the other, while the link goes on — the window below); any other
// waits until the window is empty, so the stream's order holds per key and across workers at
// every keyless or multi-worker command (doc/replication.md "Ordering"; with
// replica-apply-window 0, strictly one command at a time). Replies are dropped, except REPLCONF
// GETACK's `REPLCONF ACK <offset>`; the offset counts every byte of every command of the stream
// (PINGs included), exactly as Redis counts it. The thread sends REPLCONF ACK every second, and
// brings the link back with a partial resync when it drops.
//
// Thread safety: Follow/Promote/WriteRole/AppendInfo/read_only from any thread; the
// RequestHandler methods on worker 0 (the link's connection).
#pragma once

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "net/connection.h"
#include "protocol/reply_writer.h"
#include "replication/rdb_stream.h"
#include "runtime/task.h"
#include "storage/format.h"

namespace lavik {

class ShardSet;
class SocketSource;
class TlsSession;
struct Services;

// 40 random hex characters: a replication id, or a diskless sync's end mark.
std::string NewReplId();

class Replica : public RequestHandler {
 public:
  struct Deps {
    std::function<ShardSet&()> shards;  // (made after the Replica)
    const Services* services = nullptr;
    RequestHandler* server = nullptr;  // runs the master's commands (the server's request path)
    std::function<uint64_t()> next_client_id;
    std::function<int()> listening_port;
    std::function<std::string(std::string_view)> config_value;  // CONFIG GET's value
    // The master side (master.h): the stream as applied (for our own replicas), ROLE's
    // replicas, INFO's slave lines and backlog fields.
    std::function<void(int64_t offset_before, std::string_view command)> feed;
    std::function<void(ReplyWriter&)> write_replicas;
    std::function<void(std::string*)> info_slaves;
    std::function<void(std::string*)> info_backlog;
    // Keeps `replicaof` (CONFIG GET, CONFIG REWRITE) on the current master: "host port", or
    // "no one" for none.
    std::function<void(std::string_view)> set_replicaof;
  };
  explicit Replica(Deps deps);
  ~Replica() override;

  // REPLICAOF host port: the reply's text after '+' ("OK", or "OK Already connected to
  // specified master").
  // `failover`: FAILOVER's step (master.h) — our own history (replid, offset) is what we ask
  // to continue, with `PSYNC <replid> <offset+1> FAILOVER`, and the answer goes to the hook.
  std::string Follow(const std::string& host, int port, bool failover = false);
  // The Master's: told whether the target accepted a PSYNC ... FAILOVER (+CONTINUE or
  // +FULLRESYNC), or why not. Called from the replication thread, no lock held.
  void set_failover_done(std::function<void(bool ok, const std::string& why)> fn) {
    failover_done_ = std::move(fn);
  }
  // The Master's: our master answered +CONTINUE with a new replid (it was promoted); our own
  // replicas are disconnected, as Redis does, so they learn the new name. No lock held.
  void set_history_renamed(std::function<void()> fn) { history_renamed_ = std::move(fn); }
  // tls-replication yes: a new client session for the link to the master (nullptr with *error
  // if the context cannot be built). Set once at start-up.
  void set_tls_session_factory(std::function<std::unique_ptr<TlsSession>(std::string*)> fn) {
    new_tls_session_ = std::move(fn);
  }
  // Start-up: the `replicaof` config's value ("host port", or "" for none).
  void FollowConfigured(std::string_view value);
  // REPLICAOF NO ONE: stops following, keeps the data; the master's replid becomes replid2.
  void Promote();
  // Shutdown, before the workers stop: ends the link and the thread.
  void Stop();

  // A restarted server continues its history (saved_history.h). Start-up, before the data
  // file is opened: takes the saved history. With `replicaof` configured the data follow it
  // (the first PSYNC asks to continue it); on a master it becomes replid2 as RestoreFromRdb's,
  // and restored_master_offset() then tells the caller where to start the Master's backlog.
  void TakeSavedHistory(const std::string& data_file, bool replicaof_configured);
  // Start-up: an RDB file was loaded into the data, which no longer follow that history.
  void ForgetSavedHistory();
  // TakeSavedHistory restored a master's history (and no RDB load dropped it): its offset, or -1.
  int64_t restored_master_offset() const;
  // Start-up, after an RDB with replication fields (repl-id, repl-offset, repl-stream-db) was
  // loaded, as Redis 7.0's loadDataFromDisk: on a replica (`replicaof` configured) the data
  // follow that history (the first PSYNC continues it); on a master it becomes replid2, with
  // second_repl_offset = offset + 1 and master_repl_offset = offset, so the master's former
  // replicas can continue (the Master's backlog is restored by the caller).
  void RestoreFromRdb(const std::string& replid, int64_t offset, int db, bool as_replica);
  // Start-up, after recovery rolled the data file back to its replication cut (a replica
  // restarted after a crash, replica_cut.cc): the data follow that history up to its offset.
  void RestoreFromCut(const ReplCut& cut);

  // A dump.rdb's replication fields at a snapshot's instant (Redis's rdbPopulateSaveInfo;
  // called while every other worker is parked, or worker 0 is the caller): on a master, only
  // with a backlog (`master_backlog`), the stream offset to be taken at the snapshot's sequence
  // number (*by_seq); on a replica whose data follow its master's history, the offset processed
  // and the stream's database. False: a command of the master's stream is in flight (its effect
  // may or may not be in the snapshot), try again.
  bool SnapshotHistory(bool master_backlog, std::string* replid, int64_t* offset, int* db,
                       bool* valid, bool* by_seq);
  // While a snapshot opens (calls nest; any thread): the master's stream is held, its next
  // command not started (it waits, parsed, on the link), so the command in flight finishes and
  // SnapshotHistory can tell the offset. Released, the held command runs on worker 0.
  void HoldStream(bool on);
  // Clean shutdown, after Stop(), the workers stopped and the data file synced: saves the
  // history the data follow, if any — a replica's, or a master's own replid with the stream's
  // final offset and database (`master_valid`: the Master has a backlog and merged every
  // write, Master::FinishStream). False (logged) if it could not be written.
  bool SaveHistoryAtShutdown(const std::string& data_file, bool master_valid = false,
                             int64_t master_offset = 0, int master_db = 0);

  // Writes from clients are refused: following a master, with replica-read-only yes.
  bool read_only() const {
    return following_.load(std::memory_order_relaxed) && ro_config_.load(std::memory_order_relaxed);
  }
  void set_read_only_config(bool on) { ro_config_ = on; }  // CONFIG SET replica-read-only
  // Commands without the `stale` flag get -MASTERDOWN: following a master whose link is not up,
  // with replica-serve-stale-data no.
  bool refuses_stale() const {
    return following_.load(std::memory_order_relaxed) &&
           !connected_.load(std::memory_order_relaxed) &&
           !serve_stale_.load(std::memory_order_relaxed);
  }
  void set_serve_stale_config(bool on) { serve_stale_ = on; }  // replica-serve-stale-data
  bool following() const { return following_.load(std::memory_order_relaxed); }  // HELLO's role
  // A full sync is loading: commands without the `loading` flag get -LOADING, as in Redis.
  bool loading() const { return loading_.load(std::memory_order_relaxed); }
  void WriteRole(ReplyWriter& w);

  // The replication history, for the master side (master.h).
  struct History {
    std::string replid, replid2;
    int64_t offset = 0, second_offset = -1;
  };
  History history() const;
  bool link_up() const;  // following, link connected
  void AdvanceOffset(int64_t n) { offset_.fetch_add(n, std::memory_order_relaxed); }
  void NewHistory();  // the first backlog: a new replid, no replid2 (Redis's changeReplicationId)
  // The data follow a known history (synced from a master, promoted, or restored at start-up):
  // a first replica of ours continues it rather than getting a new replid.
  bool has_history() const;
  void AppendInfo(std::string* out);  // INFO's "# Replication" section, fields only
  // INFO persistence while a full sync loads (Redis's loading_start_time ... loading_eta_seconds);
  // nothing otherwise.
  void AppendLoadingInfo(std::string* out);
  int64_t repl_offset() const { return offset_.load(); }  // master_repl_offset (any thread)
  // A cluster replica's data age (Redis's clusterHandleSlaveFailover): ms since the master was
  // last heard while the link is up, since the link went down otherwise (INT64_MAX / 2 when
  // it never was up).
  int64_t DataAgeMs() const;

  // The master link's connection (worker 0).
  void OnOpen(Connection& c) override;
  Result OnRequest(Connection& c, std::span<const std::string_view> args) override;
  void OnClose(Connection& c) override;
  void OnQueryBufferLimit(Connection& c) override { deps_.server->OnQueryBufferLimit(c); }

  // The stream applied concurrently (server/dispatcher.cc; doc/replication.md "Ordering"):
  // worker 0, on the link's behalf. A command the server runs apart from the link (posted to
  // its keys' worker, the link going on with the next one) is in the window until it finished;
  // its token is its start offset. ACKs then say the offset of the first one not finished.
  int64_t ApartBegin();
  // It finished; `failed_name`: the command's name if it replied an error (logged). True if
  // the window is now empty.
  bool ApartEnd(int64_t token, std::string_view failed_name);
  size_t apart_count() const { return apart_count_.load(std::memory_order_relaxed); }

 private:
  enum class State { kNone, kConnect, kConnecting, kHandshake, kSync, kConnected };

  void Loop();  // the replication thread
  // One link: connect, handshake, sync, then serve the stream until it drops. False if it
  // failed before the stream started (the caller waits a second and retries).
  bool SyncOnce(uint64_t gen, const std::string& host, int port);
  // *failover: the PSYNC sent (or not written) said FAILOVER.
  bool Handshake(SocketSource& src, std::string* psync_reply, bool* failover);
  bool FullSync(SocketSource& src, const std::string& reply);
  // repl-diskless-load: `on-empty-db` with no key stored loads the RDB as it arrives; otherwise
  // (`disabled`, `swapdb`) it is received into a file first, the old data served meanwhile.
  bool LoadsFromSocket();
  bool LoadFromSocket(SocketSource& src, int64_t total, const std::string& eof_mark,
                      RdbLoadReport* report);
  bool LoadThroughDisk(SocketSource& src, int64_t total, const std::string& eof_mark,
                       RdbLoadReport* report);
  // The payload ($<total> bytes, or up to the $EOF mark, which is left out) into `path`, synced.
  bool ReceiveFile(SocketSource& src, int64_t total, const std::string& eof_mark,
                   const std::string& path, std::string* error);
  bool FlushAll();  // every database, before a full sync's load
  // Until the link closes; `tls`: the link's session (tls-replication), handed to the connection.
  void ServeLink(uint64_t gen, int fd, std::string leftover, std::unique_ptr<TlsSession> tls);
  void PostToLink(bool close);  // ACK (or close the link) on worker 0
  bool Cancelled(uint64_t gen) const;
  void SetState(State s);
  void SetStateLocked(State s);  // mu_ held

  Deps deps_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> gen_{0};  // bumped by every REPLICAOF
  std::atomic<bool> following_{false};
  std::atomic<bool> ro_config_{true};
  std::atomic<bool> serve_stale_{true};
  std::atomic<bool> connected_{false};  // state_ == kConnected, read without mu_
  std::atomic<bool> loading_{false};
  void BeginLoading(int64_t total_bytes);  // sets loading_ and the figures INFO shows
  RdbLoadProgress load_progress_;
  std::atomic<int64_t> load_start_s_{0};
  std::atomic<int64_t> load_total_{0};
  uint64_t stream_errors_ = 0;          // error replies to the master's commands (worker 0)
  std::atomic<int64_t> offset_{0};      // master_repl_offset: the stream's bytes processed
  std::atomic<int64_t> last_io_ms_{0};  // the last bytes from the master (wall clock)
  std::atomic<int64_t> sync_read_{0};   // full sync: RDB bytes read so far
  // The database the master's stream has selected: a new link (partial resync) starts in it,
  // as Redis's cached master keeps its db (a master sends no SELECT on +CONTINUE).
  std::atomic<int> stream_db_{0};
  Connection* link_ = nullptr;  // worker 0 only
  // From the link's OnOpen until its client is freed (its last command finished).
  std::atomic<bool> link_live_{false};
  // HoldStream: the holders; the command held (worker 0: its connection stays pending, so the
  // argument views stay valid, until RunHeld runs it).
  std::atomic<int> hold_{0};
  Connection* held_ = nullptr;
  std::vector<std::string_view> held_args_;
  std::string_view held_data_;
  // `data`: the command's bytes as the master sent them (their length is what the offset counts).
  Result RunStreamCommand(Connection& c, std::span<const std::string_view> args,
                          std::string_view data);
  void LogStreamError(std::string_view name);
  // The window (worker 0): the start offsets of the commands run apart, in stream order, each
  // with whether it finished (the front is always unfinished).
  std::deque<std::pair<int64_t, bool>> apart_;
  std::atomic<size_t> apart_count_{0};
  int64_t cur_start_ = 0;      // the start offset of the command RunStreamCommand is running
  bool client_freed_ = false;  // the link's client was freed; over once the window is empty
  void MaybeLinkOver();        // worker 0
  int64_t AckOffset() const;   // worker 0: every command before it has finished
  void RunHeld();              // worker 0

  // Replication cuts (replica_cut.cc; doc/replication.md "A replica killed -9 continues"):
  // while the link serves the stream, every kCutIntervalMs the stream is held between two
  // commands, each shard's log position captured and synced, and the superblock told that the
  // data file holds the stream up to that offset. A restart after a crash rolls back to it.
  // How often a cut is taken while the stream moves: what a restart after a crash replays at
  // most (the master's backlog must still hold it), against a short hold of the stream and a
  // sync of every shard's log per cut.
  static constexpr int64_t kCutIntervalMs = 100;
  struct PendingCut {
    uint64_t gen = 0;    // the REPLICAOF generation it was taken under
    uint64_t epoch = 0;  // DataFile::cut_epoch() at the capture
    ReplCut cut;
    std::vector<uint64_t> numbers;  // each shard's capture number
  };
  void MaybeStartCut(uint64_t gen);  // replication thread, mu_ not held
  Task TakeCut(uint64_t gen);        // worker 0
  // Worker 0: no command of the stream is in flight (or held half-way); the history, offset
  // and database the data follow now.
  bool StreamAtRest(ReplCut* cut);
  void WritePendingCut(std::unique_lock<std::mutex>& lock);  // replication thread, mu_ held
  // The superblock's cut no longer describes the data (a full sync, a promotion): cleared, and
  // the shards may free what the old cuts kept.
  void VoidCuts();
  // Worker 0: TakeCut waiting for the stream to come to rest, resumed (on a later loop turn)
  // when the window empties, a command is held, or the replication thread's next tick.
  std::coroutine_handle<> rest_waiter_;
  void WakeRestWaiter();
  struct RestAwaiter {
    Replica* self;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h) { self->rest_waiter_ = h; }
    void await_resume() const {}
  };
  std::unique_ptr<PendingCut> pending_cut_;  // mu_
  std::atomic<bool> cut_running_{false};
  std::atomic<int64_t> last_cut_offset_{-1};  // the offset of the last cut written (-1: none)
  int64_t last_cut_start_ms_ = 0;             // replication thread

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string host_;  // empty: a master
  int port_ = 0;
  State state_ = State::kNone;
  bool link_closed_ = false;
  int64_t restored_master_ = -1;  // TakeSavedHistory on a master: the offset restored
  bool synced_ = false;          // the data follow replid_ up to offset_: a PSYNC may continue them
  bool failover_psync_ = false;  // the PSYNC says FAILOVER (Follow(..., true)), until answered
  uint64_t link_gen_ = 0;        // the generation the link's connection serves (worker 0)
  std::function<void(bool, const std::string&)> failover_done_;
  std::function<void()> history_renamed_;
  std::function<std::unique_ptr<TlsSession>(std::string*)> new_tls_session_;
  std::string replid_;
  std::string replid2_;
  int64_t second_offset_ = -1;
  int64_t down_since_s_ = 0;  // when the link went down (unix seconds; 0: never up)
  int64_t sync_total_ = -1;   // full sync: the payload's length (-1: the $EOF form)
};

}  // namespace lavik
