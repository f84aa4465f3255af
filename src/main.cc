// lavik: a Redis-compatible server that keeps a compact index in DRAM and values on an SSD.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/config.h"
#include "server/server.h"

namespace {

std::string Param(const lavik::Config& config, const char* name) {
  for (const auto& [key, value] : config.extra_params) {
    if (key == name) return value;
  }
  return "";
}

// As Redis: `daemonize yes` (unless a supervisor is in charge) forks before anything starts,
// the parent exits 0 and the server goes on in a new session with stdio on /dev/null.
bool RunInBackground(const lavik::Config& config) {
  if (Param(config, "daemonize") != "yes") return false;
  const std::string supervised = Param(config, "supervised");
  if (supervised == "systemd" || supervised == "upstart") return false;
  if (supervised == "auto" &&
      (std::getenv("NOTIFY_SOCKET") != nullptr || std::getenv("UPSTART_JOB") != nullptr)) {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  lavik::Config config;
  lavik::ParseOutcome outcome = lavik::ParseCommandLine(argc, argv, &config);
  if (outcome.kind == lavik::ParseOutcome::kExit) {
    std::FILE* out = outcome.exit_code == 0 ? stdout : stderr;
    if (!outcome.message.empty()) std::fprintf(out, "%s\n", outcome.message.c_str());
    return outcome.exit_code;
  }
  const bool background = RunInBackground(config);
  std::string pidfile = Param(config, "pidfile");
  if (background && pidfile.empty()) pidfile = "/var/run/lavik.pid";  // Redis's is redis.pid
  if (background) {
    const pid_t child = fork();
    if (child < 0) {
      std::perror("lavik: fork");
      return 1;
    }
    if (child > 0) return 0;
    setsid();
    if (int fd = open("/dev/null", O_RDWR); fd >= 0) {
      dup2(fd, STDIN_FILENO);
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      if (fd > STDERR_FILENO) close(fd);
    }
  }
  // The pid file, as Redis's createPidFile: written when set (or daemonized), removed at exit.
  if (!pidfile.empty()) {
    if (std::FILE* f = std::fopen(pidfile.c_str(), "w")) {
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
    } else {
      std::fprintf(stderr, "lavik: failed to write PID file %s\n", pidfile.c_str());
    }
  }
  int rc = 0;
  {
    lavik::Server server(std::move(config));
    rc = server.Run();
  }
  if (!pidfile.empty()) unlink(pidfile.c_str());
  return rc;
}
