// nemoc killed in the middle of writing a tree: the previous tree is intact
// byte for byte, and the next build succeeds and leaves no temporary litter.
#include <filesystem>

#include <gtest/gtest.h>

#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

TEST(CrashSafetyTest, AbortMidTreeKeepsThePreviousTreeAndTheNextBuildRecovers) {
  ScratchDir scratch;
  const std::string spec = SourceDir() + "/examples/llama2-70b-sft-vanilla.yaml";
  const std::string out = scratch.path() + "/out";
  ASSERT_EQ(0, RunNemoc({"build", "--quiet", "--out", out, spec}).exit_code);
  // What a reader sees: the target's tree and its cluster's platform bundle
  // (not the temporary siblings a crash leaves).
  auto visible = [&] {
    std::string fingerprint;
    for (const std::string dir : {"_clusters/in-cluster", "llama2-70b-sft/onprem"}) {
      for (const auto& [path, contents] : ReadAll(out + "/" + dir)) {
        fingerprint += dir + "/" + path + "\n" + std::to_string(std::hash<std::string>{}(contents)) + "\n";
      }
    }
    return fingerprint;
  };
  const std::string before = visible();
  ASSERT_EQ(before, TreeFingerprint(out));

  // A changed spec, so the writer really has a new tree to write.
  RunResult crashed = RunNemoc({"build", "--quiet", "--out", out, "--set",
                                "spec.stages.train.maxSteps=7", spec},
                               "", {{"NEMOC_FAULT_INJECT", "writer-mid-tree"}});
  EXPECT_NE(0, crashed.exit_code);
  EXPECT_GE(crashed.exit_code, 128) << "expected death by signal (abort), got " << crashed.exit_code;

  // The previous tree is what a reader of out/ still sees.
  EXPECT_EQ(before, visible());

  // The next build cleans up whatever the crash left and writes the new tree.
  RunResult next = RunNemoc({"build", "--out", out, "--set", "spec.stages.train.maxSteps=7", spec});
  ASSERT_EQ(0, next.exit_code) << next.err;
  std::vector<std::string> litter;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".nemoc-tmp") != std::string::npos || name.find(".nemoc-old") != std::string::npos) {
      litter.push_back(entry.path().string());
    }
  }
  EXPECT_TRUE(litter.empty()) << litter.front();
  EXPECT_NE(before, TreeFingerprint(out));
  // The train ConfigMap's name is content-hashed (C5).
  std::string config;
  for (const auto& entry : fs::directory_iterator(out + "/llama2-70b-sft/onprem/00-base")) {
    if (entry.path().filename().string().rfind("configmap-llama2-70b-sft-train-config-", 0) == 0) {
      config = ReadFile(entry.path().string());
    }
  }
  EXPECT_NE(std::string::npos, config.find("max_steps: 7"));
}

}  // namespace
}  // namespace nemoc::testing
