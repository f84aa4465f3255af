// The results of a lavik-bench run and their two printed forms: a short text table for people
// and one JSON object (a single line) for scripts.
//
// Thread safety: pure functions.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_REPORT_H_
#define LAVIK_TOOLS_LAVIK_BENCH_REPORT_H_

#include <string>

#include "tools/lavik_bench/options.h"
#include "tools/lavik_bench/runner.h"

namespace lavik::bench {

std::string FormatText(const Options& o, const RunResult& r);
std::string FormatJson(const Options& o, const RunResult& r);

// --fill results: keys written, rate, errors.
std::string FormatFillText(const Options& o, const RunResult& r);
std::string FormatFillJson(const Options& o, const RunResult& r);

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_REPORT_H_
