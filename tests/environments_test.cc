// Environments in Git (issue #19 item 2): spec.targets[i].overrides makes a
// target compile from the spec with its overrides merged in, validated and
// located like the spec; SUMMARY.md says so, and records a build's --set.
#include <filesystem>
#include <sstream>
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

// Issue #45 item 2 (D3): scheduling fields and patches. Every pod of the
// spec tolerates a taint, evaluate's pods get a priority class and the
// Azure Workload Identity pod label, the evaluate Job gets a field nemoc does
// not model (dnsConfig, a merge patch) and the training workload one through
// JSON Patch; a TrainJob target shows where each lands in Trainer's objects.
const char kScheduling[] = R"(  scheduling:
    tolerations:
      - {key: dedicated, operator: Equal, value: llm, effect: NoSchedule}
  patches:
    evaluate-dns:
      target: {stage: evaluate, kind: Job}
      merge:
        spec: {template: {spec: {dnsConfig: {options: [{name: ndots, value: "2"}]}}}}
)";
const char kEvaluateScheduling[] = R"(    evaluate:
      tasks: [hellaswag]
      scheduling:
        priorityClassName: research-high
        labels: {azure.workload.identity/use: "true"}
)";

std::string WithScheduling(const std::string& spec) {
  std::string out = Replace(spec, "    evaluate:\n      tasks: [hellaswag]\n", kEvaluateScheduling);
  return Replace(out, "  targets:\n", std::string(kScheduling) + "  targets:\n");
}

// The file of `dir` whose name starts with `prefix`, or "".
std::string FileOf(const std::map<std::string, std::string>& tree, const std::string& prefix) {
  for (const auto& [file, text] : tree) {
    if (file.rfind(prefix, 0) == 0) return file;
  }
  return "";
}

// The "## State directories" section of a SUMMARY.md.
std::string StateSection(const std::string& summary) {
  const size_t begin = summary.find("## State directories");
  if (begin == std::string::npos) return "";
  return summary.substr(begin, summary.find("\n## ", begin + 1) - begin);
}

TEST_F(EnvironmentsTest, ATolerationAPriorityClassAndAPatchReachTheObjectsAndSummary) {
  std::string spec = WithScheduling(kShared);
  spec += R"(    - name: tj
      profile: vanilla-k8s
      runtime: trainjob
      overrides:
        patches:
          train-grace:
            target: {stage: train, kind: TrainJob}
            ops:
              - {op: add, path: /spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec/terminationGracePeriodSeconds, value: 600}
        scheduling:
          priorityClassName: batch-low
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [a100]}]}]
)";
  RunResult r = Build("hatches", spec);
  ASSERT_EQ(0, r.exit_code) << r.err;
  const auto prod = Tree("hatches", "prod");
  const std::string job = FileOf(prod, "40-evaluate/job-");
  ASSERT_FALSE(job.empty());
  const std::string& evaluate = prod.at(job);
  EXPECT_NE(std::string::npos, evaluate.find("      priorityClassName: research-high\n")) << evaluate;
  EXPECT_NE(std::string::npos, evaluate.find("      - effect: NoSchedule\n        key: dedicated\n        operator: Equal\n"
                                             "        value: llm\n")) << evaluate;
  EXPECT_NE(std::string::npos, evaluate.find("        azure.workload.identity/use: \"true\"\n")) << evaluate;
  EXPECT_NE(std::string::npos, evaluate.find("      dnsConfig:\n        options:\n        - name: ndots\n          value: \"2\"\n"))
      << evaluate;
  // The spec-wide toleration reaches training too; evaluate's priority does not.
  const std::string training = prod.at(FileOf(prod, "30-train/pytorchjob-"));
  EXPECT_NE(std::string::npos, training.find("key: dedicated")) << training;
  EXPECT_EQ(std::string::npos, training.find("priorityClassName")) << training;
  EXPECT_EQ(std::string::npos, training.find("azure.workload.identity")) << training;
  // SUMMARY.md lists what the spec adds and each patch with the file it changed.
  const std::string summary = prod.at("SUMMARY.md");
  EXPECT_NE(std::string::npos, summary.find("| every stage | tolerations | `dedicated=llm:NoSchedule` |")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `40-evaluate` | priorityClassName | `research-high` |")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `40-evaluate` | pod labels | `azure.workload.identity/use=true` |")) << summary;
  EXPECT_NE(std::string::npos, summary.find("| `evaluate-dns` | Job of stage evaluate | merge patch (RFC 7386) | `" + job + "` |"))
      << summary;
  EXPECT_EQ(std::string::npos, summary.find("train-grace")) << summary;
  // The TrainJob target, with a patch and an affinity of its own: the
  // spec's node affinity joins nemoc's one-pod-per-node anti-affinity.
  const auto tj = Tree("hatches", "tj");
  const std::string trainjob = tj.at(FileOf(tj, "30-train/trainjob-"));
  EXPECT_NE(std::string::npos, trainjob.find("nodeAffinity:")) << trainjob;
  EXPECT_NE(std::string::npos, trainjob.find("podAntiAffinity:")) << trainjob;
  EXPECT_NE(std::string::npos, trainjob.find("terminationGracePeriodSeconds: 600")) << trainjob;
  // A priority class is no field of a runtimePatches pod spec (Trainer
  // v2.3.0 PodSpecPatch): the TrainingRuntime's pod template holds it.
  EXPECT_EQ(std::string::npos, trainjob.find("priorityClassName")) << trainjob;
  const std::string runtime = tj.at(FileOf(tj, "00-base/trainingruntime-"));
  EXPECT_NE(std::string::npos, runtime.find("priorityClassName: batch-low")) << runtime;
  EXPECT_NE(std::string::npos, tj.at("SUMMARY.md").find("| `train-grace` | TrainJob of stage train | 1 JSON Patch operation (RFC 6902) | `30-train/trainjob-"));
}

