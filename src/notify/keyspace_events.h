// Keyspace notifications (Redis's notify-keyspace-events; doc/keyspace-events.md): the event
// classes, their flag letters, and the one call every write makes to report what it did.
//
// A command reports an event with NotifyKeyspaceEvent(class, "event", stored_key) right after
// the write it describes, on the worker that owns the key. When the class is off (the default:
// notify-keyspace-events ""), that is one relaxed load and one branch. When it is on, the event
// goes out at once through the sink the server installed (pub/sub, pubsub/keyspace_publish.h) as
// "__keyspace@<db>__:<key>" (payload: the event) and "__keyevent@<db>__:<event>" (payload: the
// key), as K and E ask, with the client's key and logical database.
//
// Thread safety: NotifyKeyspaceEvent may be called on any worker thread; the sink runs on the
// calling thread. SetKeyspaceEventFlags (CONFIG SET) may run on any thread; a command sees the
// old or the new flags. SetKeyspaceEventSink runs once, before the workers start.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace lavik {

// Redis's classes, one bit each (the letters of notify-keyspace-events).
enum KeyspaceEventClass : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K: publish on __keyspace@<db>__:<key>
  kNotifyKeyevent = 1u << 1,  // E: publish on __keyevent@<db>__:<event>
  kNotifyGeneric = 1u << 2,   // g: del, expire, rename_from/to, copy_to, restore, sortstore...
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZset = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x
  kNotifyEvicted = 1u << 9,   // e (Lavik never evicts a key: never sent)
  kNotifyStream = 1u << 10,   // t
  kNotifyKeyMiss = 1u << 11,  // m: a read found no key
  kNotifyModule = 1u << 12,   // d (no modules: never sent)
  kNotifyNew = 1u << 13,      // n: a key was created
};

// The classes 'A' stands for: all but m and n.
inline constexpr uint32_t kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet |
                                       kNotifyHash | kNotifyZset | kNotifyExpired | kNotifyEvicted |
                                       kNotifyStream | kNotifyModule;

// Parses a notify-keyspace-events value ("KEA", "Elg$"...); false on a letter Redis rejects.
bool ParseKeyspaceEventFlags(std::string_view letters, uint32_t* flags);
// The value as Redis's CONFIG GET shows it: 'A' (or the class letters, g$lshzxetd then n, in
// that order), then K, E, m. As Redis, 'n' is not shown when the classes collapse to 'A' — so
// the text alone can lose it: `keep_new` writes "An" then, for a value that must keep every flag
// (what the config registry stores).
std::string KeyspaceEventFlagsString(uint32_t flags, bool keep_new = false);

// notify-keyspace-events changed (start-up and CONFIG SET): events of `flags`' classes are sent
// from now on, if K or E is among them.
void SetKeyspaceEventFlags(uint32_t flags);

// Where events go: called with each (channel, payload) message, on the worker that reports it.
using KeyspaceEventSink = void (*)(void* arg, std::string_view channel, std::string_view payload);
void SetKeyspaceEventSink(KeyspaceEventSink sink, void* arg);

namespace keyspace_events_internal {
// The classes currently sent (0 when neither K nor E is set, so an off class costs one branch).
inline std::atomic<uint32_t> active{0};
void Publish(uint32_t event_class, std::string_view event, std::string_view stored_key);
}  // namespace keyspace_events_internal

// True if events of `event_class` are sent (to skip work that only an event needs).
inline bool KeyspaceEventsOn(uint32_t event_class) {
  return (keyspace_events_internal::active.load(std::memory_order_relaxed) & event_class) != 0;
}

// Reports `event` on `stored_key` (the key as the store holds it, database prefix included).
inline void NotifyKeyspaceEvent(uint32_t event_class, std::string_view event,
                                std::string_view stored_key) {
  if (KeyspaceEventsOn(event_class)) [[unlikely]] {
    keyspace_events_internal::Publish(event_class, event, stored_key);
  }
}

// MOVE's events (Redis's order, from one worker so they arrive in it): "move_from" on the key in
// the source database, "move_to" on the key in the destination (the store reported its "new").
inline void NotifyKeyMoved(std::string_view from_stored_key, std::string_view to_stored_key) {
  NotifyKeyspaceEvent(kNotifyGeneric, "move_from", from_stored_key);
  NotifyKeyspaceEvent(kNotifyGeneric, "move_to", to_stored_key);
}

}  // namespace lavik
