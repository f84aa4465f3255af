// The master link's connection (the command stream), and ROLE / INFO replication.
#include <algorithm>
#include <cstdio>
#include <string>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "client/client_state.h"
#include "commands/shards.h"
#include "replication/replica.h"
#include "replication/socket_source.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

void Field(std::string* out, std::string_view name, std::string_view value) {
  out->append(name).append(":").append(value).append("\r\n");
}

// "%.2f", as Redis prints a percentage.
std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

void Field(std::string* out, std::string_view name, int64_t value) {
  Field(out, name, std::to_string(value));
}

}  // namespace

void Replica::OnOpen(Connection& c) {
  c.set_outbound(true);
  deps_.server->OnOpen(c);  // a ClientState, counted and listed as every client is
  auto* cl = static_cast<ClientState*>(c.user_data);
  cl->master = true;
  cl->db = stream_db_.load();  // a partial resync continues in the stream's database
  cl->authenticated = true;
  cl->reply_off = true;  // the master reads no reply (GETACK's ACK is written below)
  // The link is over once its client is freed: after its last command finished, so a new link's
  // commands cannot overtake one of the old link still running on another worker.
  // Commands run apart from the link (ApartBegin) count too: the link is over once the last of
  // them finished as well.
  link_live_ = true;
  client_freed_ = false;
  cl->on_free = [this] {
    client_freed_ = true;
    MaybeLinkOver();
  };
  c.set_auth_required(false);
  link_ = &c;
  last_io_ms_ = NowMs();
}

void Replica::MaybeLinkOver() {
  if (!client_freed_ || !apart_.empty()) return;
  client_freed_ = false;
  link_live_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_closed_ = true;
  }
  cv_.notify_all();
}

int64_t Replica::ApartBegin() {
  apart_.emplace_back(cur_start_, false);
  apart_count_.store(apart_.size(), std::memory_order_relaxed);
  return cur_start_;
}

bool Replica::ApartEnd(int64_t token, std::string_view failed_name) {
  if (!failed_name.empty()) LogStreamError(failed_name);
  // Start offsets grow along the stream: the entry is found by bisection.
  auto it =
      std::lower_bound(apart_.begin(), apart_.end(), token,
                       [](const std::pair<int64_t, bool>& e, int64_t t) { return e.first < t; });
  if (it != apart_.end() && it->first == token) it->second = true;
  while (!apart_.empty() && apart_.front().second) apart_.pop_front();
  apart_count_.store(apart_.size(), std::memory_order_relaxed);
  if (!apart_.empty()) return false;
  WakeRestWaiter();  // a cut waiting for the stream to come to rest
  MaybeLinkOver();
  return true;
}

int64_t Replica::AckOffset() const {
  return apart_.empty() ? offset_.load() : apart_.front().first;
}

void Replica::LogStreamError(std::string_view name) {
  if (++stream_errors_ > 10) return;
  LogWarning("Error replying to a command of the master's stream: " + std::string(name) +
             (stream_errors_ == 10 ? " (further errors are not logged)" : ""));
}

RequestHandler::Result Replica::OnRequest(Connection& c, std::span<const std::string_view> args) {
  // A link REPLICAOF (or a promotion) has ended, not yet closed: nothing more of it applies.
  if (Cancelled(link_gen_)) return Result::kDone;
  last_io_ms_ = NowMs();
  if (hold_.load(std::memory_order_acquire) > 0) {
    // A snapshot is opening: this command waits (not counted, not run) until it is open.
    held_ = &c;
    held_args_.assign(args.begin(), args.end());
    held_data_ = c.request_data();
    WakeRestWaiter();
    return Result::kPending;
  }
  return RunStreamCommand(c, args, c.request_data());
}

