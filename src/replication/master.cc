#include "replication/master.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/numbers.h"
#include "net/tls.h"
#include "protocol/request_parser.h"
#include "replication/replica.h"
#include "replication/sync_stream.h"
#include "runtime/worker.h"

namespace lavik {

namespace {

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";
constexpr std::string_view kGetAck = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kExec = "*1\r\n$4\r\nEXEC\r\n";
// TLS: a replica that sends this much without a complete request is dropped (it sends ACKs).
constexpr size_t kMaxTlsInput = 1 << 20;
// client-output-buffer-limit replica's default hard limit: a replica this far behind is dropped.
constexpr int64_t kMaxLag = 256 << 20;

std::string SelectCmd(int db) {
  const std::string n = std::to_string(db);
  return "*2\r\n$6\r\nSELECT\r\n$" + std::to_string(n.size()) + "\r\n" + n + "\r\n";
}

}  // namespace

int64_t Master::ConfigInt(std::string_view name, int64_t dflt) const {
  int64_t v = dflt;
  if (!ParseInt64(deps_.config_value(name), &v)) return dflt;
  return v;
}

Master::Slave::~Slave() {
  if (req.fd >= 0) close(req.fd);
  if (rdb_fd >= 0) close(rdb_fd);
}

std::string_view Master::Slave::StateName() const {
  switch (state) {
    case State::kNew:
    case State::kWaitSave:
      return "wait_bgsave";
    case State::kSendRdb:
      return stream != nullptr ? "wait_bgsave" : "send_bulk";  // Redis's, diskless or not
    default:
      return "online";
  }
}

Master* Master::instance_ = nullptr;

Master::Master(Deps deps) : deps_(std::move(deps)) {
  instance_ = this;
  if (deps_.replica != nullptr) {
    deps_.replica->set_failover_done(
        [this](bool ok, const std::string& why) { FailoverPsyncDone(ok, why); });
    deps_.replica->set_history_renamed([this] {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : slaves_) Drop(*s, "our master's replication ID changed");
    });
  }
}

Master::~Master() {
  Stop();
  if (instance_ == this) instance_ = nullptr;
}

void Master::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (Waiter* w : waiters_) w->home->Post(w);  // WAIT answers what it has
  waiters_.clear();
  if (sd_done_) std::exchange(sd_done_, nullptr)(kTimedOut);
  slaves_.clear();
  if (wake_fd_ >= 0) close(wake_fd_);
  wake_fd_ = -1;
}

void Master::WakeThunk() {
  if (instance_ != nullptr) instance_->Wake();
}

void Master::Wake() {
  const int fd = wake_fd_;
  if (fd >= 0) {
    const uint64_t one = 1;
    ssize_t n = write(fd, &one, sizeof(one));
    (void)n;
  }
}

void Master::EnsureThread() {  // under mu_
  if (thread_.joinable() || stop_) return;
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { Loop(); });
}

void Master::Attach(Request r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) {
    close(r.fd);
    return;
  }
  auto s = std::make_unique<Slave>();
  s->req = std::move(r);
  s->ack_ms = NowMs();
  if (s->req.tls != nullptr) {
    s->tls_in = std::move(s->req.tls_input);
    s->readable = true;  // parse what came with it; the session may hold output to send too
  }
  slaves_.push_back(std::move(s));
  EnsureThread();
  Wake();
}

void Master::Detach(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : slaves_) {
    if (s->req.client_id == client_id && s->state != Slave::State::kDead) {
      LogNotice("Connection with replica " + s->Name() + " lost.");
      s->state = Slave::State::kDead;
    }
  }
  Wake();
}

void Master::ConfigChanged() {
  std::lock_guard<std::mutex> lock(mu_);
  EnsureThread();  // min-replicas-to-write is counted by the thread
  Wake();
}

void Master::Ack(uint64_t client_id, int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : slaves_) {
    if (s->req.client_id != client_id) continue;
    if (offset > s->ack) s->ack = offset;
    s->ack_ms = NowMs();
    if (s->await_ack) {
      s->await_ack = false;
      Wake();  // its stream starts
    }
  }
  if (!waiters_.empty() || sd_done_) Wake();
}

int64_t Master::LastHeardMs(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : slaves_) {
    if (s->req.client_id == client_id) return s->ack_ms;
  }
  return 0;
}

