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
void Log(LogSeverity level, std::string_view message);
void SetLogLevel(LogSeverity min_level);
inline void LogNotice(std::string_view m) { Log(LogSeverity::kNotice, m); }
inline void LogWarning(std::string_view m) { Log(LogSeverity::kWarning, m); }

}  // namespace lavik
