// ParseReply: recognizes one complete RESP2/RESP3 reply at the start of a buffer, without
// copying it. lavik-bench only needs the reply's kind (nil GET = miss, error = error) and its
// length, so bulk payloads are skipped, never materialized; aggregates are walked element by
// element (depth-limited) so any reply a server may send is framed correctly.
//
// Thread safety: pure function.

#ifndef LAVIK_TOOLS_LAVIK_BENCH_REPLY_PARSER_H_
#define LAVIK_TOOLS_LAVIK_BENCH_REPLY_PARSER_H_

#include <cstddef>
#include <cstdint>

namespace lavik::bench {

enum class ReplyKind {
  kSimple,     // +OK
  kError,      // -ERR ... / !<len> (RESP3 blob error)
  kInteger,    // :1
  kBulk,       // $3\r\nabc
  kNil,        // $-1, *-1, RESP3 _
  kAggregate,  // *N, %N, ~N, >N
  kOther,      // other RESP3 scalars (#, ,, (, =)
};

struct Reply {
  ReplyKind kind = ReplyKind::kOther;
  int64_t integer = 0;  // kInteger: the value; kBulk / kAggregate: the length
};

enum class ParseStatus { kDone, kNeedMore, kError };

// Parses the reply starting at data[0]. kDone: *reply and *consumed describe it. kNeedMore: the
// buffer holds only part of a reply. kError: not RESP (the connection is beyond repair).
ParseStatus ParseReply(const char* data, size_t len, Reply* reply, size_t* consumed);

}  // namespace lavik::bench

#endif  // LAVIK_TOOLS_LAVIK_BENCH_REPLY_PARSER_H_
