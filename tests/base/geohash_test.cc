// Expected values are Redis 7.0.15's replies for the same points (GEOADD scores, GEOPOS,
// GEOHASH, GEODIST, GEORADIUS WITHDIST on the Redis docs' Sicily example).
#include "base/geohash.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace lavik {
namespace {

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

TEST(GeoHashTest, ScoresAreRedisInterleavedStep26Cells) {
  EXPECT_EQ(GeoScore(13.361389, 38.115556), 3479099956230698u);  // Palermo
  EXPECT_EQ(GeoScore(15.087269, 37.502669), 3479447370796909u);  // Catania
  EXPECT_EQ(GeoScore(-180, -85.05112878), 0u);
  // The upper limits land on index 2^26 of both coordinates: bits 52 and 53.
  EXPECT_EQ(GeoScore(180, 85.05112878), 3ULL << 52);
}

TEST(GeoHashTest, DecodeGivesTheCellCentreClampedToTheLimits) {
  double lon, lat;
  GeoDecodeScore(3479099956230698.0, &lon, &lat);
  EXPECT_EQ(Fixed("%.17f", lon), "13.36138933897018433");
  EXPECT_EQ(Fixed("%.17f", lat), "38.11555639549629859");
  GeoDecodeScore(0, &lon, &lat);
  EXPECT_EQ(Fixed("%.17f", lon), "-179.99999731779098511");
  EXPECT_EQ(Fixed("%.17f", lat), "-85.05112751263942528");
  GeoDecodeScore(static_cast<double>(3ULL << 52), &lon, &lat);
  EXPECT_EQ(lon, 180);
  EXPECT_EQ(lat, kGeoLatMax);
}

TEST(GeoHashTest, StandardGeohashStrings) {
  double lon, lat;
  GeoDecodeScore(3479099956230698.0, &lon, &lat);
  EXPECT_EQ(GeoHashString(lon, lat), "sqc8b49rny0");
  GeoDecodeScore(3479447370796909.0, &lon, &lat);
  EXPECT_EQ(GeoHashString(lon, lat), "sqdtr74hyu0");
  GeoDecodeScore(0, &lon, &lat);
  EXPECT_EQ(GeoHashString(lon, lat), "00bh0hbj200");
}

TEST(GeoHashTest, DistancesOnRedisEarthRadius) {
  double lon1, lat1, lon2, lat2;
  GeoDecodeScore(3479099956230698.0, &lon1, &lat1);
  GeoDecodeScore(3479447370796909.0, &lon2, &lat2);
  EXPECT_EQ(Fixed("%.4f", GeoDistance(lon1, lat1, lon2, lat2)), "166274.1516");
  EXPECT_EQ(Fixed("%.4f", GeoDistance(15, 37, lon1, lat1) / 1000), "190.4424");
  EXPECT_EQ(Fixed("%.4f", GeoDistance(15, 37, lon2, lat2) / 1000), "56.4413");
  EXPECT_EQ(GeoDistance(10, 10, 10, 10), 0);
  // Same meridian: the latitude arc alone.
  EXPECT_DOUBLE_EQ(GeoDistance(5, 0, 5, 1), kGeoEarthRadiusM * M_PI / 180);
}

TEST(GeoHashTest, StepEstimate) {
  EXPECT_EQ(GeoEstimateSteps(0, 0), 26);
  // 1 m doubles 25 times to reach the Mercator half circumference: 1 + 25 - 2.
  EXPECT_EQ(GeoEstimateSteps(1, 0), 24);
  EXPECT_EQ(GeoEstimateSteps(200000, 37), 6);
  EXPECT_EQ(GeoEstimateSteps(200000, 70), 5);   // one coarser past 66 degrees
  EXPECT_EQ(GeoEstimateSteps(200000, -85), 4);  // two past 80
  EXPECT_EQ(GeoEstimateSteps(0.1, 0), 26);
  EXPECT_EQ(GeoEstimateSteps(1e8, 0), 1);
}

TEST(GeoHashTest, NeighboursMoveOneCellAndWrap) {
  GeoCell c;
  ASSERT_TRUE(GeoEncodeWgs84(13.36, 38.11, 10, &c));
  const GeoArea a = GeoDecodeWgs84(c);
  const GeoNeighbors n = GeoNeighborsOf(c);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.north).lat.min, a.lat.max);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.south).lat.max, a.lat.min);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.east).lon.min, a.lon.max);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.west).lon.max, a.lon.min);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.north_east).lat.min, a.lat.max);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.north_east).lon.min, a.lon.max);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.south_west).lat.max, a.lat.min);
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(n.south_west).lon.max, a.lon.min);
  // West of the westmost cell is the eastmost one.
  ASSERT_TRUE(GeoEncodeWgs84(-180, 0, 4, &c));
  EXPECT_DOUBLE_EQ(GeoDecodeWgs84(GeoNeighborsOf(c).west).lon.max, 180);
}

TEST(GeoHashTest, CellScoresCoverTheCellsPoints) {
  GeoCell c;
  ASSERT_TRUE(GeoEncodeWgs84(13.361389, 38.115556, 5, &c));
  uint64_t min, max;
  GeoCellScores(c, &min, &max);
  const uint64_t s = GeoScore(13.361389, 38.115556);
  EXPECT_LE(min, s);
  EXPECT_LT(s, max);
  EXPECT_EQ(max - min, 1ULL << (52 - 10));
}

TEST(GeoHashTest, SearchCellsCentreFirstAndUselessNeighboursDropped) {
  GeoShape circle;
  circle.lon = 15;
  circle.lat = 37;
  circle.radius = 200;
  circle.conversion = 1000;
  const auto cells = GeoSearchCells(circle);
  GeoCell centre;
  ASSERT_TRUE(GeoEncodeWgs84(15, 37, cells[0].step, &centre));
  EXPECT_EQ(cells[0], centre);
  for (const GeoCell& c : cells) {
    if (!c.none()) {
      EXPECT_EQ(c.step, cells[0].step);
    }
  }
  // A 10 cm circle at the centre of a step-26 cell (~0.28 m x 0.48 m there) needs that cell only.
  GeoShape tiny = circle;
  tiny.radius = 0.1;
  tiny.conversion = 1;
  GeoCell own;
  ASSERT_TRUE(GeoEncodeWgs84(15, 37, 26, &own));
  const GeoArea a = GeoDecodeWgs84(own);
  tiny.lon = (a.lon.min + a.lon.max) / 2;
  tiny.lat = (a.lat.min + a.lat.max) / 2;
  const auto few = GeoSearchCells(tiny);
  for (size_t i = 1; i < few.size(); ++i) EXPECT_TRUE(few[i].none()) << i;
}

TEST(GeoHashTest, WithinShapeCircleAndBox) {
  GeoShape s;
  s.lon = 15;
  s.lat = 37;
  s.radius = 100;
  s.conversion = 1000;
  double d;
  EXPECT_TRUE(GeoWithinShape(s, 15.087269, 37.502669, &d));
  EXPECT_EQ(Fixed("%.4f", d / 1000), "56.4413");
  EXPECT_FALSE(GeoWithinShape(s, 13.361389, 38.115556, &d));
  s.box = true;
  s.width = 400;
  s.height = 400;
  EXPECT_TRUE(GeoWithinShape(s, 13.361389, 38.115556, &d));
  s.height = 100;  // Palermo is ~124 km north of the centre
  EXPECT_FALSE(GeoWithinShape(s, 13.361389, 38.115556, &d));
}

}  // namespace
}  // namespace lavik