void Master::Feed(int64_t offset_before, std::string_view command) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!backlog_) {
    // As a Redis replica, the first command from our master creates the backlog: a replica of
    // ours, or one of our master's after we are promoted, can then continue from it (PSYNC2).
    // Our own writes go to the stream once we are promoted.
    OpenBacklogAt(offset_before);
  }
  cur_db_ = -1;  // our master's SELECTs are in the bytes: after a promotion, select again
  if (end_ != offset_before) {
    // A new history (a full sync from our master): our replicas must sync again.
    buf_.clear();
    first_ = offset_before + 1;
    end_ = offset_before;
    for (auto& s : slaves_) Drop(*s, "our master's history changed (full sync)");
  }
  buf_.append(command);
  end_ += static_cast<int64_t>(command.size());
  // No wake-up per command: the thread sends what was fed on its next round, within a
  // millisecond while the stream flows (Loop), and needs nothing when no replica of ours is
  // attached (the backlog is trimmed on its 100 ms round).
  if (feed_wake_ && !slaves_.empty()) {
    feed_wake_ = false;
    Wake();
  }
}

int64_t Master::HistLen() const {
  if (!backlog_) return 0;
  return std::min<int64_t>(end_ - first_ + 1, size_);
}

int64_t Master::EndOffset() const { return end_; }

void Master::Append(std::string_view bytes) {
  buf_.append(bytes);
  end_ += static_cast<int64_t>(bytes.size());
  deps_.replica->AdvanceOffset(static_cast<int64_t>(bytes.size()));
}

void Master::AppendEntry(const repl::Entry& e) {
  if (e.ops.empty()) return;
  auto select = [this](int db) {
    if (db >= 0 && db != cur_db_) {
      Append(SelectCmd(db));
      cur_db_ = db;
    }
  };
  if (e.ops.size() == 1) {
    select(e.ops[0].db);
    Append(e.ops[0].resp);
    return;
  }
  select(e.ops[0].db);  // as Redis: the SELECT goes before MULTI
  Append(kMulti);
  for (const ReplOp& op : e.ops) {
    select(op.db);
    Append(op.resp);
  }
  Append(kExec);
}

bool Master::StreamSettled() {
  if (!repl::On()) return true;
  Wake();  // merge now what the workers logged
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_ > repl::LastSeq();
}

void Master::Merge() {
  drained_.clear();
  repl::Drain(&drained_);
  const bool following = deps_.replica->following();
  // Mostly in order already (each log is, but for commands that took their number before
  // releasing locks): sorted, they go straight to the backlog; the rest waits in pending_.
  std::sort(drained_.begin(), drained_.end(),
            [](const repl::Entry& a, const repl::Entry& b) { return a.seq < b.seq; });
  for (repl::Entry& e : drained_) {
    if (e.seq == next_seq_ && pending_.empty()) {
      if (!following && backlog_) {
        AppendEntry(e);
        merged_end_ = end_;
      }
      ++next_seq_;
      NoteMerged();
      if (watchers_ > 0) seq_ends_.push_back({next_seq_ - 1, end_, cur_db_});
      continue;
    }
    pending_.emplace(e.seq, std::move(e.ops));
  }
  while (!pending_.empty() && pending_.begin()->first == next_seq_) {
    if (!following && backlog_) {
      repl::Entry e{next_seq_, std::move(pending_.begin()->second)};
      AppendEntry(e);
      merged_end_ = end_;
    }
    pending_.erase(pending_.begin());
    ++next_seq_;
    NoteMerged();
    if (watchers_ > 0) seq_ends_.push_back({next_seq_ - 1, end_, cur_db_});
  }
  MaybeStartSave();
  if (save_ == SaveState::kStarting) FixStreamStart();
}

void Master::WatchSeqs(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  if (on) {
    // The last entry merged so far: a snapshot's number is at least this one.
    if (watchers_++ == 0) seq_ends_.push_back({next_seq_ - 1, end_, cur_db_});
  } else if (--watchers_ == 0) {
    seq_ends_.clear();
  }
}

bool Master::OffsetOfSeq(uint64_t seq, int64_t* offset, int* db) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_seq_ <= seq) {
    Wake();  // merge now what the workers logged
    return false;
  }
  for (auto it = seq_ends_.rbegin(); it != seq_ends_.rend(); ++it) {
    if (it->seq == seq) {
      *offset = it->end;
      *db = it->db;
      return true;
    }
  }
  // Not recorded (merged before the watch began: cannot happen, the watch starts first).
  *offset = end_;
  *db = cur_db_;
  return true;
}

