// Every input a fuzzer ever crashed nemoc with is kept in
// tests/fuzz-regressions/ and must now be refused cleanly: exit 1 with a
// diagnostic, never a crash, an internal error or a hang.
#include <filesystem>

#include <gtest/gtest.h>

#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

TEST(FuzzRegressionsTest, EveryCrashInputIsRefusedCleanly) {
  const fs::path dir = fs::path(SourceDir()) / "tests" / "fuzz-regressions";
  std::vector<fs::path> inputs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") inputs.push_back(entry.path());
  }
  if (inputs.empty()) GTEST_SKIP() << "no fuzzer crash has been recorded in " << dir;
  std::sort(inputs.begin(), inputs.end());
  for (const auto& input : inputs) {
    SCOPED_TRACE(input.string());
    ScratchDir scratch;
    RunResult r = RunNemoc({"build", "--out", scratch.path() + "/out", input.string()});
    EXPECT_EQ(1, r.exit_code) << r.err;
    EXPECT_NE(std::string::npos, r.err.find("error:")) << r.err;
    EXPECT_EQ(std::string::npos, r.err.find("internal")) << r.err;
    EXPECT_TRUE(ReadAll(scratch.path() + "/out").empty());
  }
}

}  // namespace
}  // namespace nemoc::testing
