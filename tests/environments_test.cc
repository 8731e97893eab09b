// Environments in Git (issue #19 item 2): spec.targets[i].overrides makes a
// target compile from the spec with its overrides merged in, validated and
// located like the spec; SUMMARY.md says so, and records a build's --set.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace nemoc::testing {
namespace {

const char kShared[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: envs
spec:
  namespace: envs-ns
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model:
    preset: llama2-7b
    source: {hfTokenSecret: hf-token}
  storage:
    results:
      nfs: {server: nfs.internal, path: /export}
  stages:
    train:
      mode: pretrain
      nodes: 4
      gpusPerNode: 8
      parallelism: {tensor: 2, sequenceParallel: true}
      batch: {micro: 1, global: 128}
      maxSteps: 5000
      data: {mock: true}
    evaluate:
      tasks: [hellaswag]
  targets:
    - name: prod
      profile: vanilla-k8s
      rdma: {count: 4}
)";

const char kDevTarget[] = R"(    - name: dev
      profile: vanilla-k8s
      overrides:
        image: {tag: "24.12"}
        stages:
          train: {nodes: 1, maxSteps: 100, batch: {global: 32}}
          evaluate: null
)";

// "<file>:<line>:<column>" of the first `needle` in `text`.
std::string Where(const std::string& file, const std::string& text, const std::string& needle) {
  return file + ":" + PositionOf(text, needle);
}

std::map<std::string, std::string> WithoutSummary(std::map<std::string, std::string> tree) {
  tree.erase("SUMMARY.md");
  return tree;
}

// The files two trees disagree on (a readable failure instead of two trees).
std::string Differences(const std::map<std::string, std::string>& a,
                        const std::map<std::string, std::string>& b) {
  std::string out;
  for (const auto& [path, text] : a) {
    if (!b.count(path) || b.at(path) != text) out += path + "\n";
  }
  for (const auto& [path, text] : b) {
    if (!a.count(path)) out += path + " (only in the second)\n";
  }
  return out;
}

class EnvironmentsTest : public ::testing::Test {
 protected:
  RunResult Build(const std::string& name, const std::string& spec,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"build", "--quiet", "--out", scratch_.path() + "/" + name + "/out"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(scratch_.Write(name + "/spec.yaml", spec));  // SUMMARY.md names the file
    return RunNemoc(args);
  }
  std::map<std::string, std::string> Tree(const std::string& name, const std::string& target) {
    return ReadAll(scratch_.path() + "/" + name + "/out/envs/" + target);
  }
  ScratchDir scratch_;
};

TEST_F(EnvironmentsTest, ATargetCompilesFromTheSpecWithItsOverridesMergedIn) {
  const std::string spec = std::string(kShared) + kDevTarget;
  RunResult r = Build("both", spec);
  ASSERT_EQ(0, r.exit_code) << r.err;
  // The other target is exactly what the spec alone makes.
  ASSERT_EQ(0, Build("prod-only", kShared).exit_code);
  ASSERT_FALSE(Tree("both", "prod").empty());
  EXPECT_EQ("", Differences(Tree("prod-only", "prod"), Tree("both", "prod")));
  // The target with overrides is exactly what a spec with those values makes.
  std::string merged = Replace(kShared, "tag: \"24.07\"", "tag: \"24.12\"");
  merged = Replace(merged, "      nodes: 4\n", "      nodes: 1\n");
  merged = Replace(merged, "maxSteps: 5000", "maxSteps: 100");
  merged = Replace(merged, "global: 128", "global: 32");
  merged = Replace(merged, "    evaluate:\n      tasks: [hellaswag]\n", "");
  merged = Replace(merged, "    - name: prod\n      profile: vanilla-k8s\n      rdma: {count: 4}\n",
                   "    - name: dev\n      profile: vanilla-k8s\n");
  ASSERT_EQ(0, Build("dev-only", merged).exit_code);
  const auto dev = Tree("both", "dev");
  ASSERT_FALSE(dev.empty());
  EXPECT_EQ("", Differences(WithoutSummary(Tree("dev-only", "dev")), WithoutSummary(dev)));
  EXPECT_EQ(0u, dev.count("40-evaluate/kustomization.yaml"));
  EXPECT_EQ(1u, Tree("both", "prod").count("40-evaluate/kustomization.yaml"));
  // SUMMARY.md shows the reviewer what differs and from what.
  const std::string summary = dev.at("SUMMARY.md");
  EXPECT_NE(std::string::npos, summary.find("## Overrides for this target")) << summary;
  EXPECT_NE(std::string::npos, summary.find("`spec.targets[1].overrides` merged in")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `spec.stages.train.nodes` | `1` | `4` |")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `spec.image.tag` | `\"24.12\"` | `\"24.07\"` |")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `spec.stages.evaluate` | removed | `{\"tasks\":[\"hellaswag\"]}` |"))
      << summary;
  EXPECT_NE(std::string::npos, summary.find("| Nodes × GPUs | 1 × 8 = **8 GPUs**")) << summary;
  EXPECT_EQ(std::string::npos, Tree("both", "prod").at("SUMMARY.md").find("Overrides")) ;
  // --target builds the one target, from its merged spec.
  r = Build("dev-target", spec, {"--target", "dev"});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ("", Differences(dev, Tree("dev-target", "dev")));
  EXPECT_TRUE(Tree("dev-target", "prod").empty());
}

