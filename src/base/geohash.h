// Geohash math of Redis 7.0's geo commands, bit for bit: the 52-bit interleaved score of a
// (longitude, latitude) pair, its decoding to the cell centre, the 11-character standard geohash
// string, neighbouring cells, the step (precision) a search radius needs, the nine cells a radius
// or box search scans, and the haversine / box distance checks on Redis's earth radius. Results
// must equal Redis's to the last bit (scores, distances and coordinates are replied with 17 or 4
// digits), so every formula keeps Redis's order of floating-point operations.
//
// Thread safety: pure functions and value types.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace lavik {

inline constexpr double kGeoLonMin = -180;
inline constexpr double kGeoLonMax = 180;
inline constexpr double kGeoLatMin = -85.05112878;  // the Web Mercator limit, as in Redis
inline constexpr double kGeoLatMax = 85.05112878;
inline constexpr int kGeoStepMax = 26;  // 26 bits per coordinate: a 52-bit score
inline constexpr double kGeoEarthRadiusM = 6372797.560856;

// A cell: `step` bits of each coordinate, interleaved (latitude on the even bits, longitude on
// the odd ones). bits 0 / step 0 is "no cell" (a neighbour a search skips).
struct GeoCell {
  uint64_t bits = 0;
  int step = 0;
  bool none() const { return bits == 0 && step == 0; }
  bool operator==(const GeoCell&) const = default;
};

struct GeoRange {
  double min, max;
};

struct GeoArea {
  GeoRange lon, lat;
};

// The cell of (lon, lat) at `step` within the given coordinate ranges; false if the point is
// outside them or outside Redis's WGS84 limits.
bool GeoEncode(GeoRange lon_range, GeoRange lat_range, double lon, double lat, int step,
               GeoCell* out);
// The same in the geo set ranges (longitude ±180, latitude ±85.05112878).
bool GeoEncodeWgs84(double lon, double lat, int step, GeoCell* out);
// The bounds of a cell in the geo set ranges.
GeoArea GeoDecodeWgs84(GeoCell cell);

// The sorted-set score of a point (a step-26 cell as an integer below 2^52, Redis's score).
uint64_t GeoScore(double lon, double lat);
// The point a score stands for: its cell's centre, clamped to the WGS84 limits (GEOPOS).
void GeoDecodeScore(double score, double* lon, double* lat);
// The 11-character geohash (geohash.org alphabet) of a point Redis re-encodes for GEOHASH.
std::string GeoHashString(double lon, double lat);

// The eight cells around `cell` at its step, wrapping around in longitude and latitude.
struct GeoNeighbors {
  GeoCell north, south, east, west, north_east, north_west, south_east, south_west;
};
GeoNeighbors GeoNeighborsOf(GeoCell cell);

// The step whose cells are about as wide as `range_m` meters at latitude `lat` (1..26).
int GeoEstimateSteps(double range_m, double lat);

// Great-circle distance in meters between two points in degrees.
double GeoDistance(double lon1, double lat1, double lon2, double lat2);

// A search shape: a circle of `radius` or a `width` x `height` box (in the unit whose size in
// meters is `conversion`) around (lon, lat).
struct GeoShape {
  bool box = false;
  double lon = 0, lat = 0;
  double radius = 0, width = 0, height = 0;
  double conversion = 1;
};

// True if the point is inside the shape, with its distance from the centre in meters.
bool GeoWithinShape(const GeoShape& shape, double lon, double lat, double* dist_m);

// The nine cells a search scans, in Redis's order (centre, N, S, E, W, NE, NW, SE, SW); cells
// the shape cannot reach are none().
std::array<GeoCell, 9> GeoSearchCells(const GeoShape& shape);

// The score range [*min, *max) holding every point of `cell`.
void GeoCellScores(GeoCell cell, uint64_t* min, uint64_t* max);

}  // namespace lavik
