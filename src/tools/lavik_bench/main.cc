// lavik-bench: Lavik's Redis load generator. See options.cc (UsageText) for the command line and
// client.h for how load is generated and measured.
//
// Exit status: 0 on success; 1 if a connection could not be opened or failed during the run, or
// a --fill did not write every key exactly once; 2 on a command-line error.

#include <unistd.h>

#include <cstdio>
#include <string>

#include "tools/lavik_bench/client.h"
#include "tools/lavik_bench/options.h"
#include "tools/lavik_bench/report.h"
#include "tools/lavik_bench/runner.h"

namespace lavik::bench {
namespace {

int Main(int argc, char** argv) {
  Options opts;
  std::string error;
  if (!ParseOptions(argc, argv, &opts, &error)) {
    std::fprintf(stderr, "lavik-bench: %s\nTry 'lavik-bench --help'.\n", error.c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  const uint64_t seed = opts.seed_given ? opts.seed
                                        : static_cast<uint64_t>(MonotonicNs()) ^
                                              (static_cast<uint64_t>(getpid()) << 32);
  RunResult result;
  if (!RunBenchmark(opts, seed, &result, &error)) {
    std::fprintf(stderr, "lavik-bench: %s\n", error.c_str());
    return 1;
  }
  std::string text;
  if (opts.fill) {
    text = opts.json ? FormatFillJson(opts, result) : FormatFillText(opts, result);
  } else {
    text = opts.json ? FormatJson(opts, result) : FormatText(opts, result);
  }
  std::fputs(text.c_str(), stdout);
  if (opts.fill) return result.FillExact(opts) ? 0 : 1;
  return result.stats.connection_errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace lavik::bench

int main(int argc, char** argv) { return lavik::bench::Main(argc, argv); }
