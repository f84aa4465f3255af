// DUMP / RESTORE payloads (Redis 7.0 cluster.c createDumpPayload / verifyDumpPayload):
//
//   RDB object (type byte + serialized value) | u16 RDB version (10) | u64 CRC-64 of everything
//   before it (base/crc64.h)                    both little-endian
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "rdb/object.h"
#include "storage/value_type.h"

namespace lavik::rdb {

// The payload of a value (`record` as the store holds it, one record). False if it is damaged.
bool CreateDumpPayload(ValueType type, std::string_view record, const EncodeLimits& limits,
                       std::string* out);

enum class PayloadStatus {
  kOk,
  kBadVersionOrChecksum,  // "ERR DUMP payload version or checksum are wrong"
  kBadFormat,             // "ERR Bad data format"
};

// The footer every payload ends with (FUNCTION DUMP's too): appends the RDB version and the
// CRC-64 of everything in *out so far.
void AppendDumpFooter(std::string* out);
// Whether the payload ends with a footer whose version is at most kRdbVersion and whose CRC
// matches ("ERR DUMP payload version or checksum are wrong" otherwise).
bool DumpFooterOk(std::string_view payload);
inline constexpr size_t kDumpFooterBytes = 10;

// Checks the footer (a version above kRdbVersion or a CRC mismatch is rejected, as Redis does)
// and decodes the object into *type and *record.
PayloadStatus DecodeDumpPayload(std::string_view payload, ValueType* type, std::string* record);

}  // namespace lavik::rdb
