// PubSub: the server-wide channel registry and message delivery across workers (doc/pubsub.md).
//
// Layout: channels and shard channels are partitioned like keys — a channel is registered on
// the worker that owns its name's hash slot (ShardSet::ShardOf) — while every worker keeps a full
// copy of the pattern list, so a PUBLISH runs on exactly one worker (the channel's owner) and
// matches patterns there without another hop. A subscriber is recorded as (client id, home
// worker), never as a pointer: the owner groups the receivers of a message by home worker into
// that home's DeliveryBatch, posted before PublishOn returns (so before the publisher's reply)
// and grown by later publishes while it still waits in the owner's outbox — one mailbox item per
// (owner, home) per loop turn, however many messages; the home looks each id up in its own table
// of subscribed clients (a client that left meanwhile is simply not found).
//
// Thread safety: each worker's part (its owned channels, its pattern copy, its table of local
// subscribed clients) is touched only on that worker; the *On(worker) functions must run on the
// named worker (the command handlers get there with ShardHop). Everything taking a ClientState
// runs on that client's worker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/pubsub_client.h"

namespace lavik {

class ClientHub;
class ClientState;
class Server;

class PubSub {
 public:
  PubSub(Server* server, ClientHub* hub);
  ~PubSub();

  // ---- The client's worker ----

  // The client's subscription state, created (and the client made reachable for deliveries)
  // on first use.
  PubSubClient& StateOf(ClientState* cl);
  // The client is gone: forgets it here and posts the removal of all its subscriptions to the
  // workers that hold them. Safe to call for a client that never subscribed.
  void OnClose(ClientState* cl);

  // ---- Registry operations: run on worker `w` ----

  void AddOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id, int home);
  void RemoveOn(int w, PubSubKind kind, std::string_view name, uint64_t client_id);
  // Posts `payload` to every subscriber of `channel` (kChannel: and every matching pattern;
  // kShard: shard subscribers only). `w` must be the channel's owner. Returns the receiver
  // count, a client matching through two patterns counting twice, as Redis.
  int64_t PublishOn(int w, PubSubKind kind, std::string_view channel, std::string_view payload);
  // PUBSUB: the channels (kChannel/kShard) owned by `w` matching `pattern` (all if empty);
  // the subscriber count of one owned channel; the number of distinct patterns (the same on
  // every worker).
  void ListOn(int w, PubSubKind kind, std::string_view pattern, bool has_pattern,
              std::vector<std::string>* out) const;
  int64_t CountOn(int w, PubSubKind kind, std::string_view name) const;
  int64_t PatternCountOn(int w) const;

 private:
  struct Sub {
    uint64_t id;
    int home;
  };
  using Registry = std::unordered_map<std::string, std::vector<Sub>>;
  struct DeliveryBatch;
  struct PerWorker {
    Registry owned[3];  // kChannel and kShard: the names this worker owns; kPattern: all
    std::unordered_map<uint64_t, ClientState*> local;  // this worker's subscribed clients
    // By home worker: the batch posted there that still waits in this worker's outbox (null if
    // none), and flushes_to(home) when it was posted. The own worker's slot is a scratch batch,
    // delivered inline at the end of each PUBLISH and reused.
    std::vector<DeliveryBatch*> open;
    std::vector<uint64_t> open_epoch;
  };

  Registry& RegistryOn(int w, PubSubKind kind) { return workers_[w].owned[static_cast<int>(kind)]; }
  // The batch the current PUBLISH on w appends to for `home`; sets *fresh if it is new (the
  // caller posts it once the message is in).
  DeliveryBatch* BatchFor(int w, int home, bool* fresh);
  void Deliver(const DeliveryBatch& b);

  Server* const server_;
  ClientHub* const hub_;
  std::unique_ptr<PerWorker[]> workers_;
};

}  // namespace lavik
