// Whole small files replaced atomically and durably (the function libraries' file; the same
// steps config_rewrite.cc and ACL SAVE take): a temp file next to the target, written, fsynced,
// renamed over it, and the directory fsynced, so a crash at any point leaves the old content or
// the new one, and a true return means the new content survives a power loss.
//
// Thread safety: pure system calls; concurrent writers of one path must be serialised by the
// caller (they share the temp name).
#pragma once

#include <string>
#include <string_view>

namespace lavik {

// Replaces `path` with `data`. False with *error ("<what>: <strerror>") on any failure; the old
// file is then untouched.
bool WriteFileDurably(const std::string& path, std::string_view data, std::string* error);

// Rewrites `path` in place, without fsync, as Redis saves nodes.conf when no epoch changed: the
// new content is written over the old one in one write (padded with '\n' to the old length, so the
// file is never shorter than either version meanwhile), then truncated to its length. A process
// crash cannot interrupt the write half-way; after a power loss the file may hold the old content,
// the new one, or a mix. For state the peers can give back (nodes.conf's slot table, which the
// cluster's epochs arbitrate); no temp file is created, which is most of a save's cost.
bool WriteFileInPlace(const std::string& path, std::string_view data, std::string* error);

// Reads the whole file into *data. *exists is false (and true returned) if there is none.
bool ReadWholeFile(const std::string& path, std::string* data, bool* exists, std::string* error);

}  // namespace lavik
