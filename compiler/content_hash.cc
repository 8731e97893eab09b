#include "content_hash.h"

#include <cstring>

namespace nemoc {

namespace {

constexpr uint64_t kM = 0xc6a4a7935bd1e995ULL;
constexpr int kR = 47;

// MurmurHash64A over `bytes` for several seeds at once: the per-block mixing
// of the input is shared, only the accumulators differ.
template <size_t N>
void Murmur64A(std::string_view bytes, const uint64_t (&seeds)[N], uint64_t (&out)[N]) {
  const size_t len = bytes.size();
  uint64_t h[N];
  for (size_t i = 0; i < N; ++i) h[i] = seeds[i] ^ (len * kM);
  const char* data = bytes.data();
  const char* end = data + (len / 8) * 8;
  for (; data != end; data += 8) {
    uint64_t k;
    std::memcpy(&k, data, 8);  // unaligned-safe; little-endian on our targets
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    for (size_t i = 0; i < N; ++i) {
      h[i] ^= k;
      h[i] *= kM;
    }
  }
  const auto* tail = reinterpret_cast<const unsigned char*>(data);
  uint64_t t = 0;
  switch (len & 7) {
    case 7: t ^= uint64_t(tail[6]) << 48; [[fallthrough]];
    case 6: t ^= uint64_t(tail[5]) << 40; [[fallthrough]];
    case 5: t ^= uint64_t(tail[4]) << 32; [[fallthrough]];
    case 4: t ^= uint64_t(tail[3]) << 24; [[fallthrough]];
    case 3: t ^= uint64_t(tail[2]) << 16; [[fallthrough]];
    case 2: t ^= uint64_t(tail[1]) << 8; [[fallthrough]];
    case 1:
      t ^= uint64_t(tail[0]);
      for (size_t i = 0; i < N; ++i) {
        h[i] ^= t;
        h[i] *= kM;
      }
  }
  for (size_t i = 0; i < N; ++i) {
    h[i] ^= h[i] >> kR;
    h[i] *= kM;
    h[i] ^= h[i] >> kR;
    out[i] = h[i];
  }
}

}  // namespace

uint64_t Hash64(std::string_view bytes, uint64_t seed) {
  const uint64_t seeds[1] = {seed};
  uint64_t out[1];
  Murmur64A(bytes, seeds, out);
  return out[0];
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
  static constexpr uint64_t kSeeds[2] = {0x6e656d6f63000001ULL, 0x9e3779b97f4a7c15ULL};
  uint64_t lanes[2];
  Murmur64A(bytes, kSeeds, lanes);
  std::string out;
  AppendHex(lanes[0], &out);
  AppendHex(lanes[1], &out);
  return out;
}

}  // namespace nemoc
