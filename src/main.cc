// lavik: a Redis-compatible server that keeps a compact index in DRAM and values on an SSD.
#include <cstdio>

#include "config/config.h"
#include "server/server.h"

int main(int argc, char** argv) {
  lavik::Config config;
  lavik::ParseOutcome outcome = lavik::ParseCommandLine(argc, argv, &config);
  if (outcome.kind == lavik::ParseOutcome::kExit) {
    std::FILE* out = outcome.exit_code == 0 ? stdout : stderr;
    if (!outcome.message.empty()) std::fprintf(out, "%s\n", outcome.message.c_str());
    return outcome.exit_code;
  }
  lavik::Server server(std::move(config));
  return server.Run();
}
