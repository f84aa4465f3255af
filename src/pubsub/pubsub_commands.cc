// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
// PUBLISH, SPUBLISH and PUBSUB. They all run on the client's worker (kCmdHome); (un)subscribing
// updates every worker's copy of the registry with ShardHop, the others read the local copy; see
// pubsub/pubsub.h and doc/pubsub.md.
#include <string>
#include <vector>

#include "client/client_state.h"
#include "client/services.h"
#include "commands/command.h"
#include "pubsub/pubsub.h"
#include "runtime/shard_hop.h"
#include "runtime/worker.h"

namespace lavik {
namespace {

// Moves the held messages behind the confirmations just written.
void ReleaseHeld(ClientState* cl, PubSubClient& st) {
  st.in_flight = false;
  if (st.held.empty()) return;
  cl->conn->output()->append(st.held);
  st.held.clear();
  if (st.held.capacity() > (1u << 16)) st.held.shrink_to_fit();
}

// Where the (un)subscribe confirmations go. Redis 7.0 sends them as pushes, which CLIENT REPLY
// OFF|SKIP do not silence (a client that subscribes with replies off still reads them, then its
// messages), so they bypass the sink the dispatcher set for this command's replies.
ReplyWriter& ConfirmationWriter(Context& ctx) {
  ClientState* cl = ctx.client;
  if (cl->discard_reply && !ctx.in_exec) ctx.reply->SetOutput(cl->conn->output());
  return *ctx.reply;
}

Task Subscribe(Context& ctx, PubSubKind kind) {
  const Services& services = *ctx.services;
  ClientState* cl = ctx.client;
  PubSub& ps = *services.pubsub;
  PubSubClient& st = ps.StateOf(cl);
  const int home = cl->conn->worker()->id();
  // The client's own set changes at once (replies count from it); the owners learn of the new
  // names before any confirmation is written, so a PUBLISH after the confirmation reaches us.
  std::vector<int64_t> counts;
  std::vector<std::string_view> added;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    if (st.of(kind).emplace(ctx.args[i]).second) added.push_back(ctx.args[i]);
    counts.push_back(st.CountFor(kind));
  }
  st.in_flight = true;
  // Every worker holds a copy of the registry (a PUBLISH reads its own worker's copy).
  for (int w = 0; w < services.worker_count() && !added.empty(); ++w) {
    co_await ShardHop(services.workers[w], [&, w]() {
      for (std::string_view name : added) ps.AddOn(w, kind, name, cl->id, home);
    });
    // Gone meanwhile: PubSub::OnClose has posted the removal of every name in the set (ours
    // included) behind our registrations; nothing more to do or to reply.
    if (cl->closed) co_return;
  }
  ReplyWriter& w = ConfirmationWriter(ctx);
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    w.Push(3);
    w.Bulk(SubscribeReplyName(kind));
    w.Bulk(ctx.args[i]);
    w.Integer(counts[i - 1]);
  }
  ReleaseHeld(cl, st);
}

Task Unsubscribe(Context& ctx, PubSubKind kind) {
  const Services& services = *ctx.services;
  ClientState* cl = ctx.client;
  ReplyWriter& w = *ctx.reply;  // pointed past CLIENT REPLY OFF by ConfirmationWriter below
  PubSubClient* state = cl->pubsub.get();
  std::vector<std::string> names;
  if (ctx.args.size() > 1) {
    for (size_t i = 1; i < ctx.args.size(); ++i) names.emplace_back(ctx.args[i]);
  } else if (state != nullptr) {
    names.assign(state->of(kind).begin(), state->of(kind).end());
  }
  if (names.empty()) {  // no arguments and nothing to leave: one confirmation with a null name
    ConfirmationWriter(ctx);
    w.Push(3);
    w.Bulk(UnsubscribeReplyName(kind));
    w.Null();
    w.Integer(state == nullptr ? 0 : state->CountFor(kind));
    co_return;
  }
  PubSubClient& st = services.pubsub->StateOf(cl);
  // Leaving takes effect at home at once: deliveries already under way are dropped at home.
  std::vector<int64_t> counts;
  std::vector<std::string_view> removed;
  for (const std::string& name : names) {
    if (st.of(kind).erase(name) != 0) removed.push_back(name);
    counts.push_back(st.CountFor(kind));
  }
  st.in_flight = true;
  PubSub& ps = *services.pubsub;
  for (int wk = 0; wk < services.worker_count() && !removed.empty(); ++wk) {
    co_await ShardHop(services.workers[wk], [&, wk]() {
      for (std::string_view name : removed) ps.RemoveOn(wk, kind, name, cl->id);
    });
    if (cl->closed) co_return;
  }
  ConfirmationWriter(ctx);
  for (size_t i = 0; i < names.size(); ++i) {
    w.Push(3);
    w.Bulk(UnsubscribeReplyName(kind));
    w.Bulk(names[i]);
    w.Integer(counts[i]);
  }
  ReleaseHeld(cl, st);
}