void Master::OpenBacklogAt(int64_t offset) {
  backlog_ = true;
  backlog_on_ = true;
  buf_.clear();
  first_ = offset + 1;
  end_ = offset;
  merged_end_ = end_;
  if (!repl::On()) repl::Activate(&Master::WakeThunk);
  EnsureThread();
}

bool Master::FinishStream(int64_t* offset, int* db) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!backlog_ || deps_.replica->following()) return false;
  Merge();
  if (!pending_.empty() || (repl::On() && next_seq_ <= repl::LastSeq())) return false;
  *offset = end_;
  *db = cur_db_ < 0 ? 0 : cur_db_;
  return true;
}

void Master::RestoreBacklogAt(int64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (backlog_) return;
  OpenBacklogAt(offset);
  cur_db_ = -1;
  activated_ms_ = NowMs();
}

void Master::NoteMerged() {
  if (save_ != SaveState::kStarting) return;
  merged_at_.emplace_back(next_seq_ - 1, end_);
  // The replicas' stream may start right here: the next entry says its database.
  cur_db_ = -1;
}

void Master::Answer(Slave& s) {
  const int64_t now = NowMs();
  s.ack_ms = now;
  if (!backlog_) {
    // The first replica: a backlog, and a new history name (Redis's changeReplicationId and
    // clearReplicationId2: there is no past history a replica could continue). A replica of a
    // master keeps its master's history: the backlog fills with its stream (Feed).
    // A promoted replica (or one restarted with its saved history) keeps it, as a Redis
    // replica, whose backlog exists since its sync, does: its replicas may continue.
    if (!deps_.replica->following() && !deps_.replica->has_history()) deps_.replica->NewHistory();
    backlog_ = true;
    backlog_on_ = true;
    end_ = deps_.replica->history().offset;
    merged_end_ = end_;
    first_ = end_ + 1;
    buf_.clear();
    cur_db_ = -1;
    activated_ms_ = now;
  }
  if (!repl::On()) repl::Activate(&Master::WakeThunk);
  const Replica::History h = deps_.replica->history();
  const int64_t visible_first = end_ - HistLen() + 1;
  const int64_t want = s.req.offset;
  const bool same_history =
      s.req.replid == h.replid || (s.req.replid == h.replid2 && want <= h.second_offset);
  if (s.req.psync && same_history && want >= visible_first && want <= end_ + 1) {
    s.out += s.req.psync2 ? "+CONTINUE " + h.replid + "\r\n" : "+CONTINUE\r\n";
    s.sent = want - 1;
    s.state = Slave::State::kOnline;
    ++sync_partial_ok;
    LogNotice("Partial resynchronization request from " + s.Name() + " accepted. Sending " +
              std::to_string(end_ - want + 1) + " bytes of backlog starting from offset " +
              std::to_string(want) + ".");
    return;
  }
  ++sync_full;
  if (s.req.psync && s.req.replid != "?") {
    ++sync_partial_err;
    LogNotice("Partial resynchronization not accepted for " + s.Name() + ": replid " +
              s.req.replid + " offset " + std::to_string(want));
  } else {
    LogNotice("Replica " + s.Name() + " asks for synchronization");
  }
  s.state = Slave::State::kWaitSave;
  s.wait_since_ms = now;
  const Replica::History now_h = deps_.replica->history();
  if (save_ == SaveState::kRunning && !save_diskless_) {
    // Joins the RDB being written: its stream starts where that RDB's does.
    s.announced = true;
    s.sent = save_offset_;
    if (s.req.psync) {
      s.out += "+FULLRESYNC " + now_h.replid + " " + std::to_string(save_offset_) + "\r\n";
    }
  } else if (save_ == SaveState::kNone) {
    save_ = SaveState::kWaitMerge;
    save_seq_ = repl::LastSeq();
  }
}

void Master::Lost(Slave& s) {
  if (s.state == Slave::State::kDead) return;
  LogNotice("Connection with replica " + s.Name() + " lost.");
  s.state = Slave::State::kDead;
  shutdown(s.req.fd, SHUT_RDWR);  // its connection on the worker sees the hang-up and closes
}