// F15: scheduling and patches are in the workload names (Jobs are immutable)
// and in no state hash. The life: build; add scheduling and a patch (the
// workloads are replaced, every stage resumes in its directory); change only
// evaluate's patch (only evaluate's Job is replaced); revert (the first names
// come back: content-addressed).
TEST_F(EnvironmentsTest, ASchedulingOnlyChangeReplacesTheWorkloadsAndKeepsTheirStateDirectories) {
  ASSERT_EQ(0, Build("plain", kShared).exit_code);
  const std::string scheduled = WithScheduling(kShared);
  ASSERT_EQ(0, Build("scheduled", scheduled).exit_code);
  const std::string repatched = Replace(scheduled, "value: \"2\"", "value: \"3\"");
  ASSERT_EQ(0, Build("repatched", repatched).exit_code);
  RunResult reverted = Build("reverted", kShared);
  ASSERT_EQ(0, reverted.exit_code) << reverted.err;
  const auto plain = Tree("plain", "prod"), sched = Tree("scheduled", "prod"), repat = Tree("repatched", "prod");
  for (const char* workload : {"30-train/pytorchjob-", "40-evaluate/job-"}) {
    ASSERT_FALSE(FileOf(plain, workload).empty()) << workload;
    EXPECT_NE(FileOf(plain, workload), FileOf(sched, workload)) << workload << ": a changed Job keeps its name";
  }
  EXPECT_EQ(FileOf(sched, "30-train/pytorchjob-"), FileOf(repat, "30-train/pytorchjob-"));
  EXPECT_NE(FileOf(sched, "40-evaluate/job-"), FileOf(repat, "40-evaluate/job-"));
  const std::string states = StateSection(plain.at("SUMMARY.md"));
  ASSERT_NE(std::string::npos, states.find("| `30-train` | `/")) << states;
  EXPECT_EQ(states, StateSection(sched.at("SUMMARY.md")));
  EXPECT_EQ(states, StateSection(repat.at("SUMMARY.md")));
  EXPECT_EQ("", Differences(plain, Tree("reverted", "prod")));
}

