// Error replies shared by every command, spelled once and exactly as Redis 7.0.15 sends them
// (checked against the real server), without the leading '-' and trailing CRLF: pass them to
// ReplyWriter::Error. Formatted errors are built by the helpers at the bottom, which reproduce
// Redis's truncation rules (C strings: a NUL byte ends an argument; "%.128s" caps at 128 bytes)
// and replace CR/LF with spaces so user bytes cannot break the reply framing.
//
// Thread safety: constants and pure functions only.

#ifndef LAVIK_PROTOCOL_ERRORS_H_
#define LAVIK_PROTOCOL_ERRORS_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace lavik {

// Type and value errors.
inline constexpr std::string_view kErrWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kErrSyntax = "ERR syntax error";
inline constexpr std::string_view kErrNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kErrNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kErrNotPositive = "ERR value is out of range, must be positive";
inline constexpr std::string_view kErrOutOfRange = "ERR value is out of range";
inline constexpr std::string_view kErrOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kErrIncrFloatNaN = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kErrHashNotInteger = "ERR hash value is not an integer";
inline constexpr std::string_view kErrHashNotFloat = "ERR hash value is not a float";
inline constexpr std::string_view kErrMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr std::string_view kErrMinMaxNotLex = "ERR min or max not valid string range item";
inline constexpr std::string_view kErrScoreNaN = "ERR resulting score is not a number (NaN)";
inline constexpr std::string_view kErrZaddXxNx =
    "ERR XX and NX options at the same time are not compatible";
inline constexpr std::string_view kErrZaddGtLtNx =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
inline constexpr std::string_view kErrZaddIncrPair =
    "ERR INCR option supports a single increment-element pair";
inline constexpr std::string_view kErrGeoUnit =
    "ERR unsupported unit provided. please use M, KM, FT, MI";
inline constexpr std::string_view kErrBitOffset =
    "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kErrBitValue = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kErrStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kErrOffsetRange = "ERR offset is out of range";
inline constexpr std::string_view kErrIndexRange = "ERR index out of range";
inline constexpr std::string_view kErrInvalidCursor = "ERR invalid cursor";
inline constexpr std::string_view kErrTimeoutNotFloat =
    "ERR timeout is not a float or out of range";
inline constexpr std::string_view kErrTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kErrTimeoutNegative = "ERR timeout is negative";
// What a blocked client reads when CLIENT UNBLOCK id ERROR ends its wait.
inline constexpr std::string_view kErrUnblockedByClient =
    "UNBLOCKED client unblocked via CLIENT UNBLOCK";
// HyperLogLog: a string that is not an HLL, and an HLL whose sparse runs do not add up.
inline constexpr std::string_view kErrNotHll =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kErrHllCorrupt = "INVALIDOBJ Corrupted HLL object detected";

// Keyspace errors.
inline constexpr std::string_view kErrNoSuchKey = "ERR no such key";
inline constexpr std::string_view kErrDbIndexRange = "ERR DB index is out of range";
// An integer argument Redis reads as a C int (SELECT, MOVE, COPY ... DB) beyond its range.
inline constexpr std::string_view kErrNotInt32 =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
inline constexpr std::string_view kErrSameObject =
    "ERR source and destination objects are the same";
inline constexpr std::string_view kErrBusyKey = "BUSYKEY Target key name already exists.";

// Scripting.
inline constexpr std::string_view kErrBusyScript =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kErrBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kErrNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr std::string_view kErrNotBusy = "NOTBUSY No scripts in execution right now.";
inline constexpr std::string_view kErrUnkillable =
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
    "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
    "NOSAVE command.";

// Connection, auth and server state.
inline constexpr std::string_view kErrNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kErrWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr std::string_view kErrAuthNotConfigured =
    "ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?";
inline constexpr std::string_view kErrNoProto = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kErrOOM =
    "OOM command not allowed when used memory > 'maxmemory'.";
