#include "content_hash.h"

#include <set>

#include <gtest/gtest.h>

namespace nemoc {
namespace {

TEST(ContentHashTest, SameBytesSameHashAnyChangeAnother) {
  EXPECT_EQ(Hash64("abc"), Hash64("abc"));
  EXPECT_EQ(Digest128Hex("abc"), Digest128Hex("abc"));
  EXPECT_EQ(32u, Digest128Hex("").size());
  EXPECT_EQ(16u, Hash64Hex("x").size());
  // Every length through the 8-byte blocks and the tail, and every one-bit
  // change of a short input, gives a distinct digest.
  std::set<std::string> seen;
  std::string text;
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(seen.insert(Digest128Hex(text)).second) << i;
    text += static_cast<char>('a' + i % 26);
  }
  const std::string base = "nemoc-stamp!";
  for (size_t byte = 0; byte < base.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = base;
      flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
      EXPECT_TRUE(seen.insert(Digest128Hex(flipped)).second) << byte << ":" << bit;
    }
  }
  EXPECT_NE(Hash64("abc", 1), Hash64("abc", 2));
}

TEST(ContentHashTest, DigestIsHexOfTwoSeededHashes) {
  const std::string d = Digest128Hex("hello");
  for (char c : d) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << d;
  EXPECT_NE(d.substr(0, 16), d.substr(16));
}

}  // namespace
}  // namespace nemoc