TEST_F(EnvironmentsTest, PatchesThatBreakOrMissAnObjectAreRefusedLocatedInOneRun) {
  std::string spec = WithScheduling(kShared);
  spec = Replace(spec, "  patches:\n", R"(  patches:
    bad-limit:
      target: {stage: evaluate, kind: Job}
      merge: {spec: {backoffLimit: many}}
    rename:
      target: {stage: train, kind: PyTorchJob}
      ops: [{op: add, path: /spec/runPolicy/suspend, value: false}, {op: replace, path: /metadata/name, value: other}]
    no-such-path:
      target: {stage: evaluate, kind: Job}
      ops: [{op: remove, path: /spec/template/spec/hostIPC}]
    no-such-kind:
      target: {stage: evaluate, kind: Deployment}
      merge: {spec: {replicas: 2}}
)");
  RunResult r = Build("broken", spec);
  EXPECT_EQ(1, r.exit_code) << r.err;
  const std::string file = scratch_.path() + "/broken/spec.yaml";
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "{spec: {backoffLimit: many}}") +
                                          ": error: target prod: patch bad-limit makes Job envs-evaluate-"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find("spec.backoffLimit: expected integer, got string \"many\"")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "[{op: add, path: /spec/runPolicy") +
                                          ": error: target prod: patch rename changes what PyTorchJob envs-train-"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "{op: remove, path: /spec/template/spec/hostIPC}") +
                                          ": error: target prod: patch no-such-path, operation 0, cannot be applied"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "target: {stage: evaluate, kind: Deployment}") +
                                          ": error: target prod: patch no-such-kind matches no object: stage evaluate "
                                          "of this target has Job"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/broken/out"));
}

TEST_F(EnvironmentsTest, SchedulingThatUndoesNemocsPlacementIsRefusedLocated) {
  std::string spec = Replace(kShared, "      rdma: {count: 4}\n",
                             "      rdma: {count: 4}\n      nodeSelector: {pool: h100}\n");
  spec = Replace(spec, "    evaluate:\n      tasks: [hellaswag]\n", R"(    evaluate:
      tasks: [hellaswag]
      scheduling:
        nodeSelector: {pool: a100, zone: b}
        labels: {app.kubernetes.io/component: mine, team: nlp}
)");
  RunResult r = Build("undo", spec);
  EXPECT_EQ(1, r.exit_code) << r.err;
  const std::string file = scratch_.path() + "/undo/spec.yaml";
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "pool: a100") +
                                          ": error: target prod: node selector pool is h100 in the target's placement"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find(Where(file, spec, "app.kubernetes.io/component: mine") +
                                          ": error: target prod: label app.kubernetes.io/component is one nemoc sets"))
      << r.err;
  EXPECT_NE(std::string::npos, r.err.find("\n2 errors\n")) << r.err;  // zone and team are no conflict
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/undo/out"));
}

// Issue #46 item 2 (D5): diff -o markdown of a target with overrides read
// its overrides table (three columns) as the facts table: rows of five cells,
// and the facts after it never compared. Every changed training value is a
// fact: the learning rate and the data too.
TEST_F(EnvironmentsTest, DiffMarkdownListsEveryChangedTrainingValueOfATargetWithOverrides) {
  const std::string spec = std::string(kShared) + kDevTarget;
  ASSERT_EQ(0, Build("md", spec).exit_code);
  const std::string changed =
      Replace(Replace(spec, "train: {nodes: 1, maxSteps: 100, batch: {global: 32}}",
                      "train: {nodes: 2, maxSteps: 200, batch: {global: 32}, optimizer: {lr: 0.0001}}"),
              "      data: {mock: true}\n", "      data: {prefixes: [{path: web/text_document}]}\n");
  const std::string path = scratch_.Write("md/spec.yaml", changed);
  RunResult r = RunNemoc({"diff", "-o", "markdown", "--out", scratch_.path() + "/md/out", path});
  ASSERT_EQ(0, r.exit_code) << r.err;
  // Every row has the cells of its table's header.
  size_t cells = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '|') {
      cells = 0;
      continue;
    }
    size_t bars = 0;
    for (size_t i = 0; i < line.size(); ++i) bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (cells == 0) cells = bars;
    EXPECT_EQ(cells, bars) << line << "\n" << r.out;
  }
  for (const std::string row : {"| Learning rate | peak 0.0003, min 3e-05 (cosine), warm-up 100 steps, weight decay 0.1, "
                                "gradient clip 1 | peak 0.0001, min 3e-05 (cosine), warm-up 100 steps, weight decay 0.1, "
                                "gradient clip 1 |",
                                "| Data | synthetic tokens (mock) | `web/text_document` × 1 |",
                                "| override `spec.stages.train.optimizer.lr` | — | `0.0001` |",
                                "| override `spec.stages.train.maxSteps` | `100` | `200` |",
                                "| Nodes × GPUs | 1 × 8 = **8 GPUs** (NVIDIA H100 80GB) | 2 × 8 = **16 GPUs** (NVIDIA H100 80GB) |"}) {
    EXPECT_NE(std::string::npos, r.out.find(row)) << row << "\n" << r.out;
  }
}

}  // namespace
}  // namespace nemoc::testing
