// Keyspace notifications delivered through pub/sub (doc/keyspace-events.md).
//
// WireKeyspaceEvents makes notify/keyspace_events.h's sink publish each event's two messages as
// PUBLISH does, from the worker that reports it: the registry is complete on every worker, so
// the key's own worker publishes without a hop, and its messages reach every subscriber in the
// order it reported them. It also keeps the flags in step with notify-keyspace-events (its value
// now, then every CONFIG SET).
//
// Thread safety: called once by the server, before the workers start.
#pragma once

namespace lavik {

class ConfigRegistry;
class PubSub;

void WireKeyspaceEvents(PubSub* pubsub, ConfigRegistry* registry);

}  // namespace lavik
