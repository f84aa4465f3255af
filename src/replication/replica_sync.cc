// The replication thread's full sync: the payload after +FULLRESYNC, loaded from the socket or
// received into a file first (repl-diskless-load), and the flush before it. replica.cc has the
// thread's connect, handshake and partial resync; replica_link.cc the link's commands and INFO.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command_table.h"
#include "commands/shards.h"
#include "rdb/file_format.h"
#include "replication/rdb_file.h"
#include "replication/rdb_stream.h"
#include "replication/replica.h"
#include "replication/socket_source.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr size_t kEofMarkLen = 40;

// A command run on a worker by a thread that waits for it (the flush before a full sync).
struct BlockingCommand : MailboxItem {
  Context ctx;
  std::string reply;
  ReplyWriter writer{&reply, 2};
  std::vector<std::string_view> argv;
  ShardSet* shards = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;

  static void Done(void* arg) {
    auto* self = static_cast<BlockingCommand*>(arg);
    std::lock_guard<std::mutex> lock(self->mu);
    self->done = true;
    self->cv.notify_all();
  }
  static void RunHere(MailboxItem* item) {
    auto* self = static_cast<BlockingCommand*>(item);
    self->ctx.store = &self->shards->local().store;
    self->ctx.now_ms = NowMs();
    Task t = self->ctx.spec->handler(self->ctx);
    if (t.Start(&Done, self)) Done(self);
  }
};

// Keys stored across every database, each shard's count read on its own worker.
uint64_t StoredKeys(ShardSet& shards) {
  struct Count : MailboxItem {
    Store* store = nullptr;
    std::mutex* mu = nullptr;
    std::condition_variable* cv = nullptr;
    int* left = nullptr;
    uint64_t keys = 0;
  };
  std::mutex mu;
  std::condition_variable cv;
  int left = shards.size();
  std::vector<Count> counts(static_cast<size_t>(shards.size()));
  for (int s = 0; s < shards.size(); ++s) {
    Count& c = counts[static_cast<size_t>(s)];
    c.store = &shards.at(s).store;
    c.mu = &mu;
    c.cv = &cv;
    c.left = &left;
    c.run = [](MailboxItem* m) {
      auto* self = static_cast<Count*>(m);
      self->keys = self->store->size();
      std::lock_guard<std::mutex> lock(*self->mu);
      if (--*self->left == 0) self->cv->notify_all();
    };
    shards.at(s).worker->Post(&c);
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return left == 0; });
  uint64_t keys = 0;
  for (const Count& c : counts) keys += c.keys;
  return keys;
}

}  // namespace

bool Replica::FlushAll() {
  // The data stop following the old history here (the FLUSHALL voids the cut as well).
  VoidCuts();
  const CommandSpec* spec = deps_.services->commands->FindOriginal("flushall");
  if (spec == nullptr) return false;
  BlockingCommand cmd;
  cmd.argv = {"FLUSHALL"};
  cmd.shards = &deps_.shards();
  cmd.ctx.args = cmd.argv;
  cmd.ctx.reply = &cmd.writer;
  cmd.ctx.shards = &deps_.shards();
  cmd.ctx.services = deps_.services;
  cmd.ctx.spec = spec;
  cmd.run = &BlockingCommand::RunHere;
  deps_.shards().at(0).worker->Post(&cmd);
  std::unique_lock<std::mutex> lock(cmd.mu);
  cmd.cv.wait(lock, [&] { return cmd.done; });
  if (cmd.reply.rfind("+OK", 0) == 0) return true;
  LogWarning("Flushing the old data before the sync failed: " + cmd.reply);
  return false;
}

