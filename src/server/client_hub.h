// ClientHub: the server-wide side of client administration — CLIENT PAUSE queues, MONITOR
// fan-out, CLIENT REPLY, CLIENT KILL's per-worker step, and the per-client limits (timeout,
// client-query-buffer-limit, client-output-buffer-limit, proto-max-bulk-len, protected mode).
// The dispatcher calls the small inline hooks below on every command; each costs one relaxed
// atomic load (or a ClientState field) unless the feature is in use. doc/threading.md, "Client
// administration across workers", explains how pauses and monitor lines cross workers.
//
// Thread safety: Pause/Unpause/monitoring()/ShouldPark and the limit values are safe from any
// thread (atomics). Everything taking a ClientState runs on that client's worker. Per-worker
// state (the pause queue, the monitor list) is touched only by its worker; other workers reach
// it by posting to that worker's mailbox.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "client/client_admin.h"
#include "client/client_state.h"
#include "client/services.h"
#include "commands/command.h"

namespace lavik {

class ConfigRegistry;
class Server;
class Worker;

// One CLIENT LIST / CLIENT INFO line with Redis 7.0's fields, without the newline. `running`:
// the line describes the client whose command is asking (its argv-mem counts).
// `heard_ms`: when the client was last heard from elsewhere (a replica's ACKs read by the
// Master's thread), counted in idle= as its own input is; 0 if not.
std::string ClientInfoLine(const ClientState& cl, int64_t now_ms, bool running,
                           int64_t heard_ms = 0);

class ClientHub {
 public:
  static constexpr int kMaxWorkers = lavik::kMaxWorkers;
  static constexpr int64_t kTickUs = 50 * 1000;

  explicit ClientHub(Server* server);
  ~ClientHub();

  // Start-up (before the workers run): takes timeout, client-query-buffer-limit,
  // client-output-buffer-limit, proto-max-bulk-len and protected-mode from the registry and
  // follows their CONFIG SET changes.
  void Configure(ConfigRegistry& registry);
  // On worker `id`'s thread at start: adds its tick (pause expiry, idle timeout).
  void StartWorker(Worker* worker, int id);

  // ---- Dispatcher hooks (the client's worker) ----

  // A connection opened: applies the protocol limits; false if protected mode refuses it (the
  // DENIED reply is written and the connection set to close).
  bool OnOpen(ClientState* cl);
  void OnClose(ClientState* cl);
  // The client's unparsed input passed client-query-buffer-limit: logs it as Redis does.
  void OnQueryBufferLimit(ClientState* cl);

  // Where this command's replies go: the connection's buffer, or a sink under CLIENT REPLY OFF
  // and for the command after CLIENT REPLY SKIP.
  std::string* ReplyTarget(ClientState* cl) {
    cl->discard_reply = cl->reply_off || cl->reply_skip_next;
    cl->reply_skip_next = false;
    return cl->discard_reply ? &Sink() : cl->conn->output();
  }

  // A monitoring client may not touch the keyspace (Redis marks it a replica).
  static bool MonitorRejects(const ClientState* cl, const CommandSpec* spec) {
    return cl->monitor && (spec->flags & (kCmdWrite | kCmdReadOnly)) != 0;
  }

  // True if CLIENT PAUSE holds this command now; Park() then queues the client.
  bool ShouldPark(const ClientState* cl, const CommandSpec* spec) const {
    return pause_type_.load(std::memory_order_relaxed) != kPauseNone && ShouldParkSlow(cl, spec);
  }
  void Park(ClientState* cl);

  // After a command ran (its reply is written): feeds monitors, checks the output limit.
  void AfterCommand(ClientState* cl) {
    if (monitors_.load(std::memory_order_relaxed) != 0 ||
        output_limit_on_.load(std::memory_order_relaxed)) {
      AfterCommandSlow(cl);
    }
  }

  // Any thread: some client is in MONITOR (AfterCommand feeds it).
  bool HasMonitors() const { return monitors_.load(std::memory_order_relaxed) != 0; }

  // A pub/sub message was appended to a subscriber's output (pubsub/pubsub.h): applies the
  // pubsub class of client-output-buffer-limit, closing a subscriber that does not keep up.
  void OnPubSubOutput(ClientState* cl) {
    if (pubsub_limit_on_.load(std::memory_order_relaxed)) CheckOutputLimit(cl);
  }

