// COMMAND GETKEYS, GETKEYSANDFLAGS (keys from commands/command_keys.h) and COMMAND LIST with its
// FILTERBY MODULE / ACLCAT / PATTERN filters. Registered in server_commands.cc's COMMAND table.
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/glob.h"
#include "commands/command_keys.h"
#include "commands/command_table.h"
#include "protocol/errors.h"
#include "server/server.h"

namespace lavik {
namespace {

// The command named by args[2...] (a subcommand when the container has one by that name).
const CommandSpec* TargetCommand(const CommandTable& table,
                                 std::span<const std::string_view> args) {
  const CommandSpec* spec = table.Find(args[2]);
  if (spec == nullptr || spec->subcommands.empty() || args.size() < 4) return spec;
  return CommandTable::FindSubcommand(*spec, args[3]);
}

// Checks the target and finds its keys; false after replying with Redis's error.
bool KeysOrReply(Context& ctx, const CommandSpec** spec, std::vector<KeyRef>* keys) {
  const std::span<const std::string_view> call = ctx.args.subspan(2);
  *spec = TargetCommand(ctx.server->commands(), ctx.args);
  if (*spec == nullptr) {
    ctx.reply->Error(kErrGetKeysUnknown);
    return false;
  }
  if (!CommandHasKeys(**spec)) {
    ctx.reply->Error(kErrGetKeysNoKeys);
    return false;
  }
  if (!CommandTable::ArityOk(**spec, call.size())) {
    ctx.reply->Error(kErrGetKeysArity);
    return false;
  }
  const bool ok = CommandKeys(**spec, call, keys);
  if ((!ok || keys->empty()) && !KeysAreOptional(**spec)) {
    ctx.reply->Error(kErrGetKeysInvalid);
    return false;
  }
  if (!ok) keys->clear();
  return true;
}

bool HasCategory(const CommandSpec& spec, std::string_view category) {
  std::string_view cats = spec.acl_categories;
  while (!cats.empty()) {
    const size_t space = cats.find(' ');
    std::string_view word = cats.substr(0, space);
    if (word.size() == category.size() + 1 && EqualsNoCase(word.substr(1), category)) return true;
    cats = space == std::string_view::npos ? std::string_view() : cats.substr(space + 1);
  }
  return false;
}

}  // namespace

Task CommandGetKeys(Context& ctx) {
  const CommandSpec* spec;
  std::vector<KeyRef> keys;
  if (!KeysOrReply(ctx, &spec, &keys)) co_return;
  ctx.reply->Array(keys.size());
  for (const KeyRef& k : keys) ctx.reply->Bulk(ctx.args[2 + k.arg]);
}

Task CommandGetKeysAndFlags(Context& ctx) {
  const CommandSpec* spec;
  std::vector<KeyRef> keys;
  if (!KeysOrReply(ctx, &spec, &keys)) co_return;
  const std::span<const std::string_view> call = ctx.args.subspan(2);
  ctx.reply->Array(keys.size());
  for (const KeyRef& k : keys) {
    ctx.reply->Array(2);
    ctx.reply->Bulk(call[k.arg]);
    std::string_view flags = KeySpecFlags(*spec, call, k.spec);
    size_t words = 0;
    for (size_t i = 0; i < flags.size(); ++i) words += (i == 0 || flags[i - 1] == ' ') ? 1 : 0;
    ctx.reply->Set(words);
    while (!flags.empty()) {
      const size_t space = flags.find(' ');
      ctx.reply->Simple(flags.substr(0, space));
      flags = space == std::string_view::npos ? std::string_view() : flags.substr(space + 1);
    }
  }
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: every command and
// subcommand, as Redis lists them. Lavik loads no modules, so MODULE matches nothing.
Task CommandList(Context& ctx) {
  enum { kAll, kModule, kCategory, kPattern } filter = kAll;
  std::string_view value;
  if (ctx.args.size() != 2) {
    if (ctx.args.size() != 5 || !EqualsNoCase(ctx.args[2], "filterby")) {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
    value = ctx.args[4];
    if (EqualsNoCase(ctx.args[3], "module")) {
      filter = kModule;
    } else if (EqualsNoCase(ctx.args[3], "aclcat")) {
      filter = kCategory;
    } else if (EqualsNoCase(ctx.args[3], "pattern")) {
      filter = kPattern;
    } else {
      ctx.reply->Error(kErrSyntax);
      co_return;
    }
  }
  auto wanted = [&](const CommandSpec& s) {
    switch (filter) {
      case kAll:
        return true;
      case kModule:
        return false;
      case kCategory:
        return HasCategory(s, value);
      case kPattern:
        return GlobMatch(value, s.name, /*nocase=*/true);
    }
    return false;
  };
  std::vector<std::string_view> names;
  for (const CommandSpec* s : ctx.server->commands().all()) {
    if (wanted(*s)) names.push_back(s->name);
    for (const CommandSpec& sub : s->subcommands) {
      if (wanted(sub)) names.push_back(sub.name);
    }
  }
  ctx.reply->Array(names.size());
  for (std::string_view n : names) ctx.reply->Bulk(n);
}

}  // namespace lavik