// The socket is ours alone (the worker's connection only watches for a hang-up): receive,
// decrypt, and take the replica's REPLCONF ACK <offset> as the worker's Replconf does for a
// plain-TCP replica. Nothing is answered (an ACK gets no reply); other requests are ignored.
void Master::ReadTls(Slave& s, int64_t now_ms) {
  TlsSession& tls = *s.req.tls;
  for (;;) {
    const ssize_t n = recv(s.req.fd, tls.recv_buffer(), TlsSession::kRecvBufferSize, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Lost(s);
      return;
    }
    bool ok = tls.Feed(tls.recv_buffer(), static_cast<size_t>(n));
    long got = 0;
    char plain[16 << 10];
    while (ok && (got = tls.ReadPlain(plain, sizeof(plain))) > 0) {
      s.tls_in.append(plain, static_cast<size_t>(got));
    }
    if (tls.failed() || (!ok && !tls.closed_by_peer())) {
      Drop(s, "TLS error: " + tls.error());
      return;
    }
    if (tls.closed_by_peer()) {
      Lost(s);
      return;
    }
  }
  tls.TakeOutput(&s.cipher);  // a post-handshake message to answer (Handle sends it)
  RequestParser parser;
  size_t at = 0;
  for (;;) {
    const RequestParser::Status st = parser.Parse(s.tls_in.data() + at, s.tls_in.size() - at);
    if (st == RequestParser::Status::kNeedMore) break;
    if (st == RequestParser::Status::kError) {
      Drop(s, "Protocol error from the replica: " + parser.error());
      return;
    }
    const std::span<const std::string_view> args = parser.args();
    int64_t offset = 0;
    if (args.size() >= 3 && EqualsNoCase(args[0], "replconf") && EqualsNoCase(args[1], "ack") &&
        ParseInt64(args[2], &offset)) {
      if (offset > s.ack) s.ack = offset;
      s.ack_ms = now_ms;
      s.await_ack = false;
    }
    at += parser.consumed();
    parser.Reset();
  }
  s.tls_in.erase(0, at);
  if (s.tls_in.size() > kMaxTlsInput) Drop(s, "too much input without a complete request");
}

void Master::Drop(Slave& s, const std::string& why) {
  if (s.state == Slave::State::kDead) return;
  LogWarning("Disconnecting replica " + s.Name() + ": " + why);
  s.state = Slave::State::kDead;
  // Ends its connection on the worker too (the recv there completes), so its client goes.
  if (s.req.fd >= 0) shutdown(s.req.fd, SHUT_RDWR);
}