void Replica::HoldStream(bool on) {
  if (on) {
    hold_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  if (hold_.fetch_sub(1, std::memory_order_acq_rel) != 1 || !deps_.shards) return;
  struct HeldItem : MailboxItem {
    Replica* self;
  };
  auto* item = new HeldItem();
  item->self = this;
  item->run = [](MailboxItem* m) {
    auto* it = static_cast<HeldItem*>(m);
    it->self->RunHeld();
    delete it;
  };
  deps_.shards().at(0).worker->Post(item);
}

void Replica::RunHeld() {
  if (held_ == nullptr || hold_.load(std::memory_order_acquire) > 0) return;
  Connection* c = held_;
  held_ = nullptr;
  std::vector<std::string_view> args = std::move(held_args_);
  held_args_.clear();
  const Result r = Cancelled(link_gen_) ? Result::kDone : RunStreamCommand(*c, args, held_data_);
  if (r == Result::kClose) c->CloseAfterReply();
  if (r != Result::kPending) c->Resume();  // the connection goes on with its next request
}

RequestHandler::Result Replica::RunStreamCommand(Connection& c,
                                                 std::span<const std::string_view> args,
                                                 std::string_view data) {
  // Counted when the command starts: every command before it has started, and a GETACK (which
  // waits for those run apart) answers the offset of the commands before it.
  const int64_t before = offset_.load(std::memory_order_relaxed);
  cur_start_ = before;
  if (deps_.feed) deps_.feed(before, data);  // our own replicas' stream: the bytes as they came
  offset_.store(before + static_cast<int64_t>(data.size()), std::memory_order_relaxed);
  if (EqualsNoCase(args[0], "replconf")) {
    if (args.size() >= 2 && EqualsNoCase(args[1], "getack"))
      c.output()->append(RespArray({"REPLCONF", "ACK", std::to_string(before)}));
    return Result::kDone;  // other REPLCONF subcommands from a master need nothing of a replica
  }
  auto* cl = static_cast<ClientState*>(c.user_data);
  const uint64_t errors = cl->writer.errors();
  const Result r = deps_.server->OnRequest(c, args);
  // A command refused at once (unknown to Lavik, wrong arity...) is logged: the master does not
  // see the error, and the replica's data may now differ. (Those run apart are logged by
  // ApartEnd; errors of those run one at a time on another worker are not seen here.)
  if (r == Result::kDone && cl->writer.errors() != errors) LogStreamError(args[0]);
  return r;
}

void Replica::OnClose(Connection& c) {
  link_ = nullptr;
  if (held_ == &c) {
    // A command HoldStream held is dropped (never counted: the next PSYNC asks for it again);
    // the connection, pending for it, is resumed so it can be freed (once this returns).
    held_ = nullptr;
    held_args_.clear();
    struct ResumeItem : MailboxItem {
      Connection* c;
    };
    auto* item = new ResumeItem();
    item->c = &c;
    item->run = [](MailboxItem* m) {
      auto* it = static_cast<ResumeItem*>(m);
      it->c->Resume();
      delete it;
    };
    c.worker()->Post(item);
  }
  if (auto* cl = static_cast<ClientState*>(c.user_data); cl != nullptr) stream_db_ = cl->db;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kConnected) SetStateLocked(State::kConnect);
    down_since_s_ = NowMs() / 1000;
  }
  LogNotice("Connection with master lost.");
  deps_.server->OnClose(c);  // frees the client now, or when its running command finishes
}

void Replica::WriteRole(ReplyWriter& w) {
  std::unique_lock<std::mutex> lock(mu_);
  if (host_.empty()) {
    lock.unlock();  // the Master's lock is taken after ours elsewhere: never inside it
    w.Array(3);
    w.Bulk("master");
    w.Integer(offset_.load());
    if (deps_.write_replicas) {
      deps_.write_replicas(w);
    } else {
      w.Array(0);
    }
    return;
  }
  w.Array(5);
  w.Bulk("slave");
  w.Bulk(host_);
  w.Integer(port_);
  switch (state_) {
    case State::kNone:
    case State::kConnect:
      w.Bulk("connect");
      break;
    case State::kConnecting:
      w.Bulk("connecting");
      break;
    case State::kHandshake:
      w.Bulk("handshake");
      break;
    case State::kSync:
      w.Bulk("sync");
      break;
    case State::kConnected:
      w.Bulk("connected");
      break;
  }
  w.Integer(state_ == State::kConnected ? offset_.load() : -1);
}

