// Geo commands (Redis 7.0 geo.c): GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS[_RO],
// GEORADIUSBYMEMBER[_RO], GEOSEARCH and GEOSEARCHSTORE. A geo set is a sorted set whose scores
// are 52-bit interleaved geohashes (base/geohash.h), stored and read with the sorted-set code
// (zset_common.h, collection_access.h). A search scans, as Redis does, the score ranges of the
// nine cells around the centre at the step its radius needs, keeps the points whose exact
// distance (or box test) passes, and sorts them by distance when asked; so results, their order
// and distances equal Redis's for the same data. Searches that store (STORE, STOREDIST,
// GEOSEARCHSTORE) read and write under the shard locks of both keys (multi_shard.h).
#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/geohash.h"
#include "base/numbers.h"
#include "commands/collection_access.h"
#include "commands/families.h"
#include "commands/multi_shard.h"
#include "commands/zset_common.h"

namespace lavik {
namespace {

constexpr ValueType kZSet = ValueType::kZSet;
constexpr size_t kNoError = std::numeric_limits<size_t>::max();

bool ParseLonLatOrReply(Context& ctx, size_t at, double* lon, double* lat) {
  if (!ParseDouble(ctx.args[at], lon) || !ParseDouble(ctx.args[at + 1], lat)) {
    ctx.reply->Error(kErrNotFloat);
    return false;
  }
  if (*lon < kGeoLonMin || *lon > kGeoLonMax || *lat < kGeoLatMin || *lat > kGeoLatMax) {
    char buf[700];
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", *lon, *lat);
    ctx.reply->Error(buf);
    return false;
  }
  return true;
}

// Meters per unit; false after replying the error.
bool ParseUnitOrReply(Context& ctx, std::string_view unit, double* to_meters) {
  if (EqualsNoCase(unit, "m")) {
    *to_meters = 1;
  } else if (EqualsNoCase(unit, "km")) {
    *to_meters = 1000;
  } else if (EqualsNoCase(unit, "ft")) {
    *to_meters = 0.3048;
  } else if (EqualsNoCase(unit, "mi")) {
    *to_meters = 1609.34;
  } else {
    ctx.reply->Error(kErrGeoUnit);
    return false;
  }
  return true;
}

// Distances are replied with 4 decimals, as a bulk string (also in RESP3).
void ReplyDistance(Context& ctx, double d) {
  char buf[400];
  const int n = std::snprintf(buf, sizeof(buf), "%.4f", d);
  ctx.reply->Bulk(std::string_view(buf, static_cast<size_t>(n)));
}

// Coordinates are Redis's "human" long double text: a bulk in RESP2, a double in RESP3.
void ReplyCoordinate(Context& ctx, double v) {
  const std::string text = FormatLongDouble(v);
  if (ctx.reply->resp() >= 3) {
    ctx.reply->Raw("," + text + "\r\n");
  } else {
    ctx.reply->Bulk(text);
  }
}

// The score of `member` in `v`; false if it is not there.
bool MemberScore(const CollectionView& v, std::string_view member, double* score) {
  const int64_t at = v.Find(member);
  if (at < 0) return false;
  *score = ScoreAt(v, static_cast<uint32_t>(at));
  return true;
}

// Where each of `members` of the geo set ctx.args[1] is (nullopt: not a member; all of them if
// the key is missing). False after replying the error (WRONGTYPE).
struct Position {
  double lon, lat;
};
TaskOf<bool> ReadPositionsOrReply(Context& ctx, std::span<const std::string_view> members,
                                  std::vector<std::optional<Position>>* out) {
  CollectionRead z;
  if (!co_await ReadCollectionOrReply(ctx, *ctx.store, ctx.args[1], kZSet, true, false, &z,
                                      ReadScope::Members(members))) {
    co_return false;
  }
  out->assign(members.size(), std::nullopt);
  for (size_t i = 0; i < members.size(); ++i) {
    double score;
    if (!MemberScore(z.view, members[i], &score)) continue;
    Position p;
    GeoDecodeScore(score, &p.lon, &p.lat);
    (*out)[i] = p;
  }
  co_return true;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of the members' geohash scores.
Task GeoAdd(Context& ctx) {
  bool nx = false, xx = false, ch = false;
  size_t i = 2;
  for (; i < ctx.args.size(); ++i) {
    if (EqualsNoCase(ctx.args[i], "nx")) {
      nx = true;
    } else if (EqualsNoCase(ctx.args[i], "xx")) {
      xx = true;
    } else if (EqualsNoCase(ctx.args[i], "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t n = (ctx.args.size() - i) / 3;
  if ((ctx.args.size() - i) % 3 != 0 || (nx && xx) || n == 0) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  std::vector<double> scores(n);
  std::vector<std::string> score_bytes(n);
  std::vector<std::string_view> members(n);
  for (size_t k = 0; k < n; ++k) {
    double lon, lat;
    if (!ParseLonLatOrReply(ctx, i + 3 * k, &lon, &lat)) co_return;
    scores[k] = static_cast<double>(GeoScore(lon, lat));
    score_bytes[k] = EncodeScore(scores[k]);
    members[k] = ctx.args[i + 3 * k + 2];
  }
  int64_t added = 0, changed = 0;
  const bool ok = co_await RewriteCollectionOrReply(
      ctx, kZSet, "zadd",
      [&](const CollectionView& v, bool, std::string* out) {
        added = changed = 0;
        std::vector<CollectionChange> changes;
        std::vector<size_t> applied;  // pairs written so far: a repeated member sees them
        for (size_t k = 0; k < n; ++k) {
          bool have = false;
          double cur = 0;
          for (auto j = applied.rbegin(); j != applied.rend() && !have; ++j) {
            if (members[*j] == members[k]) {
              have = true;
              cur = scores[*j];
            }
          }
          if (!have) {
            const int64_t at = v.Find(members[k]);
            have = at >= 0;
            if (have) cur = ScoreAt(v, static_cast<uint32_t>(at));
          }
          if (have ? nx : xx) continue;
          if (!have) {
            ++added;
          } else if (cur != scores[k]) {
            ++changed;
          } else {
            continue;
          }
          applied.push_back(k);
          changes.push_back({members[k], score_bytes[k], false});
        }
        if (changes.empty()) return Rewrite::kUnchanged;
        *out = ApplyChanges(v, std::move(changes), true);
        return Rewrite::kWrite;
      },
      ReadScope::Members(members));
  if (ok) ctx.reply->Integer(added + (ch ? changed : 0));
}

// GEODIST key member1 member2 [unit]
Task GeoDist(Context& ctx) {
  double to_meters = 1;
  if (ctx.args.size() > 5) {
    ctx.reply->Error(kErrSyntax);
    co_return;
  }
  if (ctx.args.size() == 5 && !ParseUnitOrReply(ctx, ctx.args[4], &to_meters)) co_return;
  std::vector<std::optional<Position>> at;
  if (!co_await ReadPositionsOrReply(ctx, ctx.args.subspan(2, 2), &at)) co_return;
  if (!at[0] || !at[1]) {
    ctx.reply->Null();
    co_return;
  }
  ReplyDistance(ctx, GeoDistance(at[0]->lon, at[0]->lat, at[1]->lon, at[1]->lat) / to_meters);
}

// GEOHASH key [member ...]: nil for a missing member.
Task GeoHash(Context& ctx) {
  std::vector<std::optional<Position>> at;
  if (!co_await ReadPositionsOrReply(ctx, ctx.args.subspan(2), &at)) co_return;
  ctx.reply->Array(at.size());
  for (const std::optional<Position>& p : at) {
    if (p) {
      ctx.reply->Bulk(GeoHashString(p->lon, p->lat));
    } else {
      ctx.reply->Null();
    }
  }
}

// GEOPOS key [member ...]: [lon, lat] or a nil array for a missing member.
Task GeoPos(Context& ctx) {
  std::vector<std::optional<Position>> at;
  if (!co_await ReadPositionsOrReply(ctx, ctx.args.subspan(2), &at)) co_return;
  ctx.reply->Array(at.size());
  for (const std::optional<Position>& p : at) {
    if (!p) {
      ctx.reply->NullArray();
      continue;
    }
    ctx.reply->Array(2);
    ReplyCoordinate(ctx, p->lon);
    ReplyCoordinate(ctx, p->lat);
  }
}

// ---- searches ----

enum SearchFlags : uint32_t {
  kByCoords = 1,     // GEORADIUS key lon lat radius unit ...
  kByMember = 2,     // GEORADIUSBYMEMBER key member radius unit ...
  kSearch = 4,       // GEOSEARCH key FROM... BY...
  kSearchStore = 8,  // GEOSEARCHSTORE dst key FROM... BY...
  kNoStore = 16,     // the _RO forms
};

enum class Sort { kNone, kAsc, kDesc };

// The options of a search, parsed without the source key (Redis reads it first, so the errors
// that depend on it are replied in Redis's order by the caller, using error_at).
struct SearchArgs {
  size_t base = 0;  // first option argument
  GeoShape shape;
  bool withdist = false, withhash = false, withcoord = false, any = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;
  std::string_view store;
  bool has_store = false, storedist = false;
  bool frommember = false, fromloc = false, byradius = false, bybox = false;
  std::string_view from_member;
  size_t from_member_at = 0;
  std::string error;  // the first option error, at argument error_at
  size_t error_at = kNoError;
};

// A number of a search (radius, width, height) with Redis's error text for it.
bool ParseSearchNumber(std::string_view s, std::string_view what, double* v, std::string* error) {
  if (!ParseDouble(s, v)) {
    *error = "ERR need numeric " + std::string(what);
    return false;
  }
  return true;
}

bool ParseUnit(std::string_view unit, double* to_meters, std::string* error) {
  for (auto [name, m] : {std::pair{"m", 1.0}, {"km", 1000.0}, {"ft", 0.3048}, {"mi", 1609.34}}) {
    if (EqualsNoCase(unit, name)) {
      *to_meters = m;
      return true;
    }
  }
  *error = kErrGeoUnit;
  return false;
}

// radius unit at args[at]: false with *error.
bool ParseRadius(Context& ctx, size_t at, GeoShape* shape, std::string* error) {
  if (!ParseSearchNumber(ctx.args[at], "radius", &shape->radius, error)) return false;
  if (shape->radius < 0) {
    *error = "ERR radius cannot be negative";
    return false;
  }
  shape->box = false;
  return ParseUnit(ctx.args[at + 1], &shape->conversion, error);
}

bool ParseLonLat(Context& ctx, size_t at, GeoShape* shape, std::string* error) {
  if (!ParseDouble(ctx.args[at], &shape->lon) || !ParseDouble(ctx.args[at + 1], &shape->lat)) {
    *error = kErrNotFloat;
    return false;
  }
  if (shape->lon < kGeoLonMin || shape->lon > kGeoLonMax || shape->lat < kGeoLatMin ||
      shape->lat > kGeoLatMax) {
    char buf[700];
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", shape->lon,
                  shape->lat);
    *error = buf;
    return false;
  }
  return true;
}

// The option loop of Redis georadiusGeneric.
void ParseSearchOptions(Context& ctx, uint32_t flags, SearchArgs* a) {
  const size_t argc = ctx.args.size();
  const bool search = flags & (kSearch | kSearchStore);
  for (size_t i = a->base; i < argc; ++i) {
    const std::string_view o = ctx.args[i];
    const size_t left = argc - i - 1;  // arguments after this one
    std::string& error = a->error;
    bool ok = true;
    if (EqualsNoCase(o, "withdist")) {
      a->withdist = true;
    } else if (EqualsNoCase(o, "withhash")) {
      a->withhash = true;
    } else if (EqualsNoCase(o, "withcoord")) {
      a->withcoord = true;
    } else if (EqualsNoCase(o, "any")) {
      a->any = true;
    } else if (EqualsNoCase(o, "asc")) {
      a->sort = Sort::kAsc;
    } else if (EqualsNoCase(o, "desc")) {
      a->sort = Sort::kDesc;
    } else if (EqualsNoCase(o, "count") && left >= 1) {
      if (!ParseInt64(ctx.args[i + 1], &a->count)) {
        ok = false;
        error = kErrNotInteger;
      } else if (a->count <= 0) {
        ok = false;
        error = "ERR COUNT must be > 0";
      }
      ++i;
    } else if ((EqualsNoCase(o, "store") || EqualsNoCase(o, "storedist")) && left >= 1 &&
               !(flags & kNoStore) && !search) {
      a->store = ctx.args[i + 1];
      a->has_store = true;
      a->storedist = EqualsNoCase(o, "storedist");
      ++i;
    } else if (EqualsNoCase(o, "storedist") && (flags & kSearchStore)) {
      a->storedist = true;
    } else if (EqualsNoCase(o, "frommember") && left >= 1 && search && !a->fromloc) {
      a->frommember = true;
      a->from_member = ctx.args[i + 1];
      a->from_member_at = i;
      ++i;
    } else if (EqualsNoCase(o, "fromlonlat") && left >= 2 && search && !a->frommember) {
      ok = ParseLonLat(ctx, i + 1, &a->shape, &error);
      a->fromloc = true;
      i += 2;
    } else if (EqualsNoCase(o, "byradius") && left >= 2 && search && !a->bybox) {
      ok = ParseRadius(ctx, i + 1, &a->shape, &error);
      a->byradius = true;
      i += 2;
    } else if (EqualsNoCase(o, "bybox") && left >= 3 && search && !a->byradius) {
      GeoShape& s = a->shape;
      ok = ParseSearchNumber(ctx.args[i + 1], "width", &s.width, &error) &&
           ParseSearchNumber(ctx.args[i + 2], "height", &s.height, &error);
      if (ok && (s.width < 0 || s.height < 0)) {
        ok = false;
        error = "ERR height or width cannot be negative";
      }
      ok = ok && ParseUnit(ctx.args[i + 3], &s.conversion, &error);
      s.box = true;
      a->bybox = true;
      i += 3;
    } else {
      ok = false;
      error = kErrSyntax;
    }
    if (!ok) {
      a->error_at = i;
      return;
    }
  }
}

// A point a search found.
struct GeoPoint {
  std::string_view member;
  double score;
  double lon, lat;
  double dist;  // meters, then the request's unit
};

// Redis membersOfAllNeighbors over the set's entries in score order: the points of the nine
// cells inside the shape, cell after cell, each cell in score order. `limit` (ANY) stops early.
std::vector<GeoPoint> FindPoints(const std::vector<ZEntry>& sorted, const GeoShape& shape,
                                 uint64_t limit) {
  std::vector<GeoPoint> out;
  const std::array<GeoCell, 9> cells = GeoSearchCells(shape);
  size_t last = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].none()) continue;
    // A huge radius can make neighbours repeat: skip a cell equal to the last one scanned.
    if (last != 0 && cells[i] == cells[last]) continue;
    uint64_t min, max;
    GeoCellScores(cells[i], &min, &max);
    auto it = std::lower_bound(sorted.begin(), sorted.end(), static_cast<double>(min),
                               [](const ZEntry& e, double s) { return e.score < s; });
    for (; it != sorted.end() && it->score < static_cast<double>(max); ++it) {
      GeoPoint p{it->member, it->score, 0, 0, 0};
      GeoDecodeScore(it->score, &p.lon, &p.lat);
      if (GeoWithinShape(shape, p.lon, p.lat, &p.dist)) out.push_back(p);
      if (limit != 0 && out.size() >= limit) break;
    }
    last = i;
    if (limit != 0 && out.size() >= limit) break;
  }
  return out;
}

// Replies the points with the WITH* options Redis gives them (always in the order dist, hash,
// coord).
void ReplyPoints(Context& ctx, const SearchArgs& a, const std::vector<GeoPoint>& points) {
  const size_t options = (a.withdist ? 1 : 0) + (a.withhash ? 1 : 0) + (a.withcoord ? 1 : 0);
  ctx.reply->Array(points.size());
  for (const GeoPoint& p : points) {
    if (options != 0) ctx.reply->Array(options + 1);
    ctx.reply->Bulk(p.member);
    if (a.withdist) ReplyDistance(ctx, p.dist);
    if (a.withhash) ctx.reply->Integer(static_cast<int64_t>(p.score));
    if (a.withcoord) {
      ctx.reply->Array(2);
      ReplyCoordinate(ctx, p.lon);
      ReplyCoordinate(ctx, p.lat);
    }
  }
}

// Everything after the source is read: the errors in Redis's order, the search, the reply or
// the store (into keys()[1] of the plan). `error` gets what must be replied as an error.
Task SearchRead(Context& ctx, uint32_t flags, SearchArgs& a, KeyPlan& plan,
                const CollectionRead& src, std::string* error, bool* replied) {
  const bool exists = src.info.exists;
  const bool search = flags & (kSearch | kSearchStore);
  std::string center_error;
  if (flags & kByCoords) {
    if (ParseLonLat(ctx, 2, &a.shape, &center_error)) ParseRadius(ctx, 4, &a.shape, &center_error);
  } else if ((flags & kByMember) && exists) {
    double score;
    if (!MemberScore(src.view, ctx.args[2], &score)) {
      center_error = "ERR could not decode requested zset member";
    } else {
      GeoDecodeScore(score, &a.shape.lon, &a.shape.lat);
      ParseRadius(ctx, 3, &a.shape, &center_error);
    }
  }
  if (!center_error.empty()) {
    *error = center_error;
    co_return;
  }
  if (a.frommember && exists && a.from_member_at < a.error_at) {
    double score;
    if (!MemberScore(src.view, a.from_member, &score)) {
      *error = "ERR could not decode requested zset member";
      co_return;
    }
    GeoDecodeScore(score, &a.shape.lon, &a.shape.lat);
  }
  if (!a.error.empty()) {
    *error = a.error;
    co_return;
  }
  const bool storing = a.has_store;
  if (storing && (a.withdist || a.withhash || a.withcoord)) {
    *error = std::string("ERR ") +
             ((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
             " is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
    co_return;
  }
  if (search && !(a.frommember || a.fromloc)) {
    *error = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
             std::string(ctx.args[0]);
    co_return;
  }
  if (search && !(a.byradius || a.bybox)) {
    *error =
        "ERR exactly one of BYRADIUS and BYBOX can be specified for " + std::string(ctx.args[0]);
    co_return;
  }
  if (a.any && a.count == 0) {
    *error = "ERR the ANY argument requires COUNT argument";
    co_return;
  }
  std::vector<GeoPoint> points;
  if (exists) {
    if (a.count != 0 && a.sort == Sort::kNone && !a.any) a.sort = Sort::kAsc;
    points = FindPoints(SortedEntries(src.view), a.shape, a.any ? a.count : 0);
    if (a.sort == Sort::kAsc) {
      std::stable_sort(points.begin(), points.end(),
                       [](const GeoPoint& x, const GeoPoint& y) { return x.dist < y.dist; });
    } else if (a.sort == Sort::kDesc) {
      std::stable_sort(points.begin(), points.end(),
                       [](const GeoPoint& x, const GeoPoint& y) { return x.dist > y.dist; });
    }
    if (a.count != 0 && points.size() > static_cast<uint64_t>(a.count)) points.resize(a.count);
    for (GeoPoint& p : points) p.dist /= a.shape.conversion;
  }
  if (!storing) {
    ReplyPoints(ctx, a, points);
    *replied = true;
    co_return;
  }
  std::vector<ZEntry> entries;
  entries.reserve(points.size());
  for (const GeoPoint& p : points) entries.push_back({a.storedist ? p.dist : p.score, p.member});
  co_await StoreZSetResult(
      ctx, plan, 1, (flags & kSearchStore) ? "geosearchstore" : "georadiusstore", entries, error);
  if (error->empty()) {
    ctx.reply->Integer(static_cast<int64_t>(points.size()));
    *replied = true;
  }
}

// Redis georadiusGeneric: `src_at` is the source key's argument.
Task SearchGeneric(Context& ctx, uint32_t flags) {
  SearchArgs a;
  size_t src_at = 1;
  if (flags & kByCoords) {
    a.base = 6;
  } else if (flags & kByMember) {
    a.base = 5;
  } else if (flags & kSearch) {
    a.base = 2;
  } else {
    a.base = 3;
    src_at = 2;
    a.store = ctx.args[1];
    a.has_store = true;
  }
  ParseSearchOptions(ctx, flags, &a);
  std::vector<std::string_view> keys{ctx.args[src_at]};
  if (a.has_store) keys.push_back(a.store);
  KeyPlan plan(ctx, std::move(keys));
  std::string error;
  bool replied = false;
  CollectionRead src;
  co_await plan.Lock();
  co_await plan.Run(plan.shard_of(0), [&](Store& st) -> Task {
    co_await ReadCollection(st, plan.keys()[0], kZSet, ctx.now_ms, true, true, &src, &error);
  });
  if (error.empty()) co_await SearchRead(ctx, flags, a, plan, src, &error, &replied);
  co_await plan.Unlock();
  if (!error.empty()) ctx.reply->Error(error);
}

Task GeoRadius(Context& ctx) { co_await SearchGeneric(ctx, kByCoords); }
Task GeoRadiusRo(Context& ctx) { co_await SearchGeneric(ctx, kByCoords | kNoStore); }
Task GeoRadiusByMember(Context& ctx) { co_await SearchGeneric(ctx, kByMember); }
Task GeoRadiusByMemberRo(Context& ctx) { co_await SearchGeneric(ctx, kByMember | kNoStore); }
Task GeoSearch(Context& ctx) { co_await SearchGeneric(ctx, kSearch); }
Task GeoSearchStore(Context& ctx) { co_await SearchGeneric(ctx, kSearchStore); }

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const CommandSpec kGeoCommands[] = {
    {"geoadd", -5, kW, 1, 1, 1, &GeoAdd, "@write @geo @slow", "geo",
     "Add one or more geospatial items in the geospatial index represented using a sorted set",
     "3.2.0"},
    {"geodist", -4, kR, 1, 1, 1, &GeoDist, "@read @geo @slow", "geo",
     "Returns the distance between two members of a geospatial index", "3.2.0"},
    {"geohash", -2, kR, 1, 1, 1, &GeoHash, "@read @geo @slow", "geo",
     "Returns members of a geospatial index as standard geohash strings", "3.2.0"},
    {"geopos", -2, kR, 1, 1, 1, &GeoPos, "@read @geo @slow", "geo",
     "Returns longitude and latitude of members of a geospatial index", "3.2.0"},
    {"georadius", -6, kW | kCmdMovableKeys, 1, 1, 1, &GeoRadius, "@write @geo @slow", "geo",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a point",
     "3.2.0"},
    {"georadius_ro", -6, kR, 1, 1, 1, &GeoRadiusRo, "@read @geo @slow", "geo",
     "A read-only variant for GEORADIUS", "3.2.10"},
    {"georadiusbymember", -5, kW | kCmdMovableKeys, 1, 1, 1, &GeoRadiusByMember,
     "@write @geo @slow", "geo",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a member",
     "3.2.0"},
    {"georadiusbymember_ro", -5, kR, 1, 1, 1, &GeoRadiusByMemberRo, "@read @geo @slow", "geo",
     "A read-only variant for GEORADIUSBYMEMBER", "3.2.10"},
    {"geosearch", -7, kR, 1, 1, 1, &GeoSearch, "@read @geo @slow", "geo",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle.",
     "6.2.0"},
    {"geosearchstore", -8, kW, 1, 2, 1, &GeoSearchStore, "@write @geo @slow", "geo",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle, and store the result in another key.",
     "6.2.0"},
};

}  // namespace

std::span<const CommandSpec> GeoCommands() { return kGeoCommands; }

}  // namespace lavik
