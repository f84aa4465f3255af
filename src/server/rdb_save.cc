#include "server/rdb_save.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "commands/key_copy.h"
#include "commands/rdb_limits.h"
#include "commands/shards.h"
#include "rdb/file_format.h"
#include "runtime/shard_hop.h"
#include "scripting/function_registry.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr size_t kSliceEntries = 128;          // index entries per slice of the walk
constexpr size_t kWriteBytes = 1 << 20;        // output is written in pieces of about this size
constexpr uint64_t kWritebackBytes = 8 << 20;  // start the kernel's write-back this often

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
  std::string dir;
  rdb::EncodeLimits limits = LiveEncodeLimits();
  std::string error;  // the first failure

  bool Fail(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }
  bool Drain(bool all) {
    if (writer.pending() >= kWriteBytes || (all && writer.pending() > 0)) {
      if (!out.Write(writer.Take())) return Fail("Write error saving DB on disk: " + out.error());
    }
    return true;
  }
};

// One slice of a shard's walk of physical database `db` (on the shard's worker): up to
// kSliceEntries of its index entries from *cursor; each live key is read whole (a chunked
// collection too) and framed.
Task SaveSlice(SaveRun* run, Store& st, int db, uint64_t* cursor) {
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  *cursor = st.ScanIndex(*cursor, kSliceEntries, db,
                         [&](uint64_t fp, uint64_t l) { entries.emplace_back(fp, l); });
  const int64_t now = NowMs();
  std::string object;
  for (const auto& [fp, l] : entries) {
    if (st.ExpiredFp(fp, now)) continue;
    ReadResult r = co_await st.ReadAt(fp, l);
    if (!r.ok()) {
      // kNotFound: the key went away since the slice was taken.
      if (r.status == ReadResult::Status::kError) run->Fail(r.error);
      if (!run->error.empty()) co_return;
      continue;
    }
    const std::string key(r.key);
    KeyCopy copy;
    std::string error;
    if (!co_await ReadKeyCopy(st, key, now, &copy, &error)) {
      run->Fail(error);
      co_return;
    }
    if (!copy.exists) continue;
    object.clear();
    const std::string_view client_key = ClientKey(key);
    if (!rdb::EncodeObject(copy.type, copy.record, run->limits, &object)) {
      run->Fail("the value of key '" + std::string(client_key) + "' is damaged");
      co_return;
    }
    run->writer.Key(client_key, copy.expire_ms, object);
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

}  // namespace

std::string RdbFilePath(std::string_view dir, std::string_view dbfilename) {
  return std::string(dir.empty() ? "." : dir) + "/" + std::string(dbfilename);
}

Task SaveRdbFile(ShardSet& shards, std::string dir, std::string dbfilename, bool* ok,
                 std::string temp_name) {
  *ok = false;
  SaveRun run;
  run.dir = dir.empty() ? "." : dir;
  const std::string target = RdbFilePath(dir, dbfilename);
  const std::string temp =
      run.dir + "/" + (temp_name.empty() ? "temp-" + std::to_string(getpid()) + ".rdb" : temp_name);
  if (!run.out.Open(temp)) {
    LogWarning("Failed opening the temp RDB file " + temp + " for saving: " + run.out.error());
    co_return;
  }
  run.writer.Aux("redis-ver", "7.0.15");
  run.writer.Aux("redis-bits", "64");
  run.writer.Aux("ctime", std::to_string(NowMs() / 1000));
  run.writer.Aux("used-mem", std::to_string(ResidentBytes()));
  run.writer.Aux("aof-base", "0");
  for (const FunctionLibrary& lib : FunctionRegistry::Get().List()) run.writer.Function(lib.code);
  // Database by database, in the client's numbering: SELECTDB + RESIZEDB (the counts now; Redis's
  // loader takes them only as a hint), then each shard's keys of its physical database.
  for (int d = 0; d < DbMap::Count() && run.error.empty(); ++d) {
    const int pdb = DbMap::Physical(d);
    uint64_t keys = 0, expires = 0;
    for (int w = 0; w < shards.size(); ++w) {
      co_await ShardHop(shards.at(w).worker, [&, w]() {
        const Store& st = shards.at(w).store;
        keys += st.db_size(pdb);
        expires += st.db_expires(pdb);
      });
    }
    if (keys == 0) continue;
    run.writer.SelectDb(static_cast<uint64_t>(d), keys, expires);
    for (int w = 0; w < shards.size() && run.error.empty(); ++w) {
      uint64_t cursor = 0;
      do {
        co_await ShardCall(shards.at(w).worker, [&, w]() -> Task {
          co_await SaveSlice(&run, shards.at(w).store, pdb, &cursor);
        });
        co_await YieldToLoop();  // also when the shard is this worker's own
      } while (cursor != 0 && run.error.empty());
    }
  }
  if (run.error.empty()) {
    run.writer.Finish();
    run.Drain(true);
  }
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

}  // namespace lavik
