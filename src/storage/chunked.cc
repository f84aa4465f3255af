#include "storage/chunked.h"

#include "base/slot.h"
#include "runtime/shard_hop.h"
#include "storage/store.h"

namespace lavik {

void ChunkCommit::NewRoot(std::string_view key) {
  root = ChunkRoot();
  root.slot = KeyHashSlot(key);
  root.id = NewChunkedId();
  root.next_number = 1;
}

ChunkRef ChunkCommit::AddChunk(uint64_t first, uint32_t count, std::string bytes) {
  const ChunkRef ref{first, root.TakeNumber(), count};
  written.emplace_back(ref.number, std::move(bytes));
  return ref;
}

// --- Coroutines over a Store ---

TaskOf<ChunkRead> ReadChunk(Store& st, uint16_t slot, uint64_t id, uint64_t number,
                            std::string* out, std::string* error) {
  const std::string key = ChunkKey(slot, id, number);
  ReadResult r = co_await st.Read(key, 0, false);
  if (r.status == ReadResult::Status::kError) {
    *error = r.error;
    co_return ChunkRead::kError;
  }
  if (!r.ok() || r.info.type != ValueType::kChunk) co_return ChunkRead::kMissing;
  out->assign(r.value.data(), r.value.size());
  co_return ChunkRead::kOk;
}

TaskOf<bool> CommitChunks(Store& st, std::string_view key, ValueType type, uint64_t expected,
                          const ChunkCommit& commit, int64_t expire_ms, bool* applied,
                          std::string* error) {
  *applied = false;
  const ChunkRoot& root = commit.root;
  size_t done = 0;
  for (const auto& [number, bytes] : commit.written) {
    WriteResult w =
        co_await st.Write(ChunkKey(root.slot, root.id, number), ValueType::kChunk, bytes, 0);
    if (!w.ok()) {
      *error = w.error;
      break;
    }
    ++done;
  }
  if (error->empty()) {
    WriteResult w =
        co_await st.WriteIf(key, expected, type, EncodeChunkRoot(root), expire_ms, applied);
    if (!w.ok()) *error = w.error;
  }
  // Drop what is no longer referenced: the replaced chunks if the root landed, else ours.
  bool existed;
  if (*applied) {
    for (uint64_t n : commit.replaced) {
      WriteResult w = co_await st.Delete(ChunkKey(root.slot, root.id, n), 0, &existed);
      if (!w.ok()) break;  // an orphan; see doc/collections.md
    }
  } else {
    for (size_t i = 0; i < done; ++i) {
      WriteResult w =
          co_await st.Delete(ChunkKey(root.slot, root.id, commit.written[i].first), 0, &existed);
      if (!w.ok()) break;
    }
  }
  co_return error->empty();
}

}  // namespace lavik
