#include "replication/rdb_file.h"

#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
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
                 std::string* error, const std::function<bool()>& before_store,
                 RdbLoadProgress* progress) {
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
  if (!StoreRdbStream(shards, reader, true, report, error, progress)) {
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
