// Log: one line per event, to stderr and to <log-dir>/lavik.log, in Redis's line format
// ("pid:M 30 Nov 2026 08:50:18.123 * message"). Not for the request path.
//
// Thread safety: all functions may be called from any thread (a mutex serializes lines).
#pragma once

#include <string>
#include <string_view>

namespace lavik {

enum class LogSeverity { kDebug, kVerbose, kNotice, kWarning };

// Opens <dir>/lavik.log (creating dir). Returns false + error text if it cannot.
bool OpenLog(const std::string& dir, LogSeverity min_level, std::string* error);
// SIGHUP (logrotate): closes the log file and opens <dir>/lavik.log again, so lines go to a
// fresh file once the old one was renamed. On failure the old file is kept.
bool ReopenLog(std::string* error);
// Lines below the level (loglevel / CONFIG SET loglevel) are dropped, from stderr and the file.
void Log(LogSeverity level, std::string_view message);
void SetLogLevel(LogSeverity min_level);
// Cheap check (one relaxed load) so callers skip building a message nobody will see.
bool LogEnabled(LogSeverity level);
inline void LogDebug(std::string_view m) { Log(LogSeverity::kDebug, m); }
inline void LogVerbose(std::string_view m) { Log(LogSeverity::kVerbose, m); }
inline void LogNotice(std::string_view m) { Log(LogSeverity::kNotice, m); }
inline void LogWarning(std::string_view m) { Log(LogSeverity::kWarning, m); }

}  // namespace lavik
