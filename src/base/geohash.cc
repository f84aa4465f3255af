#include "base/geohash.h"

#include <cmath>

namespace lavik {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr uint64_t kEvenBits = 0x5555555555555555ULL;  // latitude
constexpr uint64_t kOddBits = 0xaaaaaaaaaaaaaaaaULL;   // longitude
// Redis's Mercator half-circumference, the start of its step estimate.
constexpr double kMercatorMax = 20037726.37;

constexpr GeoRange kLonRange{kGeoLonMin, kGeoLonMax};
constexpr GeoRange kLatRange{kGeoLatMin, kGeoLatMax};

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

// Bit i of v moves to bit 2i.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Bit 2i of v moves to bit i (the odd bits are dropped).
uint32_t Compact(uint64_t v) {
  uint64_t x = v & 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

GeoArea Decode(GeoRange lon_range, GeoRange lat_range, GeoCell cell) {
  const uint32_t lat_index = Compact(cell.bits);
  const uint32_t lon_index = Compact(cell.bits >> 1);
  const double cells = static_cast<double>(1ULL << cell.step);
  const double lat_scale = lat_range.max - lat_range.min;
  const double lon_scale = lon_range.max - lon_range.min;
  GeoArea a;
  a.lat.min = lat_range.min + (lat_index * 1.0 / cells) * lat_scale;
  a.lat.max = lat_range.min + ((lat_index + 1.0) * 1.0 / cells) * lat_scale;
  a.lon.min = lon_range.min + (lon_index * 1.0 / cells) * lon_scale;
  a.lon.max = lon_range.min + ((lon_index + 1.0) * 1.0 / cells) * lon_scale;
  return a;
}

// Moves a cell by one along longitude (dlon) or latitude (dlat): the coordinate's bits are
// incremented or decremented through the other coordinate's bits, which are set to 1 (for a
// carry) or kept out (for a borrow) and masked off afterwards.
uint64_t MoveBits(uint64_t bits, int step, int d, uint64_t mine, uint64_t other) {
  if (d == 0) return bits;
  const int shift = 64 - step * 2;
  uint64_t v = bits & mine;
  const uint64_t fill = other >> shift;
  if (d > 0) {
    v = v + (fill + 1);
  } else {
    v = (v | fill) - (fill + 1);
  }
  v &= mine >> shift;
  return v | (bits & other);
}

GeoCell Move(GeoCell c, int dlon, int dlat) {
  c.bits = MoveBits(c.bits, c.step, dlon, kOddBits, kEvenBits);
  c.bits = MoveBits(c.bits, c.step, dlat, kEvenBits, kOddBits);
  return c;
}

double LatDistance(double lat1, double lat2) {
  return kGeoEarthRadiusM * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

}  // namespace

bool GeoEncode(GeoRange lon_range, GeoRange lat_range, double lon, double lat, int step,
               GeoCell* out) {
  if (lon > kGeoLonMax || lon < kGeoLonMin || lat > kGeoLatMax || lat < kGeoLatMin) return false;
  if (step > 32 || step <= 0) return false;
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  out->step = step;
  out->bits =
      Spread(static_cast<uint32_t>(lat_offset)) | (Spread(static_cast<uint32_t>(lon_offset)) << 1);
  return true;
}

bool GeoEncodeWgs84(double lon, double lat, int step, GeoCell* out) {
  return GeoEncode(kLonRange, kLatRange, lon, lat, step, out);
}

GeoArea GeoDecodeWgs84(GeoCell cell) { return Decode(kLonRange, kLatRange, cell); }

uint64_t GeoScore(double lon, double lat) {
  GeoCell c;
  if (!GeoEncodeWgs84(lon, lat, kGeoStepMax, &c)) return 0;
  return c.bits;
}

void GeoDecodeScore(double score, double* lon, double* lat) {
  const GeoCell c{static_cast<uint64_t>(score), kGeoStepMax};
  const GeoArea a = GeoDecodeWgs84(c);
  *lon = std::fmin(std::fmax((a.lon.min + a.lon.max) / 2, kGeoLonMin), kGeoLonMax);
  *lat = std::fmin(std::fmax((a.lat.min + a.lat.max) / 2, kGeoLatMin), kGeoLatMax);
}

std::string GeoHashString(double lon, double lat) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  GeoCell c;
  // The standard geohash spans latitudes ±90 (the score's cells stop at ±85.05).
  GeoEncode({-180, 180}, {-90, 90}, lon, lat, kGeoStepMax, &c);
  std::string out(11, '0');
  // 52 bits make ten characters; the eleventh is always '0', as Redis replies it.
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(c.bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;
}

GeoNeighbors GeoNeighborsOf(GeoCell cell) {
  GeoNeighbors n;
  n.east = Move(cell, 1, 0);
  n.west = Move(cell, -1, 0);
  n.south = Move(cell, 0, -1);
  n.north = Move(cell, 0, 1);
  n.north_west = Move(cell, -1, 1);
  n.south_west = Move(cell, -1, -1);
  n.north_east = Move(cell, 1, 1);
  n.south_east = Move(cell, 1, -1);
  return n;
}

int GeoEstimateSteps(double range_m, double lat) {
  if (range_m == 0) return kGeoStepMax;
  int step = 1;
  while (range_m < kMercatorMax) {
    range_m *= 2;
    ++step;
  }
  step -= 2;  // so that the range fits in most cases
  // Meridians converge towards the poles: cells get narrower.
  if (lat > 66 || lat < -66) {
    --step;
    if (lat > 80 || lat < -80) --step;
  }
  if (step < 1) step = 1;
  if (step > kGeoStepMax) step = kGeoStepMax;
  return step;
}

double GeoDistance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = DegToRad(lon1);
  const double lon2r = DegToRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Same meridian: the distance is the latitude difference (Redis's shortcut, same result bits).
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegToRad(lat1);
  const double lat2r = DegToRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kGeoEarthRadiusM * std::asin(std::sqrt(a));
}

bool GeoWithinShape(const GeoShape& s, double lon, double lat, double* dist_m) {
  if (!s.box) {
    *dist_m = GeoDistance(s.lon, s.lat, lon, lat);
    return *dist_m <= s.radius * s.conversion;
  }
  const double width_m = s.width * s.conversion;
  const double height_m = s.height * s.conversion;
  // The cheaper latitude check first; the longitude one is measured along the point's parallel.
  if (LatDistance(lat, s.lat) > height_m / 2) return false;
  if (GeoDistance(lon, lat, s.lon, lat) > width_m / 2) return false;
  *dist_m = GeoDistance(s.lon, s.lat, lon, lat);
  return true;
}

std::array<GeoCell, 9> GeoSearchCells(const GeoShape& s) {
  // The shape's bounding box in degrees; its longitude span is taken at the edge nearer the
  // pole (top in the north, bottom in the south), where a meter spans the most longitude.
  const double half_h = s.conversion * (s.box ? s.height / 2 : s.radius);
  const double half_w = s.conversion * (s.box ? s.width / 2 : s.radius);
  const double lat_delta = RadToDeg(half_h / kGeoEarthRadiusM);
  const double lon_delta_top =
      RadToDeg(half_w / kGeoEarthRadiusM / std::cos(DegToRad(s.lat + lat_delta)));
  const double lon_delta_bottom =
      RadToDeg(half_w / kGeoEarthRadiusM / std::cos(DegToRad(s.lat - lat_delta)));
  const bool south = s.lat < 0;
  const double min_lon = south ? s.lon - lon_delta_bottom : s.lon - lon_delta_top;
  const double max_lon = south ? s.lon + lon_delta_bottom : s.lon + lon_delta_top;
  const double min_lat = s.lat - lat_delta;
  const double max_lat = s.lat + lat_delta;

  // A box is sized by its half diagonal.
  double radius_m =
      s.box ? std::sqrt((s.width / 2) * (s.width / 2) + (s.height / 2) * (s.height / 2)) : s.radius;
  radius_m *= s.conversion;
  int steps = GeoEstimateSteps(radius_m, s.lat);

  GeoCell centre;
  GeoEncodeWgs84(s.lon, s.lat, steps, &centre);
  GeoNeighbors n = GeoNeighborsOf(centre);
  GeoArea area = GeoDecodeWgs84(centre);
  // Near a cell edge the estimated step can be one too fine for the neighbours to cover the
  // box: then use cells twice as large.
  const bool too_fine =
      GeoDecodeWgs84(n.north).lat.max < max_lat || GeoDecodeWgs84(n.south).lat.min > min_lat ||
      GeoDecodeWgs84(n.east).lon.max < max_lon || GeoDecodeWgs84(n.west).lon.min > min_lon;
  if (steps > 1 && too_fine) {
    --steps;
    GeoEncodeWgs84(s.lon, s.lat, steps, &centre);
    n = GeoNeighborsOf(centre);
    area = GeoDecodeWgs84(centre);
  }
  // Drop the neighbours on a side the box does not reach past the centre cell.
  if (steps >= 2) {
    if (area.lat.min < min_lat) n.south = n.south_west = n.south_east = GeoCell{};
    if (area.lat.max > max_lat) n.north = n.north_east = n.north_west = GeoCell{};
    if (area.lon.min < min_lon) n.west = n.south_west = n.north_west = GeoCell{};
    if (area.lon.max > max_lon) n.east = n.south_east = n.north_east = GeoCell{};
  }
  return {centre,       n.north,      n.south,      n.east,      n.west,
          n.north_east, n.north_west, n.south_east, n.south_west};
}

void GeoCellScores(GeoCell cell, uint64_t* min, uint64_t* max) {
  const int shift = 52 - cell.step * 2;
  *min = cell.bits << shift;
  *max = (cell.bits + 1) << shift;
}

}  // namespace lavik
