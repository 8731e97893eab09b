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

// Issue #45 (D1, D2): three clusters x dev/prod written once each. Every
// dev target is the dev environment, every prod one the prod environment, in
// its own namespace; a target's own overrides still win over its environment.
const char kClustersTimesEnvironments[] = R"(  environments:
    dev:
      namespace: envs-dev
      stages: {train: {nodes: 1, maxSteps: 50, batch: {global: 32}}, evaluate: null}
    prod:
      namespace: envs-prod
  gitops:
    repoURL: https://git.example/acme/infra.git
    engines: [argocd]
    clusters:
      a-dev: https://a.example:443
      a-prod: https://a.example:443
      b-dev: https://b.example:443
      b-prod: https://b.example:443
      c-dev: https://c.example:443
      c-prod: https://c.example:443
  targets:
    - {name: a-dev, profile: vanilla-k8s, cluster: lab-a, environment: dev}
    - {name: a-prod, profile: vanilla-k8s, cluster: lab-a, environment: prod, rdma: {count: 4}}
    - {name: b-dev, profile: vanilla-k8s, cluster: lab-b, environment: dev, overrides: {stages: {train: {maxSteps: 70}}}}
    - {name: b-prod, profile: vanilla-k8s, cluster: lab-b, environment: prod, rdma: {count: 4}}
    - {name: c-dev, profile: vanilla-k8s, cluster: lab-c, environment: dev}
    - {name: c-prod, profile: vanilla-k8s, cluster: lab-c, environment: prod, rdma: {count: 4}}
)";

std::string SharedWith(const std::string& tail) {
  const std::string shared = kShared;
  return shared.substr(0, shared.find("  targets:\n")) + tail;
}

TEST_F(EnvironmentsTest, ThreeClustersTimesDevAndProdWithoutCopiedBlocks) {
  const std::string spec = SharedWith(kClustersTimesEnvironments);
  RunResult r = Build("matrix", spec);
  ASSERT_EQ(0, r.exit_code) << r.err;
  for (const char* cluster : {"a", "b", "c"}) {
    const auto dev = Tree("matrix", std::string(cluster) + "-dev");
    const auto prod = Tree("matrix", std::string(cluster) + "-prod");
    ASSERT_FALSE(dev.empty() || prod.empty()) << cluster;
    const std::string dev_steps = std::string(cluster) == "b" ? "max_steps: 70" : "max_steps: 50";
    bool dev_ns = false, prod_ns = false, dev_max = false, prod_max = false;
    for (const auto& [file, text] : dev) {
      if (file.rfind("gitops/", 0) == 0) continue;
      dev_ns = dev_ns || text.find("namespace: envs-dev\n") != std::string::npos;
      EXPECT_EQ(std::string::npos, text.find("namespace: envs-prod")) << file;
      EXPECT_EQ(std::string::npos, text.find("namespace: envs-ns\n")) << file;
      dev_max = dev_max || text.find(dev_steps) != std::string::npos;
    }
    for (const auto& [file, text] : prod) {
      if (file.rfind("gitops/", 0) == 0) continue;
      prod_ns = prod_ns || text.find("namespace: envs-prod\n") != std::string::npos;
      prod_max = prod_max || text.find("max_steps: 5000") != std::string::npos;
    }
    EXPECT_TRUE(dev_ns && prod_ns && dev_max && prod_max) << cluster;
    EXPECT_EQ(0u, dev.count("40-evaluate/kustomization.yaml")) << cluster;
    EXPECT_EQ(1u, prod.count("40-evaluate/kustomization.yaml")) << cluster;
    const std::string summary = dev.at("SUMMARY.md");
    EXPECT_NE(std::string::npos, summary.find("with environment `dev` (`spec.environments.dev`)")) << summary;
    EXPECT_NE(std::string::npos, summary.find("| `spec.namespace` | `\"envs-dev\"` (environment dev) | `\"envs-ns\"` |"))
        << summary;
  }
  // The target's own value over its environment's, marked as its own.
  EXPECT_NE(std::string::npos,
            Tree("matrix", "b-dev").at("SUMMARY.md").find("| `spec.stages.train.maxSteps` | `70` | `5000` |"));
  // plan names each target's environment and namespace.
  RunResult plan = RunNemoc({"plan", scratch_.path() + "/matrix/spec.yaml"});
  ASSERT_EQ(0, plan.exit_code) << plan.err;
  EXPECT_NE(std::string::npos, plan.out.find("target a-dev: profile vanilla-k8s, environment dev (namespace envs-dev)"))
      << plan.out;
  EXPECT_NE(std::string::npos, plan.out.find("target c-prod: profile vanilla-k8s, environment prod (namespace envs-prod)"));
}

// D1: dev and prod on one cluster in one namespace wrote the same objects
// silently. Refused, located at the second target, naming both; nothing written.
TEST_F(EnvironmentsTest, TwoTargetsWritingOneObjectOnOneClusterAreRefused) {
  std::string spec = SharedWith(kClustersTimesEnvironments);
  spec = Replace(spec, "      namespace: envs-prod\n", "      stages: {train: {maxSteps: 6000}}\n");
  spec = Replace(spec, "      namespace: envs-dev\n", "");
  RunResult r = Build("collide", spec);
  EXPECT_EQ(1, r.exit_code) << r.err;
  const std::string file = scratch_.path() + "/collide/spec.yaml";
  EXPECT_NE(std::string::npos,
            r.err.find(file + ":" + PositionOf(spec, "prod, rdma") +
                       ": error: targets a-dev and a-prod both deliver to cluster lab-a and would both write"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find("targets b-dev and b-prod both deliver to cluster lab-b")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("ServiceAccount envs-ns/envs-workload")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/collide/out"));
  // Distinct namespaces through overrides alone are enough too.
  spec = Replace(spec, "environment: prod, rdma: {count: 4}}\n    - {name: b-dev",
                 "environment: prod, rdma: {count: 4}, overrides: {namespace: envs-a-prod}}\n    - {name: b-dev");
  r = Build("collide-fixed-a", spec);
  EXPECT_EQ(std::string::npos, r.err.find("cluster lab-a")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("cluster lab-b")) << r.err;
}

TEST_F(EnvironmentsTest, AnUnknownEnvironmentIsLocatedWithASuggestion) {
  const std::string spec = Replace(SharedWith(kClustersTimesEnvironments), "environment: prod, rdma: {count: 4}}\n    - {name: b-dev",
                                   "environment: prd, rdma: {count: 4}}\n    - {name: b-dev");
  RunResult r = Build("unknown", spec);
  EXPECT_EQ(1, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos,
            r.err.find(scratch_.path() + "/unknown/spec.yaml:" + PositionOf(spec, "prd, rdma") +
                       ": error: spec.targets[1].environment: no environment 'prd' in spec.environments (it defines "
                       "dev, prod)"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find("did you mean 'prod'?")) << r.err;
}

TEST_F(EnvironmentsTest, OverridesAreValidatedAndLocatedLikeTheSpec) {
  // A typo, a wrong type and a field no target may override: one run, each
  // at its own line, naming the target; nothing is written.
  std::string spec = std::string(kShared) + Replace(Replace(kDevTarget, "nodes: 1", "nodez: 1"),
                                                    "maxSteps: 100", "maxSteps: many");
  spec += "        gitops: {engines: [flux]}\n";  // namespace may be overridden since #45
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
            r.err.find(Where(file, spec, "gitops: {engines") + ": error: unknown field 'gitops' in "
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
