#include "content_hash.h"

#include <cstring>

namespace nemoc {

uint64_t Hash64(std::string_view bytes, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const size_t len = bytes.size();
  uint64_t h = seed ^ (len * m);
  const char* data = bytes.data();
  const char* end = data + (len / 8) * 8;
  for (; data != end; data += 8) {
    uint64_t k;
    std::memcpy(&k, data, 8);  // unaligned-safe; little-endian on our targets
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const auto* tail = reinterpret_cast<const unsigned char*>(data);
  switch (len & 7) {
    case 7: h ^= uint64_t(tail[6]) << 48; [[fallthrough]];
    case 6: h ^= uint64_t(tail[5]) << 40; [[fallthrough]];
    case 5: h ^= uint64_t(tail[4]) << 32; [[fallthrough]];
    case 4: h ^= uint64_t(tail[3]) << 24; [[fallthrough]];
    case 3: h ^= uint64_t(tail[2]) << 16; [[fallthrough]];
    case 2: h ^= uint64_t(tail[1]) << 8; [[fallthrough]];
    case 1:
      h ^= uint64_t(tail[0]);
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

namespace {

void AppendHex(uint64_t v, std::string* out) {
  static const char kDigits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out->push_back(kDigits[(v >> shift) & 0xf]);
}

}  // namespace

std::string Hash64Hex(std::string_view bytes) {
  std::string out;
  AppendHex(Hash64(bytes), &out);
  return out;
}

std::string Digest128Hex(std::string_view bytes) {
  std::string out;
  AppendHex(Hash64(bytes, 0x6e656d6f63000001ULL), &out);
  AppendHex(Hash64(bytes, 0x9e3779b97f4a7c15ULL), &out);
  return out;
}

}  // namespace nemoc
