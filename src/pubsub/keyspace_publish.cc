#include "pubsub/keyspace_publish.h"

#include <string>
#include <string_view>

#include "config/config_registry.h"
#include "notify/keyspace_events.h"
#include "pubsub/pubsub.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

void PublishEvent(void* arg, std::string_view channel, std::string_view payload) {
  Worker* w = Worker::Current();
  if (w == nullptr) return;  // only workers write keys
  static_cast<PubSub*>(arg)->PublishOn(w->id(), PubSubKind::kChannel, channel, payload);
}

void ApplyFlags(std::string_view letters) {
  uint32_t flags = 0;
  if (ParseKeyspaceEventFlags(letters, &flags)) SetKeyspaceEventFlags(flags);
}

}  // namespace

void WireKeyspaceEvents(PubSub* pubsub, ConfigRegistry* registry) {
  SetKeyspaceEventSink(&PublishEvent, pubsub);
  if (const std::string* v = registry->Value("notify-keyspace-events")) ApplyFlags(*v);
  registry->OnChange("notify-keyspace-events", [](std::string_view v) {
    ApplyFlags(v);
    return Status::Ok();
  });
}

}  // namespace lavik
