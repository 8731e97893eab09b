// Content hashes for incremental builds: a fast 64-bit hash of bytes (ninja's
// choice, MurmurHash64A) and a 128-bit digest of a whole record (two
// independently seeded passes). They detect changed inputs; they are not a
// defence against someone crafting collisions (who could edit the output
// directly anyway).
#ifndef NEMOC_CONTENT_HASH_H_
#define NEMOC_CONTENT_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace nemoc {

/// MurmurHash64A of `bytes`.
uint64_t Hash64(std::string_view bytes, uint64_t seed = 0);

/// Hash64 as 16 lowercase hex digits.
std::string Hash64Hex(std::string_view bytes);

/// 128-bit digest of `bytes` as 32 lowercase hex digits.
std::string Digest128Hex(std::string_view bytes);

}  // namespace nemoc

#endif  // NEMOC_CONTENT_HASH_H_
