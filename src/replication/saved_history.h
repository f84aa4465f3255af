// The replication history a replica keeps across a clean restart (doc/replication.md, "A
// restarted replica"): what Redis 7.0 keeps in its RDB's repl-id / repl-offset /
// repl-stream-db aux fields, Lavik keeps in a small file next to the data file, written at a
// clean shutdown once the data file is synced, and taken (read and removed) at the next start.
//
// It is used only if the data file is exactly as that shutdown left it: the file records the
// data file's identity (device, inode, size, modification time in ns) after the final sync,
// and the next start compares it before opening the data file. Taking it removes it first, so
// a run that then changes the data and dies (kill -9) leaves none behind: its restart does a
// full sync, as a Redis replica killed before writing its RDB does.
#pragma once

#include <cstdint>
#include <string>

namespace lavik {

struct SavedHistory {
  std::string replid;  // 40 hex characters: the master's history the data follow
  int64_t offset = 0;  // every byte of the stream up to this one is in the data
  int db = 0;          // the database the stream had selected (Redis's repl-stream-db)
};

// "<data_file>.repl".
std::string SavedHistoryPath(const std::string& data_file);

// Writes `h` for `data_file` (already synced): a temporary file, fsync, rename, directory fsync.
bool SaveHistory(const std::string& data_file, const SavedHistory& h, std::string* error);

// Reads and removes the saved history. True with *h if it exists, parses and `data_file` is
// unchanged since it was written; otherwise false with *why ("" when there was none).
bool TakeSavedHistory(const std::string& data_file, SavedHistory* h, std::string* why);

}  // namespace lavik
