// CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT TRACKINGINFO (Redis 7.0's
// networking.c semantics, replies and errors). They run on the client's worker (the CLIENT
// container's kCmdHome); the mode lives in the client's TrackingClient, the tables are
// Tracking's (tracking.h).
#include <algorithm>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "client/client_state.h"
#include "client/services.h"
#include "protocol/errors.h"
#include "tracking/tracking.h"

namespace lavik {
namespace {

// Two prefixes overlap when one starts the other: a key could match both.
bool Overlap(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

// The mode checks of CLIENT TRACKING on, in Redis's order; the error text or empty.
std::string CheckOn(const TrackingClient* cur, const TrackingOptions& opt) {
  if (!opt.bcast && !opt.prefixes.empty()) return std::string(kErrTrackingPrefixNeedsBcast);
  const bool on = cur != nullptr && cur->on;
  if (on && cur->bcast != opt.bcast) return std::string(kErrTrackingSwitchBcast);
  if (opt.bcast && (opt.optin || opt.optout)) return std::string(kErrTrackingBcastOptInOut);
  if (opt.optin && opt.optout) return std::string(kErrTrackingBothOptInOut);
  if (on && ((opt.optin && cur->optout) || (opt.optout && cur->optin))) {
    return std::string(kErrTrackingSwitchOptInOut);
  }
  if (!opt.bcast) return {};
  for (size_t i = 0; i < opt.prefixes.size(); ++i) {
    if (cur != nullptr) {
      for (const std::string& have : cur->prefixes) {
        if (Overlap(have, opt.prefixes[i])) return PrefixOverlapError(opt.prefixes[i], have, true);
      }
    }
    for (size_t j = i + 1; j < opt.prefixes.size(); ++j) {
      if (Overlap(opt.prefixes[i], opt.prefixes[j])) {
        return PrefixOverlapError(opt.prefixes[i], opt.prefixes[j], false);
      }
    }
  }
  return {};
}

}  // namespace

// CLIENT TRACKING on|off [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
Task ClientTrackingCommand(Context& ctx) {
  ClientState* cl = ctx.client;
  Tracking& tracking = *ctx.services->tracking;
  ReplyWriter& w = *ctx.reply;
  const auto& args = ctx.args;
  TrackingOptions opt;
  // Options first (a missing REDIRECT client is reported before a bad on|off), as Redis.
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    const std::string_view a = args[j];
    if (EqualsNoCase(a, "redirect") && more) {
      ++j;
      if (opt.redirect != 0) {
        w.Error(kErrTrackingOneRedirect);
        co_return;
      }
      int64_t id = 0;
      if (!ParseInt64(args[j], &id)) {
        w.Error(kErrNotInteger);
        co_return;
      }
      // The client must exist now (it may leave later: then the redirect is "broken").
      const int home = id > 0 ? co_await tracking.Locate(static_cast<uint64_t>(id)) : -1;
      if (cl->closed) co_return;
      if (home < 0) {
        w.Error(kErrTrackingNoRedirectClient);
        co_return;
      }
      opt.redirect = static_cast<uint64_t>(id);
      opt.redirect_home = home;
    } else if (EqualsNoCase(a, "bcast")) {
      opt.bcast = true;
    } else if (EqualsNoCase(a, "optin")) {
      opt.optin = true;
    } else if (EqualsNoCase(a, "optout")) {
      opt.optout = true;
    } else if (EqualsNoCase(a, "noloop")) {
      opt.noloop = true;
    } else if (EqualsNoCase(a, "prefix") && more) {
      opt.prefixes.emplace_back(args[++j]);
    } else {
      w.Error(kErrSyntax);
      co_return;
    }
  }
  if (EqualsNoCase(args[2], "on")) {
    if (std::string failure = CheckOn(cl->tracking.get(), opt); !failure.empty()) {
      w.Error(failure);
      co_return;
    }
    co_await tracking.Enable(cl, opt);
  } else if (EqualsNoCase(args[2], "off")) {
    co_await tracking.Disable(cl);
  } else {
    w.Error(kErrSyntax);
    co_return;
  }
  if (cl->closed) co_return;
  w.Ok();
}

// CLIENT CACHING yes|no: whether the next command's keys are tracked (OPTIN / OPTOUT).
Task ClientCachingCommand(Context& ctx) {
  TrackingClient* t = ctx.client->tracking.get();
  ReplyWriter& w = *ctx.reply;
  if (t == nullptr || !t->on) {
    w.Error(kErrCachingNotTracking);
    co_return;
  }
  const std::string_view opt = ctx.args[2];
  if (EqualsNoCase(opt, "yes")) {
    if (!t->optin) {
      w.Error(kErrCachingYes);
      co_return;
    }
  } else if (EqualsNoCase(opt, "no")) {
    if (!t->optout) {
      w.Error(kErrCachingNo);
      co_return;
    }
  } else {
    w.Error(kErrSyntax);
    co_return;
  }
  t->caching = true;
  w.Ok();
}

// CLIENT GETREDIR: the REDIRECT id, 0 when tracking without one, -1 when not tracking.
Task ClientGetRedirCommand(Context& ctx) {
  const TrackingClient* t = ctx.client->tracking.get();
  ctx.reply->Integer(t != nullptr && t->on ? static_cast<int64_t>(t->redirect) : -1);
  co_return;
}

// CLIENT TRACKINGINFO: {flags: set, redirect: int, prefixes: array}.
Task ClientTrackingInfoCommand(Context& ctx) {
  const TrackingClient* t = ctx.client->tracking.get();
  const bool on = t != nullptr && t->on;
  std::vector<std::string_view> flags;
  flags.push_back(on ? "on" : "off");
  if (on) {
    if (t->bcast) flags.push_back("bcast");
    if (t->optin) {
      flags.push_back("optin");
      if (t->caching) flags.push_back("caching-yes");
    }
    if (t->optout) {
      flags.push_back("optout");
      if (t->caching) flags.push_back("caching-no");
    }
    if (t->noloop) flags.push_back("noloop");
    if (t->broken_redirect) flags.push_back("broken_redirect");
  }
  ReplyWriter& w = *ctx.reply;
  w.Map(3);
  w.Bulk("flags");
  w.Set(flags.size());
  for (std::string_view f : flags) w.Bulk(f);
  w.Bulk("redirect");
  w.Integer(on ? static_cast<int64_t>(t->redirect) : -1);
  w.Bulk("prefixes");
  w.Array(on ? t->prefixes.size() : 0);
  if (on) {
    for (const std::string& p : t->prefixes) w.Bulk(p);
  }
  co_return;
}

}  // namespace lavik