void Replica::AppendInfo(std::string* out) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now_s = NowMs() / 1000;
  if (host_.empty()) {
    Field(out, "role", "master");
  } else {
    const bool up = state_ == State::kConnected;
    Field(out, "role", "slave");
    Field(out, "master_host", host_);
    Field(out, "master_port", port_);
    Field(out, "master_link_status", up ? "up" : "down");
    Field(out, "master_last_io_seconds_ago", up ? now_s - last_io_ms_.load() / 1000 : -1);
    Field(out, "master_sync_in_progress", state_ == State::kSync ? 1 : 0);
    Field(out, "slave_read_repl_offset", offset_.load());
    Field(out, "slave_repl_offset", offset_.load());
    if (state_ == State::kSync) {
      // As Redis 7.0, whose transfer size is 0 for the $EOF form (so its perc is 0 and the
      // bytes left negative).
      const int64_t total = sync_total_ < 0 ? 0 : sync_total_;
      Field(out, "master_sync_total_bytes", total);
      Field(out, "master_sync_read_bytes", sync_read_.load());
      Field(out, "master_sync_left_bytes", total - sync_read_);
      Field(out, "master_sync_perc",
            Percent(total == 0 ? 0.0 : static_cast<double>(sync_read_.load()) / total * 100));
      Field(out, "master_sync_last_io_seconds_ago", now_s - last_io_ms_.load() / 1000);
    }
    if (!up)
      Field(out, "master_link_down_since_seconds", down_since_s_ ? now_s - down_since_s_ : -1);
    Field(out, "slave_priority", deps_.config_value("replica-priority"));
    Field(out, "slave_read_only", ro_config_.load() ? 1 : 0);
    Field(out, "replica_announced", deps_.config_value("replica-announced") == "no" ? 0 : 1);
  }
  if (deps_.info_slaves) {
    lock.unlock();  // the Master's lock is never taken inside ours
    deps_.info_slaves(out);
    lock.lock();
  } else {
    Field(out, "connected_slaves", 0);
    Field(out, "master_failover_state", "no-failover");
  }
  Field(out, "master_replid", replid_);
  Field(out, "master_replid2", replid2_);
  Field(out, "master_repl_offset", offset_.load());
  Field(out, "second_repl_offset", second_offset_);
  if (deps_.info_backlog) {
    lock.unlock();
    deps_.info_backlog(out);
  } else {
    Field(out, "repl_backlog_active", 0);
    Field(out, "repl_backlog_size", 1048576);
    Field(out, "repl_backlog_first_byte_offset", 0);
    Field(out, "repl_backlog_histlen", 0);
  }
}

void Replica::AppendLoadingInfo(std::string* out) {
  if (!loading_.load()) return;
  // As Redis 7.0's INFO persistence while loading.
  const int64_t total = load_total_.load();
  const auto loaded = static_cast<int64_t>(load_progress_.loaded_bytes.load());
  const int64_t start = load_start_s_.load();
  const int64_t elapsed = NowMs() / 1000 - start;
  const int64_t remaining = total != 0 ? total - loaded : 1;
  Field(out, "loading_start_time", start);
  Field(out, "loading_total_bytes", total);
  Field(out, "loading_rdb_used_mem", static_cast<int64_t>(load_progress_.rdb_used_mem.load()));
  Field(out, "loading_loaded_bytes", loaded);
  Field(out, "loading_loaded_perc",
        Percent(total != 0 ? static_cast<double>(loaded) / static_cast<double>(total) * 100 : 0));
  Field(out, "loading_eta_seconds", elapsed == 0 ? 1 : elapsed * remaining / (loaded + 1));
}

int64_t Replica::DataAgeMs() const {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = NowMs();
  if (state_ == State::kConnected) return now - last_io_ms_.load();
  if (down_since_s_ == 0) return INT64_MAX / 2;
  return now - down_since_s_ * 1000;
}

}  // namespace lavik
