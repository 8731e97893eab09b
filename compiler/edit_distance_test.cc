#include "edit_distance.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

TEST(EditDistanceTest, Basics) {
  EXPECT_EQ(0, EditDistance("nodes", "nodes"));
  EXPECT_EQ(1, EditDistance("replcas", "replicas"));
  EXPECT_EQ(3, EditDistance("", "abc"));
  EXPECT_EQ(2, EditDistance("tensor", "tenosr"));
}

TEST(EditDistanceTest, SuggestsOnlyPlausibleTypos) {
  std::vector<std::string> keys = {"nodes", "gpusPerNode", "parallelism", "precision"};
  EXPECT_EQ("parallelism", SuggestClosest("paralelism", keys));
  EXPECT_EQ("gpusPerNode", SuggestClosest("gpuspernode", keys));
  EXPECT_EQ("nodes", SuggestClosest("node", keys));
  EXPECT_EQ("", SuggestClosest("zzzzzzzz", keys));
}

}  // namespace
}  // namespace nemoc