bool Replica::FullSync(SocketSource& src, const std::string& reply) {
  // +FULLRESYNC <replid> <offset>
  const size_t sp1 = reply.find(' '), sp2 = reply.find(' ', sp1 + 1);
  int64_t master_offset = 0;
  if (sp1 == std::string::npos || sp2 != sp1 + 41 ||
      !ParseInt64(std::string_view(reply).substr(sp2 + 1), &master_offset)) {
    LogWarning("Master replied with wrong +FULLRESYNC syntax: " + reply);
    return false;
  }
  const std::string master_id = reply.substr(sp1 + 1, 40);
  LogNotice("Full resync from master: " + master_id + ":" + std::to_string(master_offset));
  SetState(State::kSync);
  std::string header;
  do {
    if (!src.ReadLine(&header)) {
      LogWarning("I/O error reading bulk count from MASTER: " + src.error());
      return false;
    }
  } while (header.empty());
  if (header[0] == '-') {
    LogWarning("MASTER aborted replication with an error: " + header.substr(1));
    return false;
  }
  std::string eof_mark;
  int64_t total = -1;
  if (header.rfind("$EOF:", 0) == 0 && header.size() == 5 + kEofMarkLen) {
    eof_mark = header.substr(5);
  } else if (header[0] != '$' || !ParseInt64(std::string_view(header).substr(1), &total) ||
             total < 0) {
    LogWarning("Bad protocol from MASTER, the first byte is not '$' (we received '" + header +
               "'), are you sure the host and port are right?");
    return false;
  }
  {
    // As Redis drops its cached master at +FULLRESYNC: the old history cannot be continued.
    std::lock_guard<std::mutex> lock(mu_);
    sync_total_ = total;
    synced_ = false;
  }
  sync_read_ = 0;
  const bool to_parser = LoadsFromSocket();
  LogNotice("MASTER <-> REPLICA sync: receiving " +
            (total >= 0 ? std::to_string(total) + " bytes from master"
                        : std::string("streamed RDB from master with EOF")) +
            (to_parser ? " to parser" : " to disk"));
  RdbLoadReport report;
  bool loaded;
  {
    struct LoadingFlag {  // set by BeginLoading, at the flush
      std::atomic<bool>& flag;
      ~LoadingFlag() { flag = false; }
    } loading{loading_};
    loaded = to_parser ? LoadFromSocket(src, total, eof_mark, &report)
                       : LoadThroughDisk(src, total, eof_mark, &report);
  }
  if (!loaded) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replid_ = master_id;
    replid2_.assign(40, '0');
    second_offset_ = -1;
    offset_ = master_offset;
    // As Redis's replicationCreateMasterClient: the stream continues in the RDB's
    // repl-stream-db (a chained master's stream starts mid-way, in its master's database; a
    // master's own starts with a SELECT anyway).
    stream_db_ = report.repl_stream_db >= 0 ? report.repl_stream_db : 0;
    synced_ = true;
  }
  // After a diskless payload the master starts the stream only once the replica ACKs, so ACK at
  // once, as Redis does, rather than at the next one-second ACK.
  if (!eof_mark.empty()) {
    src.WriteAll(RespArray({"REPLCONF", "ACK", std::to_string(master_offset)}));
  }
  LogNotice("MASTER <-> REPLICA sync: Finished with success (" + std::to_string(report.keys) +
            " keys, " + std::to_string(report.expired) + " expired, in " +
            std::to_string(report.elapsed_ms) + " ms)");
  return true;
}

bool Replica::LoadsFromSocket() {
  return deps_.config_value("repl-diskless-load") == "on-empty-db" &&
         StoredKeys(deps_.shards()) == 0;
}

// Redis empties the dataset before loading, and so does Lavik: a load from the socket that fails
// half-way leaves a partial dataset, and the next sync flushes again.
bool Replica::LoadFromSocket(SocketSource& src, int64_t total, const std::string& eof_mark,
                             RdbLoadReport* report) {
  LogNotice("MASTER <-> REPLICA sync: Flushing old data");
  BeginLoading(total >= 0 ? total : 0);  // as Redis: the $EOF form's size is 0
  if (!FlushAll()) return false;
  LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
  const uint64_t start = src.consumed();
  rdb::FileReader reader(src, kMaxDatabases);
  std::string error;
  bool ok = reader.ReadHeader();
  if (!ok) error = reader.error();
  if (ok) ok = StoreRdbStream(deps_.shards(), reader, true, report, &error, &load_progress_);
  if (ok && !eof_mark.empty()) {
    std::string mark;
    ok = src.ReadAppend(kEofMarkLen, &mark) && mark == eof_mark;
    if (!ok)
      error = "the $EOF mark does not follow the RDB at offset " + std::to_string(reader.offset());
  } else if (ok && src.consumed() - start != static_cast<uint64_t>(total)) {
    ok = false;
    error = "the RDB ends at offset " + std::to_string(src.consumed() - start) + " of " +
            std::to_string(total) + " payload bytes";
  }
  sync_read_ = static_cast<int64_t>(src.consumed() - start);
  if (!ok) {
    if (!src.error().empty()) error += " (" + src.error() + ")";
    LogWarning("Failed trying to load the MASTER synchronization DB: " + error +
               "; the replica retries the sync");
  }
  return ok;
}

