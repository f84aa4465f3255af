#include "base/log.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>

namespace lavik {
namespace {

std::mutex log_mu;
FILE* log_file = nullptr;
std::string log_path;  // under log_mu
// Read without the mutex on every Log() call (connection lines come from every worker).
std::atomic<LogSeverity> log_min{LogSeverity::kNotice};

char Mark(LogSeverity s) {
  switch (s) {
    case LogSeverity::kDebug:
      return '.';
    case LogSeverity::kVerbose:
      return '-';
    case LogSeverity::kNotice:
      return '*';
    case LogSeverity::kWarning:
      return '#';
  }
  return '*';
}

}  // namespace

bool OpenLog(const std::string& dir, LogSeverity min_level, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create log directory '" + dir + "': " + ec.message();
    return false;
  }
  std::string path = dir + "/lavik.log";
  FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    *error = "cannot open log file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::lock_guard<std::mutex> lock(log_mu);
  if (log_file != nullptr) std::fclose(log_file);
  log_file = f;
  log_path = path;
  log_min.store(min_level, std::memory_order_relaxed);
  return true;
}

bool ReopenLog(std::string* error) {
  std::lock_guard<std::mutex> lock(log_mu);
  if (log_path.empty()) return true;
  FILE* f = std::fopen(log_path.c_str(), "a");
  if (f == nullptr) {
    *error = "cannot reopen log file '" + log_path + "': " + std::strerror(errno);
    return false;
  }
  if (log_file != nullptr) std::fclose(log_file);
  log_file = f;
  return true;
}

void SetLogLevel(LogSeverity min_level) { log_min.store(min_level, std::memory_order_relaxed); }

bool LogEnabled(LogSeverity level) { return level >= log_min.load(std::memory_order_relaxed); }

void Log(LogSeverity level, std::string_view message) {
  if (!LogEnabled(level)) return;
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm t;
  localtime_r(&tv.tv_sec, &t);
  char stamp[64];
  size_t n = std::strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &t);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03d", static_cast<int>(tv.tv_usec / 1000));
  std::lock_guard<std::mutex> lock(log_mu);
  for (FILE* out : {stderr, log_file}) {
    if (out == nullptr) continue;
    std::fprintf(out, "%d:M %s %c %.*s\n", static_cast<int>(getpid()), stamp, Mark(level),
                 static_cast<int>(message.size()), message.data());
    std::fflush(out);
  }
}

}  // namespace lavik