// Runs on the publisher's worker against its own copy of the registry: the reply does not wait
// for another worker.
Task Publish(Context& ctx, PubSubKind kind) {
  const int home = ctx.client->conn->worker()->id();
  ctx.reply->Integer(ctx.services->pubsub->PublishOn(home, kind, ctx.args[1], ctx.args[2]));
  // Redis Cluster 7.0 broadcasts PUBLISH to every node and SPUBLISH to the nodes of its shard
  // (the slot's master and its replicas). The reply counts this node's receivers.
  if (ctx.services->cluster_publish != nullptr &&
      (kind == PubSubKind::kChannel || kind == PubSubKind::kShard)) {
    ctx.services->cluster_publish(*ctx.services, kind == PubSubKind::kShard, ctx.args[1],
                                  ctx.args[2]);
  }
  co_return;
}

// SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, PUBLISH and SPUBLISH: every command that names channels
// or patterns a user may be denied.
Task ChannelCommand(Context& ctx) {
  // ACL channel permissions ("&pattern") were checked by the dispatcher (Acl::Check) before this
  // ran: nothing is registered or published for a refused channel.
  const std::string_view name = ctx.spec->name;
  if (name == "subscribe") {
    co_await Subscribe(ctx, PubSubKind::kChannel);
  } else if (name == "psubscribe") {
    co_await Subscribe(ctx, PubSubKind::kPattern);
  } else if (name == "ssubscribe") {
    co_await Subscribe(ctx, PubSubKind::kShard);
  } else if (name == "publish") {
    co_await Publish(ctx, PubSubKind::kChannel);
  } else {
    co_await Publish(ctx, PubSubKind::kShard);
  }
}

Task UnsubscribeCommand(Context& ctx) { return Unsubscribe(ctx, PubSubKind::kChannel); }
Task PunsubscribeCommand(Context& ctx) { return Unsubscribe(ctx, PubSubKind::kPattern); }
Task SunsubscribeCommand(Context& ctx) { return Unsubscribe(ctx, PubSubKind::kShard); }

// PUBSUB CHANNELS / SHARDCHANNELS [pattern]: from the local copy of the registry.
Task ListChannels(Context& ctx, PubSubKind kind) {
  if (ctx.args.size() > 3) {
    ctx.reply->Error("ERR unknown subcommand or wrong number of arguments for '" +
                     std::string(ctx.args[1]) + "'. Try PUBSUB HELP.");
    co_return;
  }
  const bool has_pattern = ctx.args.size() == 3;
  const std::string_view pattern = has_pattern ? ctx.args[2] : std::string_view();
  std::vector<std::string> out;
  ctx.services->pubsub->ListOn(ctx.client->conn->worker()->id(), kind, pattern, has_pattern, &out);
  ctx.reply->Array(out.size());
  for (const std::string& c : out) ctx.reply->Bulk(c);
}

// PUBSUB NUMSUB / SHARDNUMSUB [channel ...]: from the local copy of the registry.
Task CountSubscribers(Context& ctx, PubSubKind kind) {
  PubSub& ps = *ctx.services->pubsub;
  const int w = ctx.client->conn->worker()->id();
  ctx.reply->Array(2 * (ctx.args.size() - 2));
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply->Bulk(ctx.args[i]);
    ctx.reply->Integer(ps.CountOn(w, kind, ctx.args[i]));
  }
  co_return;
}

Task PubsubChannels(Context& ctx) { return ListChannels(ctx, PubSubKind::kChannel); }
Task PubsubShardChannels(Context& ctx) { return ListChannels(ctx, PubSubKind::kShard); }
Task PubsubNumSub(Context& ctx) { return CountSubscribers(ctx, PubSubKind::kChannel); }
Task PubsubShardNumSub(Context& ctx) { return CountSubscribers(ctx, PubSubKind::kShard); }

