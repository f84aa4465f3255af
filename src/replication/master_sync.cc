// Master: the full sync — when the next RDB starts and in which form (MaybeStartSave,
// SaveMayStart), where its stream starts (FixStreamStart, StartStream), and sending it: diskless
// from the walk's SyncStream (FeedStream, SendStream), or from the file the walk wrote
// (SaveDone, SendRdbFile). doc/replication.md, "The handshake and the sync" and "Diskless sync".
// master.cc has the backlog, the merge and the replicas' I/O loop.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/log.h"
#include "replication/master.h"
#include "replication/rdb_file.h"
#include "replication/replica.h"
#include "replication/sync_stream.h"

namespace lavik {

void Master::MaybeStartSave() {
  // The first RDB waits a moment after propagation turned on: a write that started before it
  // (and so is not propagated) has finished by then, and the snapshot holds it.
  bool diskless = false;
  if (save_ != SaveState::kWaitMerge || next_seq_ <= save_seq_ || NowMs() - activated_ms_ < 50 ||
      !SaveMayStart(NowMs(), &diskless)) {
    return;
  }
  save_result_ = -1;
  snap_seq_ = -1;
  save_diskless_ = diskless;
  stream_started_ = false;
  if (diskless) {
    save_path_.clear();
    stream_ = std::make_shared<SyncStream>(NewReplId(), [] { WakeThunk(); });
    LogNotice("Starting BGSAVE for SYNC with target: replicas sockets");
  } else {
    // As Redis's BGSAVE for SYNC: the RDB becomes dir/dbfilename (through a temp file).
    save_path_ = RdbFilePath(deps_.rdb_dir(), deps_.config_value("dbfilename"));
    LogNotice("Starting BGSAVE for SYNC with target: disk");
  }
  // A master: the stream starts right after the write numbered as the snapshot's sequence
  // number, which the workers report once it is open (merged_at_: each entry's offset until
  // then). Chained (our master's stream feeds the backlog, its commands take no number): at the
  // offset our replica had applied at the snapshot's instant (merged_at_ keeps this moment's in
  // the backlog meanwhile).
  save_ = SaveState::kStarting;
  chained_save_ = deps_.replica->following();
  merged_at_.clear();
  merged_at_.emplace_back(next_seq_ - 1, end_);
  cur_db_ = -1;
  deps_.save_rdb(
      save_path_, diskless ? stream_ : nullptr,
      [this](uint64_t seq, int64_t offset) {
        snap_offset_ = offset;
        snap_seq_ = static_cast<int64_t>(seq);
        Wake();
      },
      [this](bool ok) {
        save_result_ = ok ? 1 : 0;
        Wake();
      });
}

void Master::FixStreamStart() {
  const int64_t seq = snap_seq_.load();
  if (seq < 0) return;  // not open yet
  if (chained_save_) {
    // Every command of our master's stream up to this offset is in the snapshot (the link was
    // held while it opened, so none was half-run), and fed to the backlog before it.
    int64_t at = snap_offset_.load();
    if (at < merged_at_.front().second || at > end_) {
      LogWarning(
          "BGSAVE for SYNC: the snapshot's stream offset is not known; the stream starts "
          "where the save was asked for");
      at = merged_at_.front().second;
    }
    merged_at_.clear();
    StartStream(at);
    return;
  }
  if (static_cast<uint64_t>(seq) >= next_seq_) return;  // not merged yet
  // Every write numbered up to seq is in the snapshot and in the stream before this offset;
  // every later one in the stream after it, and not in the snapshot.
  int64_t at = -1;
  for (const auto& [n, off] : merged_at_) {
    if (n == static_cast<uint64_t>(seq)) at = off;
  }
  merged_at_.clear();
  if (at < 0) {
    // Cannot happen (the snapshot's number is at least the last merged one at the request).
    LogWarning("BGSAVE for SYNC: the snapshot's stream position was not recorded");
    at = end_;
  }
  StartStream(at);
}

void Master::StartStream(int64_t offset) {
  save_offset_ = offset;
  cur_db_ = -1;  // as Redis: the next command is preceded by a SELECT
  save_ = SaveState::kRunning;
  const Replica::History h = deps_.replica->history();
  int readers = 0;
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kWaitSave || s->announced) continue;
    if (save_diskless_ && !s->req.capa_eof) continue;  // it cannot read $EOF: it waits
    s->announced = true;
    s->sent = save_offset_;
    if (s->req.psync) {
      s->out += "+FULLRESYNC " + h.replid + " " + std::to_string(save_offset_) + "\r\n";
    }
    if (save_diskless_) {
      // The RDB goes out as the walk makes it: "$EOF:<mark>", the bytes, then the mark.
      s->out += "$EOF:" + stream_->mark() + "\r\n";
      s->state = Slave::State::kSendRdb;
      s->stream = stream_;
      s->stream_sent = 0;
      s->mark_queued = false;
      ++readers;
    }
  }
  if (save_diskless_) {
    stream_started_ = true;
    if (readers == 0) stream_->Abandon();  // they all left while it was being started
  }
}

bool Master::SaveMayStart(int64_t now_ms, bool* diskless) {
  int waiting = 0;
  bool all_eof = true;
  int64_t oldest = now_ms;
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kWaitSave || s->announced) continue;
    ++waiting;
    all_eof = all_eof && s->req.capa_eof;
    oldest = std::min(oldest, s->wait_since_ms);
  }
  // Redis's rule: diskless when configured and every replica waiting can read it (else to disk,
  // at once); a diskless one waits repl-diskless-sync-delay seconds for more replicas to join,
  // or until repl-diskless-sync-max-replicas (> 0) are waiting.
  *diskless = waiting > 0 && all_eof && deps_.config_value("repl-diskless-sync") == "yes";
  if (!*diskless) return true;
  const int64_t max_replicas = ConfigInt("repl-diskless-sync-max-replicas", 0);
  if (max_replicas > 0 && waiting >= max_replicas) return true;
  return now_ms - oldest >= ConfigInt("repl-diskless-sync-delay", 5) * 1000;
}