// Sends what the replica is owed, without blocking. False on a hard error (dropped).
bool Master::SendRaw(Slave& s, std::string_view b, size_t* sent) {
  while (!b.empty()) {
    const ssize_t n =
        send(s.req.fd, b.data(), std::min(b.size(), kSendChunk), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      s.want_out = true;
      return true;
    }
    if (n <= 0) {
      Drop(s, std::string("write error: ") + std::strerror(errno));
      return false;
    }
    *sent += static_cast<size_t>(n);
    b.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// `sent` counts the plaintext taken. Over TLS that is what was sealed: the ciphertext goes out
// first, and more is sealed only once it has, so a slow replica holds one chunk here.
bool Master::SendSome(Slave& s, std::string_view b, size_t* sent) {
  if (s.req.tls == nullptr) return SendRaw(s, b, sent);
  for (;;) {
    if (!s.cipher.empty()) {
      size_t n = 0;
      const bool ok = SendRaw(s, s.cipher, &n);
      s.cipher.erase(0, n);
      if (!ok || s.want_out) return ok;
    }
    if (b.empty()) return true;
    const std::string_view piece = b.substr(0, kSendChunk);
    if (!s.req.tls->WritePlain(piece)) {
      Drop(s, "TLS error: " + s.req.tls->error());
      return false;
    }
    s.req.tls->TakeOutput(&s.cipher);
    *sent += piece.size();
    b.remove_prefix(piece.size());
  }
}

void Master::Handle(Slave& s, int64_t now_ms) {
  s.want_out = false;
  if (!s.cipher.empty() || (s.req.tls != nullptr && s.req.tls->has_output())) {
    if (s.req.tls != nullptr) s.req.tls->TakeOutput(&s.cipher);
    size_t n = 0;
    if (!SendSome(s, {}, &n) || s.want_out) return;
  }
  if (s.state == Slave::State::kNew) Answer(s);
  if (!s.out.empty()) {
    size_t n = 0;
    if (!SendSome(s, s.out, &n)) return;
    s.out.erase(0, n);
    if (!s.out.empty()) return;
  }
  if (s.state == Slave::State::kWaitSave) {
    if (s.announced && now_ms - s.newline_ms >= 1000) {  // keep-alive while the RDB is made
      s.newline_ms = now_ms;
      s.out = "\n";
    }
    return;
  }
  if (s.state == Slave::State::kSendRdb && s.stream != nullptr) {
    if (!SendStream(s)) return;
    s.stream.reset();
    s.await_ack = true;
    LogNotice("Streamed RDB transfer with replica " + s.Name() + " succeeded (socket).");
  }
  if (s.state == Slave::State::kSendRdb) {
    if (!SendRdbFile(s)) return;
    if (s.req.rdb_only) {
      // Redis's replicaPutOnline for an rdb-only replica: it is closed, never put online.
      LogNotice("RDB transfer completed, rdb only replica (" + s.Name() +
                ") should be disconnected asap");
      s.state = Slave::State::kDead;
      shutdown(s.req.fd, SHUT_RDWR);  // every byte was sent; its connection closes
      return;
    }
    s.state = Slave::State::kOnline;
    s.ack_ms = now_ms;
    LogNotice("Synchronization with replica " + s.Name() + " succeeded");
  }
  if (s.state != Slave::State::kOnline || s.await_ack) return;
  if (s.sent + 1 < first_) {
    Drop(s, "the backlog no longer holds what it needs");
    return;
  }
  if (end_ - s.sent > kMaxLag) {
    Drop(s, "scheduled to be closed ASAP for overcoming of output buffer limits");
    return;
  }
  while (s.sent < end_) {
    const size_t from = static_cast<size_t>(s.sent + 1 - first_);
    const size_t len = static_cast<size_t>(end_ - s.sent);
    size_t n = 0;
    const bool ok = SendSome(s, std::string_view(buf_).substr(from, std::min(len, kSendChunk)), &n);
    s.sent += static_cast<int64_t>(n);
    if (!ok || s.want_out) return;
  }
}

void Master::Trim() {
  if (!backlog_) return;
  int64_t keep = std::max(first_, end_ - size_ + 1);
  for (auto& s : slaves_) {
    if (s->state == Slave::State::kDead || (s->state == Slave::State::kWaitSave && !s->announced) ||
        s->state == Slave::State::kNew) {
      continue;
    }
    keep = std::min(keep, s->sent + 1);
  }
  // The stream of the full sync being started may begin at any entry merged since.
  if (save_ == SaveState::kStarting && !merged_at_.empty()) {
    keep = std::min(keep, merged_at_.front().second + 1);
  }
  const int64_t dead = keep - first_;
  if (dead > 0 && (dead >= (1 << 20) || dead * 2 >= static_cast<int64_t>(buf_.size()))) {
    buf_.erase(0, static_cast<size_t>(dead));
    first_ = keep;
  }
}

void Master::Cron(int64_t now_ms) {
  size_ = std::max<int64_t>(ConfigInt("repl-backlog-size", 1 << 20), 1);
  UpdateFailover(now_ms);
  const bool following = deps_.replica->following();
  if (following) {
    // A master of ours now: our replicas follow its history through us (they sync again).
    refuse_writes_ = false;
    return;
  }
  const int64_t min_write = ConfigInt("min-replicas-to-write", 0);
  const int64_t max_lag = ConfigInt("min-replicas-max-lag", 10);
  if (!backlog_) {
    refuse_writes_ = min_write > 0 && max_lag > 0;
    return;
  }
  const int64_t period_ms = ConfigInt("repl-ping-replica-period", 10) * 1000;
  // As Redis, no PING nor GETACK while a failover holds the writes — FAILOVER, or a cluster
  // manual failover's pause (SetFailoverPause): the offset the target must reach stays put.
  const bool quiet =
      failover_.load() != kNoFailover || failover_pause_.load(std::memory_order_relaxed);
  // Nor a PING while SHUTDOWN waits for the replicas (its writes are held too, as Redis's
  // PAUSE_DURING_SHUTDOWN): the offset they must reach stays put once its GETACK is out.
  if (!quiet && !sd_done_ && !slaves_.empty() && now_ms - last_ping_ms_ >= period_ms) {
    last_ping_ms_ = now_ms;
    Append(kPing);
  }
  if (want_ack_ && !quiet) {
    want_ack_ = false;
    Append(kGetAck);
  }
  const int64_t timeout_ms = ConfigInt("repl-timeout", 60) * 1000;
  int64_t good = 0;
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kOnline) continue;
    if (now_ms - s->ack_ms > timeout_ms) {
      Drop(*s, "timeout (streaming sync)");
      continue;
    }
    if ((now_ms - s->ack_ms) / 1000 <= max_lag) ++good;
  }
  refuse_writes_ = min_write > 0 && max_lag > 0 && good < min_write;
}