  // ---- For the CLIENT / MONITOR handlers ----

  void Pause(int64_t end_ms, bool all);  // any thread; a pause only ever grows
  // Any thread: a pause is in force. Active expiry waits meanwhile, as in Redis 7.0, so a
  // paused server (e.g. during a failover) changes no keys on its own.
  bool Paused() const {
    return pause_type_.load(std::memory_order_relaxed) != kPauseNone && PauseActive(NowMs());
  }
  void Unpause();  // any thread; queued commands run now (CLIENT UNPAUSE)
  // FAILOVER's own write pause (Redis's PAUSE_DURING_FAILOVER): held until lifted, and kept
  // apart from CLIENT PAUSE, so CLIENT UNPAUSE does not end it nor it a client's pause.
  void PauseForFailover(bool on);  // any thread
  // SHUTDOWN's write pause while it waits for lagging replicas (Redis's PAUSE_DURING_SHUTDOWN),
  // apart from the other two in the same way.
  void PauseForShutdown(bool on);    // any thread
  void AddMonitor(ClientState* cl);  // the client's worker
  // The client's worker: closes `cl` now, dropping its pending output (as Redis's freeClient).
  void Kill(ClientState* cl);
  static ClientType TypeOf(const ClientState& cl);
  // Whether the ACL has this user (CLIENT KILL USER).
  bool UserExists(std::string_view user) const;

  int64_t timeout_s() const { return timeout_s_.load(std::memory_order_relaxed); }

 private:
  enum : int { kPauseNone = 0, kPauseWrite = 1, kPauseAll = 2 };
  struct PerWorker {
    std::vector<ClientState*> parked;  // FIFO: resumed in arrival order
    std::vector<ClientState*> monitors;
    std::atomic<int> monitor_count{0};
    int ticks = 0;
  };

  static std::string& Sink();
  bool ShouldParkSlow(const ClientState* cl, const CommandSpec* spec) const;
  bool PauseActive(int64_t now_ms) const;
  void AfterCommandSlow(ClientState* cl);
  void FeedMonitors(ClientState* cl);
  void DeliverMonitorLine(int worker, const std::string& line);
  bool CheckOutputLimit(ClientState* cl);
  void ResumeParked(int worker);
  void Tick(Worker* worker, int id);
  void CloseIdleClients(int id, int64_t now_ms);
  // A parked client whose peer hung up is gone, as Redis frees it: its write never runs.
  void DropHungUpParked(int id);
  void PostToAll(std::function<void(int worker)> fn);
  void ApplyProtoMaxBulkLen(int worker);

  Server* const server_;
  std::unique_ptr<PerWorker[]> workers_;

  std::mutex pause_mu_;  // Pause/Unpause/expiry: type and end change together
  // What the dispatcher tests: the strongest pause in force, of CLIENT PAUSE's and FAILOVER's.
  std::atomic<int> pause_type_{kPauseNone};
  std::atomic<int64_t> pause_end_ms_{0};
  std::atomic<int> client_type_{kPauseNone};  // CLIENT PAUSE's (under pause_mu_ to change)
  std::atomic<int64_t> client_end_ms_{0};
  bool failover_pause_ = false;  // under pause_mu_
  bool shutdown_pause_ = false;  // under pause_mu_
  void CombinePauses();          // pause_mu_ held: pause_type_/end_ from the two

  std::atomic<int> monitors_{0};
  std::atomic<bool> output_limit_on_{false};
  std::atomic<bool> pubsub_limit_on_{false};
  std::mutex limit_mu_;
  OutputLimit normal_limit_;  // under limit_mu_; copied per check (rare: only when enabled)
  OutputLimit pubsub_limit_;  // for issue #4's subscribers

  std::atomic<int64_t> timeout_s_{0};
  std::atomic<uint64_t> proto_max_bulk_len_{512u << 20};
  std::atomic<bool> protected_mode_{true};
  std::string bind_;
};

// Handlers (client_admin_commands.cc), registered in connection_commands.cc.
Task ClientKillCommand(Context& ctx);
Task ClientUnblockCommand(Context& ctx);
Task ClientPauseCommand(Context& ctx);
Task ClientUnpauseCommand(Context& ctx);
Task ClientNoEvictCommand(Context& ctx);
Task ClientReplyCommand(Context& ctx);
Task MonitorCommand(Context& ctx);

}  // namespace lavik