Task PubsubNumPat(Context& ctx) {
  // Every worker holds the whole registry, so the local copy answers.
  ctx.reply->Integer(ctx.services->pubsub->PatternCountOn(ctx.client->conn->worker()->id()));
  co_return;
}

Task PubsubHelp(Context& ctx) {
  static const char* kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply->Array(std::size(kLines));
  for (const char* l : kLines) ctx.reply->Simple(l);
  co_return;
}

// Shard channels are not keys in a server without cluster mode (they never route a command), so
// SSUBSCRIBE/SUNSUBSCRIBE/SPUBLISH declare no key positions; Redis's COMMAND INFO lists them.
constexpr uint32_t kPs = kCmdPubSub | kCmdLoading | kCmdStale | kCmdHome;

const CommandSpec kPubsubSubcommands[] = {
    {"pubsub|channels", -2, kPs, 0, 0, 0, &PubsubChannels, "@pubsub @slow", "pubsub",
     "Returns the active channels.", "2.8.0"},
    {"pubsub|numpat", 2, kPs, 0, 0, 0, &PubsubNumPat, "@pubsub @slow", "pubsub",
     "Returns a count of unique pattern subscriptions.", "2.8.0"},
    {"pubsub|numsub", -2, kPs, 0, 0, 0, &PubsubNumSub, "@pubsub @slow", "pubsub",
     "Returns a count of subscribers to channels.", "2.8.0"},
    {"pubsub|shardchannels", -2, kPs, 0, 0, 0, &PubsubShardChannels, "@pubsub @slow", "pubsub",
     "Returns the active shard channels.", "7.0.0"},
    {"pubsub|shardnumsub", -2, kPs, 0, 0, 0, &PubsubShardNumSub, "@pubsub @slow", "pubsub",
     "Returns the count of subscribers of shard channels.", "7.0.0"},
    {"pubsub|help", 2, kCmdLoading | kCmdStale | kCmdHome, 0, 0, 0, &PubsubHelp, "@slow", "pubsub",
     "Returns helpful text about the different subcommands.", "6.2.0"},
};

const CommandSpec kPubSubCommands[] = {
    {"subscribe", -2, kPs | kCmdNoScript, 0, 0, 0, &ChannelCommand, "@pubsub @slow", "pubsub",
     "Listens for messages published to channels.", "2.0.0"},
    {"unsubscribe", -1, kPs | kCmdNoScript, 0, 0, 0, &UnsubscribeCommand, "@pubsub @slow", "pubsub",
     "Stops listening to messages posted to channels.", "2.0.0"},
    {"psubscribe", -2, kPs | kCmdNoScript, 0, 0, 0, &ChannelCommand, "@pubsub @slow", "pubsub",
     "Listens for messages published to channels that match one or more patterns.", "2.0.0"},
    {"punsubscribe", -1, kPs | kCmdNoScript, 0, 0, 0, &PunsubscribeCommand, "@pubsub @slow",
     "pubsub", "Stops listening to messages published to channels that match one or more patterns.",
     "2.0.0"},
    {"ssubscribe", -2, kPs | kCmdNoScript, 0, 0, 0, &ChannelCommand, "@pubsub @slow", "pubsub",
     "Listens for messages published to shard channels.", "7.0.0"},
    {"sunsubscribe", -1, kPs | kCmdNoScript, 0, 0, 0, &SunsubscribeCommand, "@pubsub @slow",
     "pubsub", "Stops listening to messages posted to shard channels.", "7.0.0"},
    {"publish", 3, kPs | kCmdFast, 0, 0, 0, &ChannelCommand, "@pubsub @fast", "pubsub",
     "Posts a message to a channel.", "2.0.0"},
    {"spublish", 3, kPs | kCmdFast, 0, 0, 0, &ChannelCommand, "@pubsub @fast", "pubsub",
     "Post a message to a shard channel", "7.0.0"},
    {"pubsub", -2, kCmdHome, 0, 0, 0, nullptr, "@slow", "pubsub",
     "A container for Pub/Sub commands.", "2.8.0", kPubsubSubcommands},
};

}  // namespace

std::span<const CommandSpec> PubSubCommands() { return kPubSubCommands; }

}  // namespace lavik