TEST_F(EnvironmentsTest, OverridesAreValidatedAndLocatedLikeTheSpec) {
  // A typo, a wrong type and a field no target may override: one run, each
  // at its own line, naming the target; nothing is written.
  std::string spec = std::string(kShared) + Replace(Replace(kDevTarget, "nodes: 1", "nodez: 1"),
                                                    "maxSteps: 100", "maxSteps: many");
  spec += "        namespace: dev-ns\n";
  const std::string file = scratch_.path() + "/bad/spec.yaml";
  RunResult r = Build("bad", spec);
  EXPECT_EQ(1, r.exit_code);
  EXPECT_NE(std::string::npos,
            r.err.find(Where(file, spec, "nodez") + ": error: target dev: unknown field 'nodez' in "
                                                    "spec.stages.train"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find("did you mean 'nodes'?")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "many") + ": error: target dev: "
                                                                     "spec.stages.train.maxSteps: expected an integer"))
      << r.err;
  EXPECT_NE(std::string::npos,
            r.err.find(Where(file, spec, "namespace: dev-ns") + ": error: unknown field 'namespace' in "
                                                                "spec.targets[1].overrides"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/bad/out"));
  // What only the merge breaks is reported for the target.
  spec = std::string(kShared) + Replace(kDevTarget, "nodes: 1, maxSteps: 100, batch: {global: 32}",
                                        "nodes: 3");
  r = Build("merge", spec);
  EXPECT_EQ(1, r.exit_code);
  // (the shared global batch no longer divides: located there, naming the target)
  EXPECT_NE(std::string::npos, r.err.find(Where(scratch_.path() + "/merge/spec.yaml", spec, "128}") +
                                          ": error: target dev: global batch 128 is not a multiple"))
      << r.err;
  // A warning the shared spec gives is given once, not once per target; one
  // the override causes names the target and the line it is about.
  spec = Replace(std::string(kShared) + kDevTarget, "tensor: 2, sequenceParallel: true",
                 "tensor: 1, sequenceParallel: true");
  r = RunNemoc({"build", "--out", scratch_.path() + "/warn", scratch_.Write("warn.yaml", spec)});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(1u, Count(r.err, "sequence parallelism has no effect")) << r.err;
  spec = std::string(kShared) + Replace(kDevTarget, "nodes: 1,", "nodes: 1, parallelism: {tensor: 1},");
  r = RunNemoc({"build", "--out", scratch_.path() + "/warn2", scratch_.Write("warn2.yaml", spec)});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos,
            r.err.find(Where(scratch_.path() + "/warn2.yaml", spec, "true}") +
                       ": warning: target dev: sequence parallelism has no effect"))
      << r.err;
}

TEST_F(EnvironmentsTest, SetIsRecordedInTheTreeItProduced) {
  const std::string spec = std::string(kShared) + kDevTarget;
  RunResult r = Build("set", spec,
                      {"--set", "spec.targets[dev].overrides.stages.train.maxSteps=7", "--set",
                       "spec.stages.train.maxSteps=9"});
  ASSERT_EQ(0, r.exit_code) << r.err;
  for (const char* target : {"prod", "dev"}) {
    const std::string summary = Tree("set", target).at("SUMMARY.md");
    EXPECT_NE(std::string::npos, summary.find("**Built with `--set`**")) << summary;
    EXPECT_NE(std::string::npos, summary.find("- `--set spec.targets[dev].overrides.stages.train.maxSteps=7`\n"
                                              "- `--set spec.stages.train.maxSteps=9`\n"))
        << summary;
  }
  EXPECT_NE(std::string::npos, Tree("set", "dev").at("SUMMARY.md").find("| `spec.stages.train.maxSteps` | `7` | `9` |"));
  EXPECT_NE(std::string::npos, Tree("set", "prod").at("SUMMARY.md").find(", 9 steps,"));
  // A build without --set records none, and check sees the --set tree as drift.
  r = Build("plain", spec);
  ASSERT_EQ(0, r.exit_code);
  EXPECT_EQ(std::string::npos, Tree("plain", "dev").at("SUMMARY.md").find("--set"));
  r = RunNemoc({"check", "--quiet", "--out", scratch_.path() + "/set/out", scratch_.path() + "/set/spec.yaml"});
  EXPECT_EQ(1, r.exit_code) << r.err;
}

}  // namespace
}  // namespace nemoc::testing
