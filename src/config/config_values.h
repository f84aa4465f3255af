// Value parsing for ConfigRegistry (config_registry.cc): small helpers and the parsers of the
// parameters whose values have their own syntax in Redis (save, client-output-buffer-limit,
// notify-keyspace-events, latency-tracking-info-percentiles, bind, replicaof, ...).
//
// Each parser checks `in`; on success it writes the value as CONFIG GET shows it to *out, else
// the bare reason ("argument must be a memory value") to *err. `current` is the stored value
// (client-output-buffer-limit changes only the classes named).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lavik {
namespace config_values {

// A Redis memory value: digits with an optional unit (b, k, kb, m, mb, g, gb; any case);
// saturates at UINT64_MAX. False if it is not one.
bool ParseMemory(std::string_view text, uint64_t* out);

std::string ToLower(std::string_view s);
// "argument must be between MIN and MAX inclusive", as Redis words it.
std::string RangeError(int64_t min, uint64_t max);

bool ParseSave(std::string_view in, std::string_view current, std::string* out, std::string* err);
bool ParseClientOutputBufferLimit(std::string_view in, std::string_view current, std::string* out,
                                  std::string* err);
bool ParsePercentiles(std::string_view in, std::string_view current, std::string* out,
                      std::string* err);
// shutdown-on-sigterm / -sigint: Redis's flag set, some of save, nosave, now, force (or
// default, none), stored in that order ("nosave now").
bool ParseShutdownOnSignal(std::string_view in, std::string_view current, std::string* out,
                           std::string* err);
struct ShutdownFlags {
  bool save = false, nosave = false, now = false, force = false;
};
// The flags of a value ParseShutdownOnSignal stored.
ShutdownFlags ShutdownOnSignalFlags(std::string_view stored);
bool ParseMemoryOrPercent(std::string_view in, std::string_view current, std::string* out,
                          std::string* err);
// Stores every flag ("AnKE" for KEAn); CONFIG GET shows ShowKeyspaceEvents of it ("AKE", as
// Redis, which hides 'n' under 'A').
bool ParseKeyspaceEvents(std::string_view in, std::string_view current, std::string* out,
                         std::string* err);
std::string ShowKeyspaceEvents(std::string_view stored);
bool ParseOomScoreAdjValues(std::string_view in, std::string_view current, std::string* out,
                            std::string* err);
bool ParseBind(std::string_view in, std::string_view current, std::string* out, std::string* err);
bool ParseReplicaOf(std::string_view in, std::string_view current, std::string* out,
                    std::string* err);
bool ParseProcTitleTemplate(std::string_view in, std::string_view current, std::string* out,
                            std::string* err);
bool ParseOctal(std::string_view in, std::string_view current, std::string* out, std::string* err);

}  // namespace config_values
}  // namespace lavik
