// Tracking: Redis 7.0's client-side caching (CLIENT TRACKING) across shared-nothing workers
// (doc/tracking.md).
//
// Where things live:
// - A client's own tracking mode (TrackingClient: on, BCAST, OPTIN/OPTOUT, CACHING, NOLOOP,
//   REDIRECT, its prefixes) is on the client's worker, in its ClientState.
// - The tracking table (stored key → the ids and home workers of the clients that read it) is on
//   the key's worker, next to its Store: a read registers there, a write there invalidates.
// - The BCAST prefix registry (prefix → clients) is copied on every worker, since a write to a
//   matching key may happen on any worker.
// - Invalidations leave the key's worker as one TrackingBatch per destination worker per loop
//   turn (as pub/sub deliveries do); the tracking client's home decides what to send (RESP3 push,
//   or a __redis__:invalidate message through its REDIRECT client, possibly forwarded to that
//   client's worker).
//
// Cost when nobody tracks: a worker's store has the tracking observer only while that worker has
// tracked keys, prefixes or tracking clients, so a write pays one null test.
//
// Thread safety: each worker's part is touched only on that worker; the *On(w) functions run on
// worker w. Everything taking a ClientState runs on that client's worker. The counters INFO
// reads are relaxed atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "runtime/task.h"
#include "runtime/task_of.h"

namespace lavik {

namespace tracking_internal {
// The client whose command runs on this thread now (NOLOOP); 0 while none is known.
inline thread_local uint64_t current_writer = 0;
}  // namespace tracking_internal

class ClientState;
class ShardSet;
class Store;
struct Services;

// One client's tracking mode (on its worker). A client that is only a REDIRECT target has one
// too (on == false), so that deliveries find it by id.
struct TrackingClient {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  bool caching = false;       // CLIENT CACHING yes|no given for the next command
  bool held_caching = false;  // `caching` as the running command (EXEC, a script) found it
  bool broken_redirect = false;
  uint64_t redirect = 0;  // 0: none
  int redirect_home = -1;
  std::set<std::string> prefixes;  // BCAST, sorted as Redis lists them
  std::string held;                // invalidations waiting for the running command's reply
};

// CLIENT TRACKING's options, parsed (tracking_commands.cc).
struct TrackingOptions {
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  uint64_t redirect = 0;
  int redirect_home = -1;
  std::vector<std::string> prefixes;
};

class Tracking {
 public:
  // on_output: after invalidations were appended to a client's output (the output limit);
  // find_client: on worker w, the client with this id living there (or null).
  using OutputHook = std::function<void(ClientState*)>;
  using ClientFinder = std::function<ClientState*(int w, uint64_t id)>;
  Tracking(const Services* services, OutputHook on_output, ClientFinder find_client);
  ~Tracking();

  // Start-up, on worker w: the store whose writes worker w's table follows.
  void AttachStore(int w, Store* store);
  // tracking-table-max-keys (any thread; 0: no limit). Split evenly between the workers.
  void set_max_keys(uint64_t n) { max_keys_.store(n, std::memory_order_relaxed); }

  // ---- The client's worker ----

  // The client's state, created (and the client made findable by id here) on first use.
  TrackingClient& StateOf(ClientState* cl);
  // Turns tracking on with `opt` (already checked by the command), registering BCAST prefixes on
  // every worker before it returns.
  Task Enable(ClientState* cl, const TrackingOptions& opt);
  // CLIENT TRACKING off / RESET: forgets the mode and the BCAST prefixes (on every worker).
  Task Disable(ClientState* cl);
  // The client is gone: as Disable, without waiting; safe for a client that never tracked.
  void OnClose(ClientState* cl);
  // Finds the home worker of client `id` (hopping to the workers in turn) and makes it findable
  // for deliveries; -1 if there is no such client.
  TaskOf<int> Locate(uint64_t id);

  // The dispatcher, before a command of a tracking client runs: whether its keys are to be
  // remembered (a read-only command, default mode, OPTIN/OPTOUT and CACHING respected). It also
  // clears CACHING once a command other than CLIENT ... ran outside MULTI.
  // (Commands queued in MULTI never get here: they keep it too.)
  static bool ShouldRemember(ClientState* cl, const CommandSpec& spec);
  // Whether a command's keys are remembered, given the CACHING flag in force: its own for a
  // command from the client, the EXEC's or script's for one they run.
  static bool WantsKeys(const TrackingClient& t, const CommandSpec& spec, bool caching);
  // On worker w, before the command runs there: remembers its keys that w owns at once and posts
  // the others to their workers (a multi-shard read; they arrive before its own hops).
  void Remember(int w, ShardSet& shards, const CommandSpec& spec,
                std::span<const std::string_view> args, uint64_t client_id, int home);
  void RememberKeyOn(int w, std::string_view stored_key, uint64_t client_id, int home);
  // A command of the client finished (its reply is written): invalidations that arrived
  // meanwhile follow it now. Call only when cl->tracking is set.
  void ReleaseHeld(ClientState* cl);
  // The client whose command runs now on this thread (for NOLOOP; 0: none/unknown).
  static void SetWriter(uint64_t client_id) { tracking_internal::current_writer = client_id; }

  // End of worker w's loop turn (a turn hook, before the replies are flushed): BCAST messages
  // of the turn, then the turn's batches to every destination (this worker's own inline).
  void EndOfTurn(int w);

  // ---- INFO (any thread) ----
  int64_t clients() const { return clients_.load(std::memory_order_relaxed); }
  uint64_t total_keys() const;
  uint64_t total_items() const;
  uint64_t total_prefixes() const;

  struct PerWorker;

 private:
  friend struct PerWorker;
  struct Batch;
  struct Note;

  void KeyChangedOn(int w, std::string_view stored_key);
  void KeyExpiredOn(int w, uint64_t fp);
  void Forget(int w, std::string_view stored_key, uint64_t writer, uint64_t keep = 0);
  void FlushOn(int w);
  void AddPrefixOn(int w, const std::string& prefix, uint64_t id, int home, bool noloop);
  void RemovePrefixOn(int w, const std::string& prefix, uint64_t id);
  void Reattach(int w);
  void EvictOn(int w, std::string_view keep);
  void Send(int from, int to, const Note& note, std::string_view payload);
  void Deliver(int w, const Batch& b);
  void DeliverOne(int w, const Note& note, std::string_view payload);
  void Emit(ClientState* cl, std::string_view payload, bool via_redirect);
  void PostBatch(int from, int to);
  std::vector<int> AllWorkers() const;

  const Services* const services_;
  const OutputHook on_output_;
  const ClientFinder find_client_;
  std::unique_ptr<PerWorker[]> workers_;
  std::atomic<int64_t> clients_{0};
  std::atomic<uint64_t> max_keys_{1000000};
};

// Services::track_held: a command EXEC or a script runs for `client` (at home, before it runs).
void TrackHeldCommand(const Services& services, ShardSet& shards, ClientState* client,
                      const CommandSpec& spec, std::span<const std::string_view> args);

// CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO (tracking_commands.cc), registered in the
// CLIENT container (server/connection_commands.cc).
Task ClientTrackingCommand(Context& ctx);
Task ClientCachingCommand(Context& ctx);
Task ClientGetRedirCommand(Context& ctx);
Task ClientTrackingInfoCommand(Context& ctx);

}  // namespace lavik
