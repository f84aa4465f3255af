// Command-line options of lavik-bench and their parser.
//
// ParseOptions accepts "--name value" and "--name=value"; every option is validated here, so the
// rest of the tool can trust an Options it is handed (e.g. threads <= connections, key_min <=
// key_max, a rate only in open-loop mode). Nothing is printed or exits here: errors come back as
// text for main() to show.
//
// Thread safety: pure functions; an Options is read-only once parsed and shared by all threads.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_OPTIONS_H_
#define LAVIK_TOOLS_LAVIK_BENCH_OPTIONS_H_

#include <cstdint>
#include <string>

namespace lavik::bench {

enum class KeyPattern { kRandom, kSequential };

struct Options {
  std::string host = "127.0.0.1";  // IPv4 literal; "localhost" is accepted as 127.0.0.1
  int port = 6379;
  int connections = 50;  // total over all threads
  int threads = 1;       // client threads, each an epoll loop owning connections / threads
  int pipeline = 1;      // requests in flight per connection (open loop: the cap)
  // Requests per cycle of get_ratio + set_ratio on each connection: "GET:SET".
  int get_ratio = 1;
  int set_ratio = 0;
  uint64_t key_min = 1;
  uint64_t key_max = 1000000;
  KeyPattern key_pattern = KeyPattern::kRandom;
  int value_size = 1024;  // bytes of each SET value
  double duration_s = 10;
  double warmup_s = 0;
  double rate = 0;  // open loop: total requests/s over all connections; 0 = closed loop
  bool fill = false;
  bool json = false;
  bool seed_given = false;
  uint64_t seed = 0;  // base seed; connection i uses a seed derived from (seed, i)
  bool help = false;

  bool open_loop() const { return rate > 0; }
  uint64_t key_count() const { return key_max - key_min + 1; }
};

// Parses argv[1..argc). On failure returns false and sets *error to a one-line message naming
// the offending option; *out may then be partly filled. "--help" sets out->help and succeeds.
bool ParseOptions(int argc, const char* const* argv, Options* out, std::string* error);

// The --help text.
std::string UsageText();

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_OPTIONS_H_
