// Test-only: inputs shared by a functional test and the perftest that times
// the same code (compiler/*_test.cc and compiler/*_perftest.cc are separate
// binaries; ctest runs the first, bench/run --quick the second).
#ifndef NEMOC_COMPILER_TEST_INPUTS_H_
#define NEMOC_COMPILER_TEST_INPUTS_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nemoc::test_inputs {

/// Nine levels of nine YAML aliases ("billion laughs"): 9^9 nodes if expanded.
inline std::string BillionLaughsYaml() {
  std::string text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ",*" : "*") + prev;
    text += "]\n";
  }
  text += "j: [*i,*i,*i,*i,*i,*i,*i,*i,*i]\n";
  return text;
}

/// (path, bytes) of every file of a committed target tree below the source
/// directory (e.g. "out/llama2-70b-sft/onprem"), sorted by path.
inline std::vector<std::pair<std::filesystem::path, std::string>> CommittedTreeFiles(const std::string& tree) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(NEMOC_SOURCE_DIR) / tree)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files.emplace_back(path, bytes.str());
  }
  return files;
}

/// `n` deterministic pseudo-random characters of `alphabet`: the body of a
/// credential assembled at run time, so no source file looks like a leaked key.
inline std::string Fake(std::string_view alphabet, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    out += alphabet[(x >> 33) % alphabet.size()];
  }
  return out;
}

}  // namespace nemoc::test_inputs

#endif  // NEMOC_COMPILER_TEST_INPUTS_H_