// stop-writes-on-bgsave-error after a failed background save (Redis's shared.bgsaveerr).
inline constexpr std::string_view kErrMisconf =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.";
inline constexpr std::string_view kErrOomScriptFlag =
    "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'";
inline constexpr std::string_view kErrLoading = "LOADING Redis is loading the dataset in memory";
inline constexpr std::string_view kErrMasterDown =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
inline constexpr std::string_view kErrReadOnlyReplica =
    "READONLY You can't write against a read only replica.";

// Transactions.
inline constexpr std::string_view kErrExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr std::string_view kErrDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr std::string_view kErrNestedMulti = "ERR MULTI calls can not be nested";
inline constexpr std::string_view kErrWatchInMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr std::string_view kErrExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";

// COMMAND GETKEYS / GETKEYSANDFLAGS.
inline constexpr std::string_view kErrGetKeysUnknown = "ERR Invalid command specified";
inline constexpr std::string_view kErrGetKeysNoKeys = "ERR The command has no key arguments";
inline constexpr std::string_view kErrGetKeysArity =
    "ERR Invalid number of arguments specified for command";
inline constexpr std::string_view kErrGetKeysInvalid =
    "ERR Invalid arguments specified for command";
// OBJECT FREQ / IDLETIME under the other kind of maxmemory policy.
inline constexpr std::string_view kErrNoLfu =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
    "when switching between policies at runtime LRU and LFU data will take some time to adjust.";
inline constexpr std::string_view kErrLfuNoIdle =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";
// What Lavik answers where Redis would report a per-key access counter or time it does not keep
// (doc/commands.md, OBJECT).
inline constexpr std::string_view kErrNoFreqTracking =
    "ERR Lavik keeps no per-key access frequency, OBJECT FREQ has nothing to report (see "
    "doc/commands.md, OBJECT)";
inline constexpr std::string_view kErrNoIdleTracking =
    "ERR Lavik keeps no per-key access time, OBJECT IDLETIME has nothing to report (see "
    "doc/commands.md, OBJECT)";
// SAVE / BGSAVE.
inline constexpr std::string_view kErrBgsaveInProgress = "ERR Background save already in progress";
// CLIENT TRACKING / CACHING (client-side caching, tracking/).
inline constexpr std::string_view kErrTrackingOneRedirect =
    "ERR A client can only redirect to a single other client";
inline constexpr std::string_view kErrTrackingNoRedirectClient =
    "ERR The client ID you want redirect to does not exist";
inline constexpr std::string_view kErrTrackingPrefixNeedsBcast =
    "ERR PREFIX option requires BCAST mode to be enabled";
inline constexpr std::string_view kErrTrackingSwitchBcast =
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
    "re-enabling it with a different mode.";
inline constexpr std::string_view kErrTrackingBcastOptInOut =
    "ERR OPTIN and OPTOUT are not compatible with BCAST";
inline constexpr std::string_view kErrTrackingBothOptInOut =
    "ERR You can't specify both OPTIN mode and OPTOUT mode";
inline constexpr std::string_view kErrTrackingSwitchOptInOut =
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
    "re-enabling it with a different mode.";
inline constexpr std::string_view kErrCachingNotTracking =
    "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
    "OPTOUT mode enabled";
inline constexpr std::string_view kErrCachingYes =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
inline constexpr std::string_view kErrCachingNo =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";

