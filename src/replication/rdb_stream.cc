#include "replication/rdb_stream.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/numbers.h"
#include "commands/key_copy.h"
#include "commands/shards.h"
#include "runtime/mailbox.h"
#include "scripting/function_registry.h"
#include "storage/store.h"

namespace lavik {
namespace {

constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kBatchKeys = 256;
constexpr size_t kMaxInFlightBytes = 32u << 20;

// What the loading thread and the workers share while keys are being stored.
struct LoadGate {
  std::mutex mu;
  std::condition_variable cv;
  size_t in_flight = 0;  // bytes posted and not yet written
  std::string error;     // the first failed write
};

struct LoadBatch : MailboxItem {
  Store* store = nullptr;
  LoadGate* gate = nullptr;
  std::vector<std::pair<std::string, KeyCopy>> keys;
  size_t bytes = 0;
};

Task WriteBatch(LoadBatch* b) {
  std::string error;
  for (const auto& [key, copy] : b->keys) {
    if (!co_await WriteKeyCopy(*b->store, key, copy, &error)) break;
  }
  {
    std::lock_guard<std::mutex> lock(b->gate->mu);
    if (!error.empty() && b->gate->error.empty()) b->gate->error = error;
    b->gate->in_flight -= b->bytes;
  }
  b->gate->cv.notify_all();
  delete b;
}

}  // namespace

// The replication fields among the RDB's AUX fields (Redis 7.0's rdbLoadRio: repl-id must
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
    } else if (name == "repl-stream-db" && ParseInt64(value, &n) && n >= 0 && n < kMaxDatabases) {
      report->repl_stream_db = static_cast<int>(n);
      db = true;
    }
  }
  report->has_repl = id && off && db;
}

bool StoreRdbStream(ShardSet& shards, rdb::FileReader& reader, bool replace_functions,
                    RdbLoadReport* report, std::string* error, RdbLoadProgress* progress) {
  const int64_t start = NowMs();
  LoadGate gate;
  std::vector<LoadBatch*> pending(static_cast<size_t>(shards.size()), nullptr);
  auto post = [&](int s) {
    LoadBatch* b = pending[s];
    pending[s] = nullptr;
    if (b == nullptr) return;
    {
      std::unique_lock<std::mutex> lock(gate.mu);
      gate.cv.wait(lock, [&] { return gate.in_flight < kMaxInFlightBytes; });
      gate.in_flight += b->bytes;
    }
    b->run = [](MailboxItem* m) {
      Task t = WriteBatch(static_cast<LoadBatch*>(m));
      t.Start(nullptr, nullptr);
    };
    shards.at(s).worker->Post(b);
  };
  auto failed = [&] {
    std::lock_guard<std::mutex> lock(gate.mu);
    return !gate.error.empty();
  };
  bool ok = true;
  rdb::FileReader::Entry e;
  bool used_mem_seen = false;
  for (bool more = true; more && ok;) {
    const rdb::FileReader::Item item = reader.Next(&e);
    if (progress != nullptr) {
      progress->loaded_bytes.store(reader.offset(), std::memory_order_relaxed);
      if (!used_mem_seen) {  // the AUX fields come before the first key
        used_mem_seen = true;
        for (const auto& [name, value] : reader.aux()) {
          int64_t n = 0;
          if (name == "used-mem" && ParseInt64(value, &n) && n >= 0)
            progress->rdb_used_mem.store(static_cast<uint64_t>(n), std::memory_order_relaxed);
        }
      }
    }
    switch (item) {
      case rdb::FileReader::Item::kKey: {
        if (e.expire_ms != 0 && e.expire_ms < NowMs()) {
          ++report->expired;
          break;
        }
        // The one place a key of an RDB becomes a stored key (base/db_key.h).
        std::string stored = DbKey(DbMap::Physical(static_cast<int>(e.db)), e.key);
        const int s = shards.ShardOf(stored);
        LoadBatch*& b = pending[s];
        if (b == nullptr) {
          b = new LoadBatch();
          b->store = &shards.at(s).store;
          b->gate = &gate;
        }
        KeyCopy copy;
        copy.exists = true;
        copy.type = e.type;
        copy.record = std::move(e.record);
        copy.expire_ms = e.expire_ms;
        b->bytes += stored.size() + copy.record.size();
        b->keys.emplace_back(std::move(stored), std::move(copy));
        ++report->keys;
        if (b->bytes >= kBatchBytes || b->keys.size() >= kBatchKeys) {
          post(s);
          if (failed()) ok = false;
        }
        break;
      }
      case rdb::FileReader::Item::kFunction: {
        std::string name;
        const std::string err = FunctionRegistry::Get().Load(e.code, replace_functions, &name);
        if (!err.empty()) {
          *error = "Cannot load a function library of the RDB: " + err;
          ok = false;
        }
        ++report->functions;
        break;
      }
      case rdb::FileReader::Item::kEof:
        ReadReplFields(reader, report);
        more = false;
        break;
      case rdb::FileReader::Item::kError:
        *error = reader.error();
        ok = false;
        break;
    }
  }
  // What was decoded before a bad item is still written: the keys it holds are whole.
  for (int s = 0; s < shards.size(); ++s) post(s);
  std::unique_lock<std::mutex> lock(gate.mu);
  gate.cv.wait(lock, [&] { return gate.in_flight == 0; });
  if (ok && !gate.error.empty()) {
    *error = "Writing the RDB's keys failed: " + gate.error;
    ok = false;
  }
  report->elapsed_ms = NowMs() - start;
  return ok;
}

}  // namespace lavik
