#include "notify/keyspace_events.h"

#include <string>

#include "base/db_key.h"

namespace lavik {
namespace {

// The letters in Redis's order, each with its class.
struct Letter {
  char c;
  uint32_t bit;
};
constexpr Letter kLetters[] = {
    {'g', kNotifyGeneric},  {'$', kNotifyString},  {'l', kNotifyList},    {'s', kNotifySet},
    {'h', kNotifyHash},     {'z', kNotifyZset},    {'x', kNotifyExpired}, {'e', kNotifyEvicted},
    {'t', kNotifyStream},   {'d', kNotifyModule},  {'n', kNotifyNew},     {'K', kNotifyKeyspace},
    {'E', kNotifyKeyevent}, {'m', kNotifyKeyMiss},
};

KeyspaceEventSink g_sink = nullptr;
void* g_sink_arg = nullptr;

void AppendInt(std::string* out, int v) { out->append(std::to_string(v)); }

}  // namespace

bool ParseKeyspaceEventFlags(std::string_view letters, uint32_t* flags) {
  uint32_t bits = 0;
  for (char c : letters) {
    if (c == 'A') {
      bits |= kNotifyAll;
      continue;
    }
    bool known = false;
    for (const Letter& l : kLetters) {
      if (l.c == c) {
        bits |= l.bit;
        known = true;
      }
    }
    if (!known) return false;
  }
  *flags = bits;
  return true;
}

std::string KeyspaceEventFlagsString(uint32_t flags, bool keep_new) {
  std::string out;
  const bool all = (flags & kNotifyAll) == kNotifyAll;
  if (all) out += 'A';
  if (all && keep_new && (flags & kNotifyNew)) out += 'n';
  for (const Letter& l : kLetters) {
    const bool is_class = (l.bit & (kNotifyAll | kNotifyNew)) != 0;
    if (is_class && all) continue;  // 'A' hides the class letters, and 'n' with them
    if (flags & l.bit) out += l.c;
  }
  return out;
}

void SetKeyspaceEventFlags(uint32_t flags) {
  const bool sent = (flags & (kNotifyKeyspace | kNotifyKeyevent)) != 0;
  keyspace_events_internal::active.store(sent ? flags : 0, std::memory_order_relaxed);
}

void SetKeyspaceEventSink(KeyspaceEventSink sink, void* arg) {
  g_sink = sink;
  g_sink_arg = arg;
}

namespace keyspace_events_internal {

void Publish(uint32_t event_class, std::string_view event, std::string_view stored_key) {
  (void)event_class;
  if (g_sink == nullptr) return;
  // The one place a notification names its database and key.
  const SplitKey split = SplitDbKey(stored_key);
  const int db = DbMap::Logical(split.db);
  const uint32_t flags = active.load(std::memory_order_relaxed);
  thread_local std::string channel;
  if (flags & kNotifyKeyspace) {
    channel.assign("__keyspace@");
    AppendInt(&channel, db);
    channel.append("__:").append(split.key);
    g_sink(g_sink_arg, channel, event);
  }
  if (flags & kNotifyKeyevent) {
    channel.assign("__keyevent@");
    AppendInt(&channel, db);
    channel.append("__:").append(event);
    g_sink(g_sink_arg, channel, split.key);
  }
}

}  // namespace keyspace_events_internal
}  // namespace lavik