namespace errors_internal {

// What "%.*s" prints for a C string: up to the first NUL, at most `max` bytes.
inline std::string_view CStringPrefix(std::string_view s, size_t max) {
  const size_t nul = s.find('\0');
  if (nul != std::string_view::npos) s = s.substr(0, nul);
  return s.substr(0, max);
}

// Redis maps CR and LF in formatted errors to spaces (rejectCommandFormat, addReplyErrorFormat).
inline std::string MapNewlines(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

// `before` + `name` + `after`: an error that quotes a command's name.
inline std::string Around(std::string_view before, std::string_view name, std::string_view after) {
  std::string s(before);
  s += name;
  s += after;
  return s;
}

// "ERR <what> '<subcommand>'. Try <COMMAND> HELP.": the subcommand capped at 128 bytes, the
// command (argv[0] as typed) uppercased.
inline std::string TryHelpError(std::string_view what, std::string_view command,
                                std::string_view subcommand) {
  std::string s = Around(what, CStringPrefix(subcommand, 128), "'. Try ");
  for (char c : CStringPrefix(command, std::string_view::npos)) {
    s += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  s += " HELP.";
  return MapNewlines(std::move(s));
}

}  // namespace errors_internal

// "ERR unknown command 'foo', with args beginning with: 'a' 'b' ". `args` excludes the command
// name. As Redis does: the name is capped at 128 bytes; args are listed while the list is shorter
// than 128 bytes, each capped to the room left (so the list may end a few bytes past 128).
inline std::string UnknownCommandError(std::string_view name,
                                       std::span<const std::string_view> args) {
  std::string listed;
  for (size_t i = 0; i < args.size() && listed.size() < 128; ++i) {
    listed += '\'';
    listed += errors_internal::CStringPrefix(args[i], 128 - listed.size() + 1);
    listed += "' ";
  }
  std::string s = "ERR unknown command '";
  s += errors_internal::CStringPrefix(name, 128);
  s += "', with args beginning with: ";
  s += listed;
  return errors_internal::MapNewlines(std::move(s));
}

// "ERR wrong number of arguments for 'get' command". Redis prints the command's canonical full
// name (lowercase, "config|get" for a subcommand), not what the user typed.
inline std::string WrongArityError(std::string_view full_name) {
  return errors_internal::Around("ERR wrong number of arguments for '", full_name, "' command");
}

// "ERR unknown subcommand 'foo'. Try CONFIG HELP." `command` is argv[0] as typed (uppercased
// here); `subcommand` is argv[1] as typed (capped at 128 bytes).
inline std::string UnknownSubcommandError(std::string_view command, std::string_view subcommand) {
  return errors_internal::TryHelpError("ERR unknown subcommand '", command, subcommand);
}

// "ERR unknown subcommand or wrong number of arguments for 'foo'. Try CLIENT HELP." Redis's
// addReplySubcommandSyntaxError, used by commands that parse their own subcommands.
inline std::string SubcommandSyntaxError(std::string_view command, std::string_view subcommand) {
  return errors_internal::TryHelpError("ERR unknown subcommand or wrong number of arguments for '",
                                       command, subcommand);
}

// "ERR invalid expire time in 'set' command" (SET, SETEX, GETEX, EXPIRE...: full command name).
inline std::string InvalidExpireTimeError(std::string_view full_name) {
  return errors_internal::Around("ERR invalid expire time in '", full_name, "' command");
}

// "ERR Can't execute 'get': only (P|S)SUBSCRIBE / ... are allowed in this context" (RESP2
// connection in subscribed state).
inline std::string SubscribeContextError(std::string_view full_name) {
  std::string s = "ERR Can't execute '";
  s += full_name;
  s += "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
       "context";
  return s;
}

// "ERR Prefix 'a' overlaps with an existing prefix 'ab'. Prefixes for a single client must not
// overlap." (`existing`: an earlier call's prefix, else another of this call's). C strings, as
// Redis formats them.
inline std::string PrefixOverlapError(std::string_view prefix, std::string_view other,
                                      bool existing) {
  using errors_internal::CStringPrefix;
  return errors_internal::MapNewlines(
      "ERR Prefix '" + std::string(CStringPrefix(prefix, prefix.size())) + "' overlaps with " +
      (existing ? "an existing" : "another provided") + " prefix '" +
      std::string(CStringPrefix(other, other.size())) +
      "'. Prefixes for a single client must not overlap.");
}

}  // namespace lavik

#endif  // LAVIK_PROTOCOL_ERRORS_H_
