#include "commands/shards.h"

namespace lavik {

void Shard::Unlock() {
  lock_owner = nullptr;
  while (!locked() && !waiting.empty()) {
    MailboxItem* item = waiting.front();
    waiting.pop_front();
    item->run(item);
  }
}

ShardSet::ShardSet(const std::vector<Worker*>& workers,
                   std::vector<std::unique_ptr<Store>> stores) {
  for (size_t i = 0; i < workers.size(); ++i) {
    shards_.push_back(
        std::make_unique<Shard>(static_cast<int>(i), workers[i], std::move(stores[i])));
  }
}

}  // namespace lavik