void Master::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  bool busy = false;
  while (!stop_) {
    const int64_t now = NowMs();
    Merge();
    for (auto& s : slaves_) {
      if (s->req.tls == nullptr || !s->readable || s->state == Slave::State::kDead) continue;
      s->readable = false;
      ReadTls(*s, now);
    }
    Cron(now);
    if (save_ == SaveState::kRunning && save_result_.load() >= 0) SaveDone(save_result_ == 1);
    for (auto& s : slaves_) {
      if (s->state != Slave::State::kDead) Handle(*s, now);
    }
    std::erase_if(slaves_, [](const auto& s) { return s->state == Slave::State::kDead; });
    FeedStream();
    CheckWaiters(now);
    CheckShutdownWait(now);
    Trim();

    std::vector<pollfd> fds;
    std::vector<Slave*> polled;  // fds[i + 1]'s replica (the thread alone removes replicas)
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    bool owed = false;
    for (auto& s : slaves_) {
      // Over TLS the thread reads the replica's ACKs too.
      const short events =
          static_cast<short>((s->want_out ? POLLOUT : 0) | (s->req.tls != nullptr ? POLLIN : 0));
      if (events != 0) {
        fds.push_back(pollfd{s->req.fd, events, 0});
        polled.push_back(s.get());
      }
      owed = owed ||
             (s->state == Slave::State::kOnline && s->sent < end_ && !s->want_out && !s->await_ack);
    }
    int timeout = 100;
    for (Waiter* w : waiters_) {
      if (w->deadline_ms != 0)
        timeout = static_cast<int>(std::clamp<int64_t>(w->deadline_ms - now, 0, timeout));
    }
    if (sd_done_) {
      timeout = static_cast<int>(std::clamp<int64_t>(sd_deadline_ms_ - now, 0, timeout));
    }
    if (owed) timeout = 0;
    // After a round that moved entries, sleep a millisecond without asking to be woken: under a
    // write load the workers then never pay for a wake-up. Idle, the first push wakes us.
    if (busy && timeout > 1) timeout = 1;
    if (!busy) {
      repl::WantWake();
      feed_wake_ = true;
    }
    const size_t before = next_seq_;
    const int64_t fed_before = end_;
    lock.unlock();
    poll(fds.data(), fds.size(), timeout);
    uint64_t v;
    while (read(wake_fd_, &v, sizeof(v)) > 0) {
    }
    lock.lock();
    for (size_t i = 0; i < polled.size(); ++i) {
      if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) polled[i]->readable = true;
    }
    busy = next_seq_ != before || !drained_.empty() || (end_ != fed_before && !slaves_.empty());
  }
}

void Master::AppendSlaves(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_s = NowMs() / 1000;
  out->append("connected_slaves:" + std::to_string(slaves_.size()) + "\r\n");
  int i = 0;
  for (auto& s : slaves_) {
    out->append("slave" + std::to_string(i++) + ":ip=" + s->req.ip +
                ",port=" + std::to_string(s->req.port) + ",state=" + std::string(s->StateName()) +
                ",offset=" + std::to_string(s->ack) +
                ",lag=" + std::to_string(now_s - s->ack_ms / 1000) + "\r\n");
  }
  static constexpr const char* kStates[] = {"no-failover", "waiting-for-sync",
                                            "failover-in-progress"};
  out->append(std::string("master_failover_state:") + kStates[failover_.load()] + "\r\n");
}

void Master::AppendBacklog(std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t size = std::max<int64_t>(ConfigInt("repl-backlog-size", 1 << 20), 1);
  const int64_t hist = backlog_ ? std::min<int64_t>(end_ - first_ + 1, size) : 0;
  out->append("repl_backlog_active:" + std::to_string(backlog_ ? 1 : 0) + "\r\n");
  out->append("repl_backlog_size:" + std::to_string(size) + "\r\n");
  out->append("repl_backlog_first_byte_offset:" + std::to_string(backlog_ ? end_ - hist + 1 : 0) +
              "\r\n");
  out->append("repl_backlog_histlen:" + std::to_string(hist) + "\r\n");
}

void Master::WriteReplicas(ReplyWriter& w) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t online = 0;
  for (auto& s : slaves_) online += s->state == Slave::State::kOnline ? 1 : 0;
  w.Array(online);
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kOnline) continue;
    w.Array(3);
    w.Bulk(s->req.ip);
    w.Bulk(std::to_string(s->req.port));
    w.Bulk(std::to_string(s->ack));
  }
}

size_t Master::replica_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return slaves_.size();
}

}  // namespace lavik
