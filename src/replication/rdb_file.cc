#include "replication/rdb_file.h"

#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "rdb/file_format.h"
#include "rdb/file_source.h"
#include "replication/rdb_stream.h"
#include "scripting/function_registry.h"

namespace lavik {
namespace {

// The first failure of `reader` or its source, worded for the log.
std::string ReadError(const rdb::FileReader& reader, const rdb::FileSource& src) {
  std::string e = reader.error();
  if (!src.error().empty()) e += " (" + src.error() + ")";
  return e;
}

// The replication fields among the file's AUX fields (Redis 7.0's rdbLoadRio: repl-id must
// be 40 characters; the others integers).
void ReadReplFields(const rdb::FileReader& reader, RdbLoadReport* report) {
  bool id = false, off = false, db = false;
  for (const auto& [name, value] : reader.aux()) {
    int64_t n = 0;
    if (name == "repl-id" && value.size() == 40) {
      report->repl_id = value;
      id = true;
    } else if (name == "repl-offset" && ParseInt64(value, &n)) {
      report->repl_offset = n;
      off = n != -1;
    } else if (name == "repl-stream-db" && ParseInt64(value, &n)) {
      report->repl_stream_db = static_cast<int>(n);
      db = n >= 0 && n < kMaxDatabases;
    }
  }
  report->has_repl = id && off && db;
}

// Pass 1: every byte checked, nothing stored.
bool Validate(const std::string& path, RdbLoadReport* report, std::string* error) {
  rdb::FileSource src(path);
  if (!src.ok()) {
    *error = "Cannot open the RDB file " + path + ": " + src.error();
    return false;
  }
  rdb::FileReader reader(src, kMaxDatabases);
  if (!reader.ReadHeader()) {
    *error = ReadError(reader, src);
    return false;
  }
  rdb::FileReader::Entry e;
  for (;;) {
    const uint64_t at = reader.offset();
    switch (reader.Next(&e)) {
      case rdb::FileReader::Item::kKey:
        continue;
      case rdb::FileReader::Item::kFunction: {
        std::string name;
        std::vector<FunctionInfo> functions;
        std::string err = ReadLibraryMetadata(e.code, &name);
        if (err.empty()) err = ReadLibrary(e.code, &functions);
        if (!err.empty()) {
          *error = "Bad function library (" + err + ") at offset " + std::to_string(at);
          return false;
        }
        continue;
      }
      case rdb::FileReader::Item::kEof:
        ReadReplFields(reader, report);
        return true;
      case rdb::FileReader::Item::kError:
        *error = ReadError(reader, src);
        return false;
    }
  }
}

}  // namespace

bool LoadRdbFile(ShardSet& shards, const std::string& path, RdbLoadReport* report,
                 std::string* error, const std::function<bool()>& before_store) {
  const int64_t start = NowMs();
  if (!Validate(path, report, error)) return false;
  if (before_store && !before_store()) {
    *error = "the old data could not be flushed";
    return false;
  }
  rdb::FileSource src(path);
  rdb::FileReader reader(src, kMaxDatabases);
  if (!src.ok() || !reader.ReadHeader()) {
    *error = "Cannot reread the RDB file " + path + ": " + ReadError(reader, src);
    return false;
  }
  if (!StoreRdbStream(shards, reader, true, report, error)) {
    if (!src.error().empty()) *error += " (" + src.error() + ")";
    return false;
  }
  report->elapsed_ms = NowMs() - start;
  return true;
}

std::string RdbFilePath(std::string_view dir, std::string_view dbfilename) {
  return std::string(dir.empty() ? "." : dir) + "/" + std::string(dbfilename);
}

}  // namespace lavik