bool Replica::LoadThroughDisk(SocketSource& src, int64_t total, const std::string& eof_mark,
                              RdbLoadReport* report) {
  const std::string dir = deps_.config_value("dir");
  const std::string tmp = RdbFilePath(
      dir, "temp-" + std::to_string(NowMs() / 1000) + "." + std::to_string(getpid()) + ".rdb");
  std::string error;
  if (!ReceiveFile(src, total, eof_mark, tmp, &error)) {
    unlink(tmp.c_str());
    LogWarning("I/O error trying to sync with MASTER: " + error +
               "; the old data stay, and the replica retries the sync");
    return false;
  }
  // The file is checked whole first, the old data still served, so a corrupt payload changes
  // nothing; the flush starts the -LOADING window.
  struct stat st {};
  const int64_t size = stat(tmp.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  const auto flush = [this, size] {
    LogNotice("MASTER <-> REPLICA sync: Flushing old data");
    BeginLoading(size);
    if (!FlushAll()) return false;
    LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
    return true;
  };
  if (!LoadRdbFile(deps_.shards(), tmp, report, &error, flush, &load_progress_)) {
    unlink(tmp.c_str());
    LogWarning("Failed trying to load the MASTER synchronization DB from disk: " + error +
               "; the replica retries the sync");
    return false;
  }
  // As Redis, the payload stays as dir/dbfilename (renamed once loaded, so a corrupt one never
  // replaces a good file); rdb-del-sync-files yes with no `save` point removes it instead.
  if (deps_.config_value("rdb-del-sync-files") == "yes" && deps_.config_value("save").empty()) {
    LogNotice(
        "Removing the RDB file obtained from the master. This replica has persistence "
        "disabled");
    unlink(tmp.c_str());
    return true;
  }
  const std::string target = RdbFilePath(dir, deps_.config_value("dbfilename"));
  if (rename(tmp.c_str(), target.c_str()) != 0) {
    LogWarning("Failed trying to rename the temp DB into " + target +
               " in MASTER <-> REPLICA synchronization: " + std::strerror(errno));
    unlink(tmp.c_str());
  }
  return true;
}

void Replica::BeginLoading(int64_t total_bytes) {
  load_progress_.loaded_bytes = 0;
  load_progress_.rdb_used_mem = 0;
  load_total_ = total_bytes;
  load_start_s_ = NowMs() / 1000;
  loading_ = true;
}

bool Replica::ReceiveFile(SocketSource& src, int64_t total, const std::string& eof_mark,
                          const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "Opening the temp file needed for MASTER <-> REPLICA synchronization: " +
             std::string(std::strerror(errno));
    return false;
  }
  constexpr size_t kPiece = 1 << 20;
  uint64_t written = 0;
  std::string tail;  // the $EOF form: the last bytes received, to find the mark at the end
  bool done = total == 0;
  while (!done) {
    const size_t want =
        total >= 0 ? std::min<uint64_t>(kPiece, static_cast<uint64_t>(total) - written) : kPiece;
    const std::string_view got = src.ReadSome(want);
    if (got.empty()) {
      *error = "connection lost after " + std::to_string(written) + " bytes" +
               (src.error().empty() ? std::string() : " (" + src.error() + ")");
      close(fd);
      return false;
    }
    last_io_ms_ = NowMs();
    for (size_t at = 0; at < got.size();) {
      const ssize_t n = write(fd, got.data() + at, got.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error =
            "Write error or short write writing to the DB dump file needed for MASTER <-> "
            "REPLICA synchronization: " +
            std::string(std::strerror(errno));
        close(fd);
        return false;
      }
      at += static_cast<size_t>(n);
    }
    written += got.size();
    sync_read_ = static_cast<int64_t>(written);
    if (total >= 0) {
      done = written == static_cast<uint64_t>(total);
    } else {
      // As Redis: the master sends nothing after the mark until we ACK, so the mark ends what
      // has arrived.
      if (got.size() >= kEofMarkLen) {
        tail.assign(got.substr(got.size() - kEofMarkLen));
      } else {
        tail.append(got);
        if (tail.size() > kEofMarkLen) tail.erase(0, tail.size() - kEofMarkLen);
      }
      done = tail == eof_mark;
    }
  }
  bool ok = true;
  if (!eof_mark.empty() && ftruncate(fd, static_cast<off_t>(written - kEofMarkLen)) != 0)
    ok = false;
  if (ok && fsync(fd) != 0) ok = false;
  if (!ok)
    *error = "Failed trying to sync the temp DB to disk: " + std::string(std::strerror(errno));
  close(fd);
  return ok;
}

}  // namespace lavik