void Master::FeedStream() {
  if (stream_ == nullptr || !stream_started_) return;
  bool any = false;
  uint64_t low = UINT64_MAX;
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kSendRdb || s->stream != stream_) continue;
    any = true;
    low = std::min(low, s->stream_sent);
  }
  if (any) {
    stream_->Release(low);
    return;
  }
  // Nobody reads it any more (all sent, or all gone): a walk still running stops.
  uint64_t end = 0;
  if (stream_->state(&end) < 0) {
    LogWarning("Diskless rdb transfer, last replica dropped, killing fork child.");
    stream_->Abandon();
  }
  stream_.reset();
}

bool Master::SendStream(Slave& s) {
  for (;;) {
    if (!s.out.empty()) {  // the end mark
      size_t n = 0;
      const bool ok = SendSome(s, s.out, &n);
      s.out.erase(0, n);
      return ok && s.out.empty();
    }
    uint64_t end = 0;
    const int st = s.stream->state(&end);
    if (s.stream_sent < end) {
      uint64_t start = 0;
      const std::shared_ptr<const std::string> piece = s.stream->PieceAt(s.stream_sent, &start);
      if (piece == nullptr) {
        Drop(s, "the diskless RDB stream was abandoned");
        return false;
      }
      size_t n = 0;
      const bool ok = SendSome(
          s, std::string_view(*piece).substr(static_cast<size_t>(s.stream_sent - start)), &n);
      s.stream_sent += n;
      if (!ok || s.want_out) return false;
      continue;
    }
    if (st < 0) return false;  // the walk has not made more yet
    if (st == 0) {
      Drop(s, "Diskless BGSAVE failed");
      return false;
    }
    if (s.mark_queued) return true;
    s.mark_queued = true;
    s.out = s.stream->mark();
  }
}

void Master::SaveDone(bool ok) {
  save_ = SaveState::kNone;
  if (save_diskless_) {
    // Its replicas have been reading the stream all along; each ends with it (SendStream).
    save_diskless_ = false;
    if (!ok) LogWarning("Diskless BGSAVE for SYNC failed");
    QueueNextSave();
    return;
  }
  int fd = -1;
  uint64_t len = 0;
  if (ok) {
    fd = open(save_path_.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) == 0) len = static_cast<uint64_t>(st.st_size);
  }
  // It stays as dump.rdb, as Redis leaves it, unless rdb-del-sync-files asks otherwise with no
  // persistence configured (Redis's removeRDBUsedToSyncReplicas; the replicas read it through
  // their own descriptors).
  if (ok && deps_.config_value("rdb-del-sync-files") == "yes" &&
      deps_.config_value("save").empty()) {
    unlink(save_path_.c_str());
    LogNotice("Removing the RDB file used to feed replicas in a persistence-less instance");
  }
  if (fd < 0) {
    LogWarning("BGSAVE for SYNC failed: the replicas waiting for it are dropped");
  } else {
    LogNotice("Background RDB transfer started (" + std::to_string(len) + " bytes)");
  }
  for (auto& s : slaves_) {
    if (s->state != Slave::State::kWaitSave || !s->announced) continue;
    if (fd < 0) {
      Drop(*s, "BGSAVE failed");
      continue;
    }
    s->rdb_fd = dup(fd);
    if (s->rdb_fd < 0) {
      Drop(*s, "can't read the RDB file");
      continue;
    }
    s->rdb_len = len;
    s->rdb_sent = 0;
    s->chunk.clear();
    s->chunk_at = 0;
    s->out += "$" + std::to_string(len) + "\r\n";
    s->state = Slave::State::kSendRdb;
  }
  if (fd >= 0) close(fd);
  QueueNextSave();
}

void Master::QueueNextSave() {
  // Replicas that came while it ran, too late to share it, get the next one.
  for (auto& s : slaves_) {
    if (s->state == Slave::State::kWaitSave && !s->announced) {
      save_ = SaveState::kWaitMerge;
      save_seq_ = repl::LastSeq();
      return;
    }
  }
}

bool Master::SendRdbFile(Slave& s) {
  while (s.rdb_fd >= 0 && s.rdb_sent < s.rdb_len) {
    if (s.chunk_at >= s.chunk.size()) {
      s.chunk.resize(std::min<uint64_t>(kSendChunk, s.rdb_len - s.rdb_sent));
      const ssize_t r =
          pread(s.rdb_fd, s.chunk.data(), s.chunk.size(), static_cast<off_t>(s.rdb_sent));
      if (r <= 0) {
        Drop(s, "can't read the RDB file");
        return false;
      }
      s.chunk.resize(static_cast<size_t>(r));
      s.chunk_at = 0;
    }
    size_t n = 0;
    const bool ok = SendSome(s, std::string_view(s.chunk).substr(s.chunk_at), &n);
    s.chunk_at += n;
    s.rdb_sent += n;
    if (!ok || s.want_out) return false;
  }
  if (s.rdb_fd >= 0) close(s.rdb_fd);
  s.rdb_fd = -1;
  s.chunk = std::string();
  return true;
}

}  // namespace lavik
