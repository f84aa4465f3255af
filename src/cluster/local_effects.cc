#include "cluster/local_effects.h"

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/db_key.h"
#include "base/log.h"
#include "client/services.h"
#include "commands/shards.h"
#include "commands/slot_keys.h"
#include "notify/keyspace_events.h"
#include "pubsub/pubsub.h"
#include "runtime/mailbox.h"
#include "runtime/worker.h"
#include "storage/store.h"

namespace lavik {
namespace {

// One worker's share: its lost slots, deleted one key at a time.
struct SlotCleanup : MailboxItem {
  ShardSet* shards = nullptr;
  int shard = 0;
  std::vector<uint16_t> slots;

  static void Run(MailboxItem* item) {
    auto* job = static_cast<SlotCleanup*>(item);
    Shard& shard = job->shards->at(job->shard);
    if (shard.locked()) {
      shard.waiting.push_back(job);  // run again by Shard::Unlock
      return;
    }
    Task t = job->Delete(shard.store);
    if (t.Start([](void* arg) { delete static_cast<SlotCleanup*>(arg); }, job)) delete job;
  }

  Task Delete(Store& st) {
    size_t deleted = 0;
    for (uint16_t slot : slots) {
      std::vector<std::string> keys;
      co_await KeysInSlot(st, slot, SIZE_MAX, NowMs(), &keys);
      for (const std::string& key : keys) {
        const std::string stored = DbKey(0, key);
        bool existed = false;
        WriteResult w = co_await st.Delete(stored, NowMs(), &existed);
        if (!w.ok()) {
          LogWarning("cluster: could not delete key of lost slot " + std::to_string(slot) + ": " +
                     w.error);
          continue;
        }
        if (existed) {
          ++deleted;
          NotifyKeyspaceEvent(kNotifyGeneric, "del", stored);
        }
      }
    }
    if (deleted != 0) {
      LogNotice("cluster: deleted " + std::to_string(deleted) + " keys of slots this node lost");
    }
  }
};

struct BusMessage : MailboxItem {
  const Services* services = nullptr;
  PubSubKind kind = PubSubKind::kChannel;
  std::string channel, message;

  static void Run(MailboxItem* item) {
    auto* m = static_cast<BusMessage*>(item);
    m->services->pubsub->PublishOn(0, m->kind, m->channel, m->message);
    delete m;
  }
};

}  // namespace

void PublishFromBus(const Services& services, bool shard, std::string_view channel,
                    std::string_view message) {
  if (services.pubsub == nullptr || services.workers.empty()) return;
  auto* m = new BusMessage();
  m->services = &services;
  m->kind = shard ? PubSubKind::kShard : PubSubKind::kChannel;
  m->channel.assign(channel);
  m->message.assign(message);
  m->run = &BusMessage::Run;
  services.workers[0]->Post(m);
}

void DeleteKeysInSlots(ShardSet& shards, const std::vector<uint16_t>& slots) {
  std::vector<SlotCleanup*> jobs(size_t(shards.size()), nullptr);
  for (uint16_t slot : slots) {
    const int id = shards.SlotShard(slot);
    if (jobs[size_t(id)] == nullptr) {
      jobs[size_t(id)] = new SlotCleanup();
      jobs[size_t(id)]->shards = &shards;
      jobs[size_t(id)]->shard = id;
      jobs[size_t(id)]->run = &SlotCleanup::Run;
    }
    jobs[size_t(id)]->slots.push_back(slot);
  }
  for (int id = 0; id < shards.size(); ++id) {
    if (jobs[size_t(id)] != nullptr) shards.at(id).worker->Post(jobs[size_t(id)]);
  }
}

}  // namespace lavik
