#include <gtest/gtest.h>

#include "models/units.hpp"

using namespace composim;

TEST(Units, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration_s("24us"), 24e-6);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_duration_s("150ns"), 150e-9);
  EXPECT_DOUBLE_EQ(parse_duration_s("2"), 2.0);
  EXPECT_THROW(parse_duration_s("fast"), std::invalid_argument);
  EXPECT_THROW(parse_duration_s("3 parsecs"), std::invalid_argument);
}

TEST(Units, BytesAndBandwidth) {
  EXPECT_EQ(parse_bytes("1GiB"), 1073741824u);
  EXPECT_EQ(parse_bytes("64KiB"), 65536u);
  EXPECT_EQ(parse_bytes("1GB"), 1000000000u);
  EXPECT_THROW(parse_bytes("1.5B"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("12GB/s"), 12e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_rate_GTps("16GT/s"), 16.0);
  EXPECT_THROW(parse_bandwidth_Bps("12 furlongs"), std::invalid_argument);
}
