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

TEST(EditDistanceTest, ShortWordsMayAllowMoreEdits) {
  // Subcommand names (main.cc): a swapped pair is two edits, more than a third of five letters.
  const std::vector<std::string> commands = {"build", "check", "plan", "validate"};
  EXPECT_EQ("", SuggestClosest("biuld", commands));
  EXPECT_EQ("build", SuggestClosest("biuld", commands, 2));
  EXPECT_EQ("check", SuggestClosest("chek", commands, 2));
  EXPECT_EQ("", SuggestClosest("deploy", commands, 2));
}

}  // namespace
}  // namespace nemoc
