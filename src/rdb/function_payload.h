// Function libraries in the RDB format (Redis 7.0 rdbSaveFunctions / rdbFunctionLoad), as
// FUNCTION DUMP / RESTORE carry them and as dump.rdb holds them:
//
//   library   0xf5 (RDB_OPCODE_FUNCTION2) + the library's code as an RDB string (its first line
//             is the "#!lua name=<lib>" metadata)
//   pre-GA    0xf6 (RDB_OPCODE_FUNCTION, Redis 7.0 rc1/rc2) + name, engine, a 0/1 length, the
//             description (if 1) and the code without its metadata line, all RDB strings; read
//             as "#!<engine> name=<name>\n<code>"
//   payload   library* + the DUMP footer (payload.h: u16 RDB version, u64 CRC-64)
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lavik::rdb {

inline constexpr uint8_t kOpcodeFunction2 = 0xf5;
inline constexpr uint8_t kOpcodeFunctionPreGa = 0xf6;

// Appends one library record (opcode + code) to *out, as dump.rdb and FUNCTION DUMP write it.
void PutFunctionLibrary(std::string_view code, std::string* out);

// FUNCTION DUMP's payload of these libraries' codes.
std::string EncodeFunctionsPayload(const std::vector<std::string>& codes);

// FUNCTION RESTORE's reading of a payload: the libraries' codes in payload order, or false with
// Redis's error text in *error ("ERR DUMP payload version or checksum are wrong", "ERR given
// type is not a function", "ERR Failed loading library payload", ...).
bool DecodeFunctionsPayload(std::string_view payload, std::vector<std::string>* codes,
                            std::string* error);

}  // namespace lavik::rdb
