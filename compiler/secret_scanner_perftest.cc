// Speed of the secret scanner (it runs on every generated file). A perftest,
// as in ninja: built with everything, never run by ctest; bench/run --quick
// runs nemoc_perftests and its bounds are the bench's, so a loaded CI
// machine cannot fail a functional test (issue #39).
#include "secret_scanner.h"
#include "test_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nemoc {
namespace {

constexpr std::string_view kUrlSafeChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

using test_inputs::Fake;

// Wall-clock and CPU time of one scan (CI machines are often busy: the CPU
// time is what the scanner costs, the bound is checked on the smaller).
struct Timing {
  double wall_ms;
  double cpu_ms;
  double best() const { return std::min(wall_ms, cpu_ms); }
};

Timing TimeScan(const std::string& text, size_t* count) {
  const std::clock_t cpu_start = std::clock();
  const auto start = std::chrono::steady_clock::now();
  *count = FindSecrets(text).size();
  const auto end = std::chrono::steady_clock::now();
  const std::clock_t cpu_end = std::clock();
  return {std::chrono::duration<double, std::milli>(end - start).count(),
          1000.0 * static_cast<double>(cpu_end - cpu_start) / CLOCKS_PER_SEC};
}

TEST(SecretScannerPerf, OneMebibyteOfRandomText) {
  constexpr size_t kSize = 1 << 20;
  std::string text;
  text.reserve(kSize);
  uint64_t x = 42;
  while (text.size() < kSize) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t r = static_cast<uint32_t>(x >> 33);
    text += (r % 61 == 0) ? '\n' : static_cast<char>(' ' + r % 95);
  }
  size_t count = 0;
  TimeScan(text, &count);  // warm up
  const Timing t = TimeScan(text, &count);
  std::printf("[ timing   ] 1 MiB of random printable text: %.2f ms (CPU %.2f ms), %zu findings\n",
              t.wall_ms, t.cpu_ms, count);
  EXPECT_LT(t.best(), 500.0);
}

TEST(SecretScannerPerf, OneMebibyteOfGeneratedYaml) {
  std::string sample;
  const auto files = test_inputs::CommittedTreeFiles("out/llama2-70b-sft/onprem");
  ASSERT_GT(files.size(), 5u);
  for (const auto& [file, bytes] : files) sample += bytes;
  ASSERT_FALSE(sample.empty());
  std::string text;
  while (text.size() < (1u << 20)) text += sample;
  size_t count = 0;
  TimeScan(text, &count);
  const Timing t = TimeScan(text, &count);
  std::printf("[ timing   ] %zu bytes of generated YAML/Markdown: %.2f ms (CPU %.2f ms), %zu findings\n",
              text.size(), t.wall_ms, t.cpu_ms, count);
  EXPECT_EQ(count, 0u);
  EXPECT_LT(t.best(), 500.0);
}

TEST(SecretScannerPerf, AdversarialInputsStayLinear) {
  const std::string ngc = "nvapi-" + Fake(kUrlSafeChars, 64, 1);
  const std::vector<std::pair<std::string, std::string>> patterns = {
      {"repeated nvapi- prefixes", "nvapi-"},
      {"repeated eyJ runs", "eyJ-"},
      {"one long line of password keys", "password: \"x password: "},
      {"env value keys on one line", "{name: A, value: b} "},
      {"colons", ":"},
      {"private key headers", "-----BEGIN PRIVATE KEY-----"},
      {"url authorities", "a://b:c"},
      {"bearer", "bearer "},
      {"repeated keys", ngc + " "},
  };
  for (const auto& [name, unit] : patterns) {
    std::string text;
    while (text.size() < (1u << 20)) text += unit;
    size_t count = 0;
    const Timing t = TimeScan(text, &count);
    std::printf("[ timing   ] 1 MiB of %s: %.2f ms (CPU %.2f ms), %zu findings\n", name.c_str(),
                t.wall_ms, t.cpu_ms, count);
    EXPECT_LT(t.best(), 1000.0) << name;
  }
}

}  // namespace
}  // namespace nemoc
