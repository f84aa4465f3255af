// The command families of this layer; each returns its registration table (plain data).
#pragma once

#include <span>

#include "commands/command.h"

namespace lavik {

std::span<const CommandSpec> StringCommands();
std::span<const CommandSpec> KeyCommands();
std::span<const CommandSpec> HashCommands();
std::span<const CommandSpec> SetCommands();
std::span<const CommandSpec> ListCommands();
std::span<const CommandSpec> ZSetSingleKeyCommands();  // zset_family.cc
std::span<const CommandSpec> ZSetMultiKeyCommands();   // zset_multi.cc
std::span<const CommandSpec> StreamCommands();         // stream_family.cc
std::span<const CommandSpec> StreamGroupCommands();    // stream_groups.cc
std::span<const CommandSpec> StreamInfoCommands();     // stream_info.cc
std::span<const CommandSpec> SortCommands();           // sort_family.cc
std::span<const CommandSpec> BitmapCommands();         // bitmap_family.cc
std::span<const CommandSpec> HyperLogLogCommands();    // hyperloglog_family.cc
std::span<const CommandSpec> GeoCommands();            // geo_family.cc
std::span<const CommandSpec> DumpCommands();           // dump_family.cc
std::span<const CommandSpec> DbCommands();             // db_family.cc (MOVE, SWAPDB)
std::span<const CommandSpec> MigrateCommands();        // migrate_family.cc

}  // namespace lavik
