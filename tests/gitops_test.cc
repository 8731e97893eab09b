// GitOps delivery end to end: `nemoc build --commit` in real temporary Git
// repositories (the git CLI checks what libgit2 wrote), the drift gate
// `nemoc check`, `nemoc diff`, and the GitOps objects of the golden trees.
#include "test_prerequisite.h"
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

// Runs a shell command in `dir`; returns its stdout and stderr.
std::string Sh(const std::string& dir, const std::string& command, int* exit_code = nullptr) {
  return Shell("cd '" + dir + "' && " + command + " 2>&1", exit_code);
}

const char kGitopsSpec[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: demo
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model:
    preset: llama2-7b
    source: {hfTokenSecret: hf-token}   # the tokenizer is gated (A3)
  storage:
    results:
      nfs: {server: nfs.internal, path: /export}
  stages:
    train:
      mode: pretrain
      nodes: 2
      parallelism: {tensor: 2}
      batch: {micro: 1, global: 32}
      maxSteps: 10
      optimizer: {warmupSteps: 2}
      data: {mock: true}
  gitops:
    repoURL: https://git.example/acme/infra.git
    engines: [argocd, flux]
  targets:
    - name: onprem
      profile: vanilla-k8s
)";

class GitRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int rc = 0;
    Sh(dir(), "git init -q -b main && git config user.name 'CI Bot' && "
              "git config user.email ci@example.com && git commit -q --allow-empty -m init",
       &rc);
    ASSERT_EQ(rc, 0);
    scratch_.Write("README", "not nemoc's\n");
    Sh(dir(), "git add README && git commit -q -m readme");
  }
  const std::string& dir() const { return scratch_.path(); }
  int Commits() { return std::stoi(Sh(dir(), "git rev-list --count HEAD")); }
  RunResult Nemoc(std::vector<std::string> args) {
    if (!KubeSchemasDir().empty()) {
      args.insert(args.begin() + 1, {"--kube-schemas", KubeSchemasDir()});
    }
    return RunNemoc(args, dir());
  }
  ScratchDir scratch_;
};

TEST_F(GitRepoTest, CommitsOnlyWhatChangedAndNamesTheTarget) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  scratch_.Write(".nemoc/project.schema.json", "{}\n");
  scratch_.Write("notes.txt", "not nemoc's\n");
  // First commit: every generated file, and the spec that made them with its
  // .nemoc/ (D6); nothing else.
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed "), std::string::npos) << r.out;
  EXPECT_EQ(Commits(), 3);
  // The target and its cluster's platform bundle (decision F3).
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: demo/onprem, _clusters/in-cluster\n");
  EXPECT_EQ(Sh(dir(), "git log -1 --format='%an <%ae>'"), "CI Bot <ci@example.com>\n");
  const std::string files = Sh(dir(), "git show --name-only --format= HEAD");
  EXPECT_NE(files.find("out/demo/onprem/30-train/"), std::string::npos) << files;
  EXPECT_NE(files.find("out/demo/onprem/gitops/flux/kustomization-demo-onprem-train-"),
            std::string::npos) << files;
  EXPECT_NE(files.find("out/demo/onprem/.nemoc-manifest"), std::string::npos);
  EXPECT_NE(files.find("out/_clusters/in-cluster/platform/"), std::string::npos) << files;
  EXPECT_NE(files.find("\nspec.yaml\n"), std::string::npos) << files;
  EXPECT_NE(files.find(".nemoc/project.schema.json"), std::string::npos) << files;
  EXPECT_NE(Sh(dir(), "git log -1 --format=%b").find("- spec.yaml: the spec as built"), std::string::npos);
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? notes.txt\n");

  // No-op second build: no new commit.
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing to commit"), std::string::npos) << r.out;
  EXPECT_EQ(Commits(), 3);

  // A changed spec: one commit naming the target; the training job gets a
  // new content-hashed name, the old file is removed in the same commit.
  const std::string before = Sh(dir(), "ls out/demo/onprem/30-train");
  scratch_.Write("spec.yaml", Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: 20"));
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: demo/onprem\n");
  const std::string after = Sh(dir(), "ls out/demo/onprem/30-train");
  EXPECT_NE(before, after);
  const std::string status = Sh(dir(), "git show --no-renames --name-status --format= HEAD");
  EXPECT_NE(status.find("D\tout/demo/onprem/30-train/pytorchjob-demo-train-"), std::string::npos)
      << status;
  EXPECT_NE(status.find("A\tout/demo/onprem/30-train/pytorchjob-demo-train-"), std::string::npos)
      << status;
  EXPECT_NE(status.find("M\tspec.yaml"), std::string::npos) << status;  // the spec and its output together
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? notes.txt\n");

  // A spec edit that changes no output (a comment) is recorded too.
  scratch_.Write("spec.yaml", "# reviewed\n" + Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: 20"));
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 5);
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: record spec.yaml\n");
}

TEST_F(GitRepoTest, DeletedStageIsRemovedInTheCommit) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  ASSERT_EQ(Nemoc({"build", "--commit", "spec.yaml"}).exit_code, 0);
  // Without the GitOps section the gitops/ directory goes, in one commit.
  std::string spec = kGitopsSpec;
  spec = Replace(spec, "  gitops:\n    repoURL: https://git.example/acme/infra.git\n"
                       "    engines: [argocd, flux]\n", "");
  scratch_.Write("spec.yaml", spec);
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  const std::string status = Sh(dir(), "git show --no-renames --name-status --format= HEAD");
  EXPECT_NE(status.find("D\tout/demo/onprem/gitops/flux/kustomization-demo-onprem-train-"),
            std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir() + "/out/demo/onprem/gitops"));
  EXPECT_EQ(Sh(dir(), "git ls-files out/demo/onprem/gitops"), "");
}

TEST_F(GitRepoTest, DeletedPipelineStageIsRemovedInTheCommit) {
  // A spec with an evaluation stage, then the same spec without it: the
  // stage directory and its Flux Kustomization go in one commit.
  const std::string with_eval =
      Replace(kGitopsSpec, "      data: {mock: true}\n", "      data: {mock: true}\n    evaluate: {}\n");
  scratch_.Write("spec.yaml", with_eval);
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Commits(), 3);
  ASSERT_TRUE(fs::exists(dir() + "/out/demo/onprem/40-evaluate/kustomization.yaml"));
  ASSERT_NE(Sh(dir(), "git ls-files out/demo/onprem/40-evaluate"), "");

  scratch_.Write("spec.yaml", kGitopsSpec);
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: demo/onprem\n");
  const std::string status = Sh(dir(), "git show --no-renames --name-status --format= HEAD");
  EXPECT_NE(status.find("D\tout/demo/onprem/40-evaluate/kustomization.yaml"), std::string::npos)
      << status;
  EXPECT_NE(status.find("D\tout/demo/onprem/40-evaluate/job-demo-evaluate-"), std::string::npos)
      << status;
  EXPECT_NE(status.find("D\tout/demo/onprem/gitops/flux/kustomization-demo-onprem-evaluate-"),
            std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir() + "/out/demo/onprem/40-evaluate"));
  EXPECT_EQ(Sh(dir(), "git ls-files out/demo/onprem/40-evaluate"), "");
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "");  // the spec is committed with its trees (D6)
}

TEST_F(GitRepoTest, CheckFindsHandEditsAndBuildCommitRefusesThem) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  ASSERT_EQ(Nemoc({"build", "--commit", "spec.yaml"}).exit_code, 0);
  RunResult r = Nemoc({"check", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  const std::string edited = "out/demo/onprem/00-base/serviceaccount-demo-workload.yaml";
  const std::string original = ReadFile(dir() + "/" + edited);
  scratch_.Write(edited, original + "# hand edit\n");
  r = Nemoc({"check", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "M " + edited + "\n");
  EXPECT_NE(r.err.find("1 file differs"), std::string::npos) << r.err;

  r = Nemoc({"diff", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--- a/" + edited), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-# hand edit\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);  // not a terminal: no colour

  // build --commit refuses and changes nothing.
  r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(edited + ": modified, not committed"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir() + "/" + edited), original + "# hand edit\n");
  EXPECT_EQ(Commits(), 3);

  // An untracked file in a target directory is refused as well.
  Sh(dir(), "git checkout -- " + edited);
  scratch_.Write("out/demo/onprem/30-train/extra.yaml", "x: 1\n");
  r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Commits(), 3);
}

TEST_F(GitRepoTest, OtherBranchIsAdvancedWithoutTouchingTheWorkTree) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  ScratchDir elsewhere;
  // Run from another directory, naming the repository and a new branch.
  RunResult r = RunNemoc({"build", "--commit", "--repo", dir(), "--branch", "deploy",
                          "--author-name", "Release Bot", "--author-email", "rel@example.com",
                          "--out", dir() + "/out", dir() + "/spec.yaml"},
                         elsewhere.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out"));
  EXPECT_EQ(Sh(dir(), "git rev-parse --abbrev-ref HEAD"), "main\n");
  EXPECT_EQ(Sh(dir(), "git log -1 --format='%an|%s' deploy"),
            "Release Bot|nemoc build: demo/onprem, _clusters/in-cluster\n");
  EXPECT_NE(Sh(dir(), "git ls-tree -r --name-only deploy").find("out/demo/onprem/kustomization.yaml"),
            std::string::npos);
  EXPECT_EQ(Sh(dir(), "git rev-list --count deploy"), "3\n");  // on top of main
}

// E26: an author Git cannot carry (a line break would start a forged header
// line) was refused only by the commit, after out/ was written. Now before.
TEST_F(GitRepoTest, AnAuthorWithALineBreakIsRefusedBeforeAnythingIsWritten) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  const int before = Commits();
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--author-name", "x\nCommitter: evil <e@x.y> 0 +0000"},
           {"--author-name", "Bot <b@x.y>"},
           {"--author-email", "e@x.y\nCommitter: evil"},
           {"--author-email", "e@x.y> x"}}) {
    std::vector<std::string> args = {"build", "--commit", "spec.yaml", flag, value};
    args.push_back(flag == "--author-name" ? "--author-email" : "--author-name");
    args.push_back(flag == "--author-name" ? "bot@example.com" : "Release Bot");
    RunResult r = Nemoc(args);
    EXPECT_EQ(r.exit_code, 1) << flag << " " << value << "\n" << r.err;
    EXPECT_NE(r.err.find("error: " + flag + ": holds a line break"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("evil"), std::string::npos) << "the value is not echoed\n" << r.err;
    EXPECT_FALSE(fs::exists(dir() + "/out")) << flag << " " << value;
    EXPECT_EQ(Commits(), before);
  }
}

// E23: a credential as the author would be pushed in every commit object.
TEST_F(GitRepoTest, ACredentialAsTheAuthorIsRefusedUnquoted) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  const int before = Commits();
  const std::string key = std::string("nvapi-") + std::string(30, 'Q');
  for (const std::string flag : {"--author-name", "--author-email"}) {
    RunResult r = Nemoc({"build", "--commit", "spec.yaml", flag, key, flag == "--author-name" ? "--author-email" : "--author-name",
                         flag == "--author-name" ? "bot@example.com" : "Release Bot"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("error: " + flag + ": looks like a NGC API key"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(key), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir() + "/out"));
  }
  EXPECT_EQ(Commits(), before);
}

// C12: the user's whole flow, for a spec with warnings (its targets carry no
// build stamp) and one without (stamped): init -> build --commit -> edit ->
// build --commit -> build -> check, and build then build --commit. The work
// tree is clean after every step and nothing ever needs a manual reset.
class CommitFlowTest : public GitRepoTest, public ::testing::WithParamInterface<bool> {
 protected:
  std::string Spec(int steps) const {
    std::string spec = Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: " + std::to_string(steps));
    return GetParam() ? spec : Replace(spec, "nodes: 2", "nodes: 1");  // 1 node: no RDMA warning
  }
  void ExpectClean(const std::string& step) {
    // The spec is committed with its trees (D6): nothing is left over.
    EXPECT_EQ(Sh(dir(), "git status --porcelain --untracked-files=all"), "") << step;
  }
};

TEST_P(CommitFlowTest, EveryStepLeavesACleanWorkTree) {
  const bool warnings = GetParam();
  scratch_.Write("spec.yaml", Spec(10));
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning") != std::string::npos, warnings) << r.err;
  ExpectClean("first build --commit");
  EXPECT_EQ(Commits(), 3);

  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing to commit"), std::string::npos) << r.out;
  ExpectClean("second build --commit");

  scratch_.Write("spec.yaml", Spec(20));
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  ExpectClean("build --commit after an edit");

  r = Nemoc({"build", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectClean("build");
  r = Nemoc({"check", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectClean("check");

  // build (no commit) after an edit, then build --commit: the files on disk
  // are exactly what the commit records, so it is no uncommitted edit.
  scratch_.Write("spec.yaml", Spec(30));
  r = Nemoc({"build", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Commits(), 5);
  ExpectClean("build, then build --commit");

  // C13: no build stamp (nemoc's own source digest) in the committed tree.
  EXPECT_EQ(Sh(dir(), "git show HEAD:out/demo/onprem/.nemoc-manifest").find('#'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutWarnings, CommitFlowTest, ::testing::Bool());

// C5: what consumes the checkpoint is renamed (so re-run) when training
// changes; the config training reads is content-addressed with it; a change
// downstream alone leaves training alone.
TEST_F(GitRepoTest, RetrainingRenamesWhatConsumesTheCheckpoint) {
  const std::string with_eval =
      Replace(kGitopsSpec, "      data: {mock: true}\n", "      data: {mock: true}\n    evaluate: {}\n");
  auto files = [&](const std::string& spec) {
    scratch_.Write("spec.yaml", spec);
    RunResult r = Nemoc({"build", "--quiet", "spec.yaml"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> by_stage;  // "30-train" -> file names
    for (const auto& entry : fs::recursive_directory_iterator(dir() + "/out/demo/onprem")) {
      const std::string rel = fs::relative(entry.path(), dir() + "/out/demo/onprem").string();
      if (entry.is_regular_file() && rel.find('/') != std::string::npos && rel.rfind("gitops", 0) != 0) {
        by_stage[rel.substr(0, rel.find('/'))] += entry.path().filename().string() + "\n";
      }
    }
    return by_stage;
  };
  const auto before = files(with_eval);
  ASSERT_TRUE(before.count("40-evaluate"));
  const auto retrained = files(Replace(with_eval, "maxSteps: 10", "maxSteps: 20"));
  EXPECT_NE(before.at("30-train"), retrained.at("30-train"));
  EXPECT_NE(before.at("40-evaluate"), retrained.at("40-evaluate"));
  EXPECT_NE(before.at("00-base"), retrained.at("00-base"));  // configmap-demo-train-config-<hash>
  EXPECT_NE(retrained.at("00-base").find("configmap-demo-train-config-"), std::string::npos);
}

// C5 down the chain: the engine build reads the conversion's output, so a
// changed conversion (here only its precision) renames the engine Job too,
// and a retraining renames both.
TEST_F(GitRepoTest, ReconvertingRebuildsTheEngine) {
  const std::string chain = Replace(kGitopsSpec, "      data: {mock: true}\n",
                                    "      data: {mock: true}\n    convert: {to: huggingface, precision: bf16}\n"
                                    "    tensorrtLLM: {}\n");
  auto names = [&](const std::string& spec) {
    scratch_.Write("spec.yaml", spec);
    RunResult r = Nemoc({"build", "--quiet", "spec.yaml"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> by_stage;  // "60-tensorrt-llm" -> file names
    for (const char* stage : {"30-train", "50-convert", "60-tensorrt-llm"}) {
      for (const auto& entry : fs::directory_iterator(dir() + "/out/demo/onprem/" + stage)) {
        by_stage[stage] += entry.path().filename().string() + "\n";
      }
    }
    return by_stage;
  };
  const auto before = names(chain);
  ASSERT_EQ(3u, before.size());
  const auto reconverted = names(Replace(chain, "precision: bf16", "precision: fp16"));
  EXPECT_EQ(before.at("30-train"), reconverted.at("30-train"));
  EXPECT_NE(before.at("50-convert"), reconverted.at("50-convert"));
  EXPECT_NE(before.at("60-tensorrt-llm"), reconverted.at("60-tensorrt-llm"));
  const auto retrained = names(Replace(chain, "maxSteps: 10", "maxSteps: 20"));
  EXPECT_NE(before.at("50-convert"), retrained.at("50-convert"));
  EXPECT_NE(before.at("60-tensorrt-llm"), retrained.at("60-tensorrt-llm"));
}

// E11: project team-llama/target prod and project team/target llama-prod
// share no Argo CD or Flux object name.
TEST_F(GitRepoTest, ProjectDerivedNamesAreUniqueAcrossProjects) {
  std::string a = Replace(kGitopsSpec, "name: demo", "name: team-llama");
  a = Replace(a, "- name: onprem", "- name: prod");
  std::string b = Replace(kGitopsSpec, "name: demo", "name: team");
  b = Replace(b, "- name: onprem", "- name: llama-prod");
  scratch_.Write("a.yaml", a);
  scratch_.Write("b.yaml", b);
  RunResult r = Nemoc({"build", "--quiet", "a.yaml", "b.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> owner;  // kind/name -> tree
  int names = 0;
  for (const char* tree : {"out/team-llama/prod", "out/team/llama-prod"}) {
    for (const char* engine : {"/gitops/argocd", "/gitops/argocd/root", "/gitops/flux", "/gitops/flux/root"}) {
      const std::string d = dir() + "/" + tree + engine;
      if (!fs::is_directory(d)) continue;
      for (const auto& entry : fs::directory_iterator(d)) {
        // Part directories (gitops/argocd/pipeline/...) hold only a kustomization.yaml.
        if (!entry.is_regular_file() || entry.path().filename() == "kustomization.yaml") continue;
        const YAML::Node doc = YAML::LoadFile(entry.path().string());
        const std::string key = doc["kind"].as<std::string>() + "/" + doc["metadata"]["name"].as<std::string>();
        ++names;
        auto [it, fresh] = owner.emplace(key, tree);
        EXPECT_TRUE(fresh || it->second == tree) << key << " in " << tree << " and " << it->second;
      }
    }
  }
  EXPECT_GE(names, 8);
}

// F8: diff says when a change replaces a running or finished training.
TEST_F(GitRepoTest, DiffSaysWhenAChangeReplacesTraining) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  ASSERT_EQ(Nemoc({"build", "--quiet", "spec.yaml"}).exit_code, 0);
  RunResult r = Nemoc({"diff", "spec.yaml"});
  EXPECT_EQ(r.err.find("replaces a running or finished training"), std::string::npos) << r.err;
  scratch_.Write("spec.yaml", Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: 20"));
  r = Nemoc({"diff", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("replaces a running or finished training"), std::string::npos) << r.err;
  // C24: what each engine of the target (kGitopsSpec: both) does with it while a stage runs.
  EXPECT_NE(r.err.find("Argo CD: while the pipeline's sync operation runs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Flux: the stage's Kustomization applies it at its next reconcile"), std::string::npos)
      << r.err;
  // F15: more steps is a new state -- a new log directory, the old one kept.
  EXPECT_NE(r.err.find("What determines the run changed: the new run trains afresh in /results/demo/onprem/train/"),
            std::string::npos)
      << r.err;
  // A scheduling-only change (the deadline) resumes in the same directory.
  scratch_.Write("spec.yaml", Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: 10\n      timeout: 24h"));
  r = Nemoc({"diff", "spec.yaml"});
  EXPECT_NE(r.err.find("replaces a running or finished training"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("The state is unchanged (a change that only places or schedules the pods): the new run "
                       "resumes from the last checkpoint in /results/demo/onprem/train/"),
            std::string::npos)
      << r.err;
  // C21/F13: a renamed namespace leaves the old claims (and, with a bundle, the old Namespace).
  scratch_.Write("spec.yaml", Replace(kGitopsSpec, "  namespace: nemo\n", "  namespace: nemo-b\n"));
  r = Nemoc({"diff", "spec.yaml"});
  EXPECT_NE(r.err.find("namespace-nemo.yaml: namespace nemo leaves the tree, but neither engine deletes it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("kubectl delete namespace nemo\n"), std::string::npos) << r.err;
  // And SUMMARY.md says it for every engine of the target, before any edit.
  const std::string summary = ReadFile(dir() + "/out/demo/onprem/SUMMARY.md");
  const size_t row = summary.find("| Edit while a stage runs | Argo CD: auto-sync skips the commit");
  ASSERT_NE(row, std::string::npos) << summary;
  EXPECT_NE(summary.find(" Flux: the stage's Kustomization applies it at its next reconcile", row), std::string::npos)
      << summary;
}

// --stat is a form of the text diff: with -o json or -o markdown it is a
// usage error, not silently dropped; with the text output it counts lines.
TEST_F(GitRepoTest, DiffStatWithAnotherOutputFormatIsAUsageError) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  ASSERT_EQ(Nemoc({"build", "--quiet", "spec.yaml"}).exit_code, 0);
  scratch_.Write("spec.yaml", Replace(kGitopsSpec, "maxSteps: 10", "maxSteps: 20"));
  for (const std::string format : {"json", "markdown"}) {
    RunResult r = Nemoc({"diff", "--stat", "-o", format, "spec.yaml"});
    EXPECT_EQ(r.exit_code, 2) << format << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("--stat applies to the text diff"), std::string::npos) << format << ": " << r.out << r.err;
  }
  RunResult r = Nemoc({"diff", "--stat", "-o", "text", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("|"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("@@"), std::string::npos) << r.out;  // counts, not the patch
}

// E12: a commit step that cannot succeed is found before anything is written.
TEST_F(GitRepoTest, CommitThatCannotSucceedWritesNothing) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  const std::string head = Sh(dir(), "git rev-parse HEAD");
  scratch_.Write(".git/index.lock", "");
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("index.lock"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out")) << "out/ written before the commit failed";
  fs::remove(dir() + "/.git/index.lock");

  scratch_.Write(".git/refs/heads/main.lock", "");
  r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("main.lock"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out"));
  fs::remove(dir() + "/.git/refs/heads/main.lock");

  Sh(dir(), "git config --unset user.name; git config --unset user.email");
  r = RunNemoc({"build", "--commit", "spec.yaml"}, dir(),
               {{"HOME", dir()}, {"XDG_CONFIG_HOME", dir()}, {"GIT_CONFIG_NOSYSTEM", "1"},
                {"EMAIL", ""}, {"GIT_AUTHOR_NAME", ""}, {"GIT_COMMITTER_NAME", ""}});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("no commit author"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out"));
  EXPECT_EQ(Sh(dir(), "git rev-parse HEAD"), head);
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? spec.yaml\n");  // nothing was committed
}

// E2: two projects committed into one repository at the same moment, each
// into its own --out root so only nemoc's repository lock (cmd_build.cc) keeps
// them apart (before it, 22 bad index states in 180 rounds: the later index
// write undid the other project). Every round both succeed, both commits are
// on the branch, and the work tree, index and HEAD agree.
TEST_F(GitRepoTest, ConcurrentCommitsOfTwoProjectsLoseNothing) {
  scratch_.Write("a.yaml", Replace(kGitopsSpec, "name: demo", "name: alpha"));
  scratch_.Write("b.yaml", Replace(kGitopsSpec, "name: demo", "name: beta"));
  Sh(dir(), "git add a.yaml b.yaml && git commit -q -m specs");
  constexpr int kRounds = 8;
  for (int round = 0; round < kRounds; ++round) {
    const int before = Commits();
    const std::string set = "spec.stages.train.maxSteps=" + std::to_string(10 + round);
    std::vector<RunResult> results(2);
    std::vector<std::thread> threads;
    for (int k = 0; k < 2; ++k) {
      threads.emplace_back([&, k] {
        // The spec before --set: CLI11 would take a later spec as a second --set value.
        results[k] = Nemoc({"build", k ? "b.yaml" : "a.yaml", "--quiet", "--commit", "--out",
                            k ? "out-b" : "out-a", "--set", set});
      });
    }
    for (auto& t : threads) t.join();
    for (const RunResult& r : results) ASSERT_EQ(0, r.exit_code) << "round " << round << ":\n" << r.err;
    EXPECT_EQ(before + 2, Commits()) << "round " << round;
    ASSERT_EQ("", Sh(dir(), "git status --porcelain")) << "round " << round;
    const std::string steps = "max_steps: " + std::to_string(10 + round);
    for (const char* tree : {"out-a/alpha/onprem", "out-b/beta/onprem"}) {
      EXPECT_NE(std::string::npos, Sh(dir(), std::string("git grep -h max_steps HEAD -- ") + tree + "/00-base")
                                        .find(steps))
          << "round " << round << ": " << tree << " in HEAD is not this round's";
    }
  }
}

// E15: the repository's lock lived in $TMPDIR; two --commit builds of one
// repository with different TMPDIRs each wrote the index from a stale read.
// Build A is held right after taking the repository's lock; build B (another
// project, another output root, another TMPDIR) must wait for it, and both
// commits keep each other's trees.
TEST_F(GitRepoTest, CommitsWithDifferentTmpdirsShareTheRepositorysLock) {
  scratch_.Write("a.yaml", Replace(kGitopsSpec, "name: demo", "name: alpha"));
  scratch_.Write("b.yaml", Replace(kGitopsSpec, "name: demo", "name: beta"));
  Sh(dir(), "git add a.yaml b.yaml && git commit -q -m specs");
  fs::create_directories(dir() + "/.t1");
  fs::create_directories(dir() + "/.t2");
  const int before = Commits();
  const std::string gate_a = dir() + "/.gate-a", gate_b = dir() + "/.gate-b";
  RunResult a, b;
  const bool waited = SecondReachesItsPauseWhileFirstIsHeld(
      [&] {
        return RunNemoc({"build", "a.yaml", "--quiet", "--commit", "--out", "out-a"}, dir(),
                        {{"TMPDIR", dir() + "/.t1"}, {"NEMOC_TEST_PAUSE", "repo-locked=" + gate_a}});
      },
      gate_a,
      [&] {
        return RunNemoc({"build", "b.yaml", "--commit", "--out", "out-b"}, dir(),
                        {{"TMPDIR", dir() + "/.t2"}, {"NEMOC_TEST_PAUSE", "repo-lock-wait=" + gate_b}});
      },
      gate_b, &a, &b);
  EXPECT_TRUE(waited) << "build B did not wait for build A's repository lock:\n" << b.err;
  ASSERT_EQ(0, a.exit_code) << a.err;
  ASSERT_EQ(0, b.exit_code) << b.err;
  EXPECT_EQ(before + 2, Commits());
  EXPECT_EQ("", Sh(dir(), "git status --porcelain -- out-a out-b"));
  EXPECT_FALSE(fs::exists(dir() + "/.git/nemoc.lock"));
}

// E17: a kill between the index write and the branch update. libgit2 moved
// the branch first, so a kill left it advanced over a stale index: the
// user's next `git commit` silently reverted nemoc's commit, and the next
// `nemoc build --commit` said "nothing to commit" with the index still stale.
// Both follow-ups now record nemoc's trees.
TEST_F(GitRepoTest, AKillBetweenIndexAndBranchNeverRevertsNemocsCommit) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  Sh(dir(), "git add spec.yaml && git commit -q -m spec");
  auto build = [&](int steps, bool kill) {
    std::vector<std::string> args = {"build", "spec.yaml", "--quiet", "--commit", "--set",
                                     "spec.stages.train.maxSteps=" + std::to_string(steps)};
    if (!KubeSchemasDir().empty()) args.insert(args.begin() + 1, {"--kube-schemas", KubeSchemasDir()});
    return RunNemoc(args, dir(), {{"NEMOC_FAULT_INJECT", kill ? "commit-between-index-and-ref" : ""}});
  };
  auto head_steps = [&] { return Sh(dir(), "git grep -h max_steps HEAD -- out/demo/onprem/00-base"); };
  ASSERT_EQ(0, build(10, false).exit_code);

  // The user's own `git commit` after the kill.
  RunResult killed = build(11, true);
  ASSERT_NE(0, killed.exit_code) << "the fault point was not reached";
  Sh(dir(), "git commit -q -m 'my own commit'");
  EXPECT_EQ("", Sh(dir(), "git diff --stat HEAD -- out")) << "the user's commit reverted nemoc's trees";
  EXPECT_NE(std::string::npos, head_steps().find("max_steps: 11")) << head_steps();

  // nemoc's next --commit after the kill.
  ASSERT_NE(0, build(12, true).exit_code);
  RunResult again = build(12, false);
  ASSERT_EQ(0, again.exit_code) << again.err;
  EXPECT_EQ("", Sh(dir(), "git status --porcelain -- out"));
  EXPECT_NE(std::string::npos, head_steps().find("max_steps: 12")) << head_steps();
  EXPECT_EQ("", Sh(dir(), "git fsck --no-progress 2>&1 | grep -v '^dangling' || true"));
}

// E14: what `git commit` does and libgit2 does not -- commit hooks and signing --
// is refused before anything is written; --no-verify commits without the hooks.
TEST_F(GitRepoTest, HooksAndSigningAreRefusedBeforeAnythingIsWritten) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  const std::string head = Sh(dir(), "git rev-parse HEAD");
  scratch_.Write(".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n");
  Sh(dir(), "chmod +x .git/hooks/pre-commit");
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("pre-commit hook"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-verify"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out")) << "out/ written before the commit was refused";

  // core.hooksPath relative to the work tree is where git looks instead.
  fs::remove(dir() + "/.git/hooks/pre-commit");
  scratch_.Write("githooks/commit-msg", "#!/bin/sh\nexit 0\n");
  Sh(dir(), "chmod +x githooks/commit-msg && git add githooks && git commit -q -m hooks && "
            "git config core.hooksPath githooks");
  const std::string with_hooks = Sh(dir(), "git rev-parse HEAD");
  r = Nemoc({"build", "--commit", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("commit-msg hook"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out"));

  Sh(dir(), "git config commit.gpgsign true");
  r = Nemoc({"build", "--commit", "--no-verify", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("commit.gpgsign"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("hook"), std::string::npos) << "--no-verify still refused the hook: " << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/out"));
  EXPECT_EQ(Sh(dir(), "git rev-parse HEAD"), with_hooks);

  Sh(dir(), "git config commit.gpgsign false");
  r = Nemoc({"build", "--commit", "--no-verify", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), std::stoi(Sh(dir(), "git rev-list --count " + head.substr(0, 40))) + 2);
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "");  // the spec is committed with its trees (D6)

  r = Nemoc({"build", "--no-verify", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // --no-verify only applies with --commit
}

// E13: only names git itself accepts for a branch.
// E26: a branch checked out in another worktree was advanced, leaving that
// worktree's index stale (its next `git commit` reverts nemoc's); FETCH_HEAD
// and origin/main were taken as branch names. All refused before anything
// is written.
TEST_F(GitRepoTest, BranchesGitConfusesOrAnotherWorktreeHoldsAreRefused) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  Sh(dir(), "git remote add origin https://git.example/acme/infra.git && "
            "git update-ref refs/remotes/origin/main HEAD && git tag v1 && "
            "git worktree add -q ../" + fs::path(dir()).filename().string() + "-wt -b deploy");
  const std::string tip = Sh(dir(), "git rev-parse deploy");
  for (const char* branch : {"FETCH_HEAD", "ORIG_HEAD", "origin/main", "origin/next", "v1"}) {
    RunResult r = Nemoc({"build", "--commit", "--branch", branch, "spec.yaml"});
    EXPECT_EQ(r.exit_code, 2) << branch << ": " << r.err;
    EXPECT_NE(r.err.find("would make a branch git confuses with"), std::string::npos) << branch << ": " << r.err;
  }
  RunResult r = Nemoc({"build", "--commit", "--branch", "deploy", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--branch deploy is checked out in another worktree"), std::string::npos) << r.err;
  EXPECT_EQ(tip, Sh(dir(), "git rev-parse deploy"));
  EXPECT_FALSE(fs::exists(dir() + "/out"));
  EXPECT_EQ(Sh(dir(), "git for-each-ref --format='%(refname)' refs/heads"), "refs/heads/deploy\nrefs/heads/main\n");
  fs::remove_all(dir() + "-wt");
}

TEST_F(GitRepoTest, BranchMustBeAValidBranchName) {
  scratch_.Write("spec.yaml", kGitopsSpec);
  for (const char* branch : {"HEAD", "@", "-x", "refs/heads/x", "a..b", "x.lock"}) {
    RunResult r = Nemoc({"build", "--commit", std::string("--branch=") + branch, "spec.yaml"});
    EXPECT_EQ(r.exit_code, 2) << branch << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("not a valid branch name"), std::string::npos) << branch << ": " << r.err;
  }
  EXPECT_EQ(Sh(dir(), "git for-each-ref --format='%(refname)' refs/heads"), "refs/heads/main\n");
  RunResult r = Nemoc({"build", "--commit", "--branch", "gitops/demo", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(GitCommitUsageTest, OutsideARepositoryIsAnError) {
  ScratchDir scratch;
  scratch.Write("spec.yaml", kGitopsSpec);
  RunResult r = RunNemoc({"build", "--commit", "spec.yaml"}, scratch.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not in a Git repository"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(scratch.path() + "/out"));
  r = RunNemoc({"build", "--branch", "x", "spec.yaml"}, scratch.path());
  EXPECT_EQ(r.exit_code, 2);
}

// Every Argo CD source path and Flux Kustomization path of the golden trees
// that points into this repository names a directory that exists and holds a
// kustomization.yaml; every stage directory has its Flux Kustomization.
TEST(GitopsGoldenTest, SourcePathsPointAtDirectoriesThatExist) {
  int checked = 0;
  for (const std::string root : {"out", "tests/golden"}) {
    for (const auto& entry : fs::recursive_directory_iterator(SourceDir() + "/" + root)) {
      const std::string path = entry.path().string();
      const bool cluster_tree = path.find("/_clusters/") != std::string::npos;
      if (!entry.is_regular_file() || (path.find("/gitops/") == std::string::npos && !cluster_tree) ||
          entry.path().filename() == "kustomization.yaml" || entry.path().extension() != ".yaml") {
        continue;
      }
      const YAML::Node doc = YAML::LoadFile(path);
      const std::string kind = doc["kind"].as<std::string>();
      const bool platform = doc["metadata"]["labels"]["app.kubernetes.io/part-of"].as<std::string>() ==
                            "nemoc-platform";
      std::vector<std::string> paths;
      // A platform object points into this repository only as the cluster's
      // own directories (decision F3); components come from their releases.
      const std::string source_path = kind == "Application" ? doc["spec"]["source"]["path"].as<std::string>() : "";
      if (kind == "Application" && (!platform || source_path.find("_clusters/") != std::string::npos)) {
        paths.push_back(source_path);
      }
      if (kind == "ApplicationSet") {
        for (const auto& e : doc["spec"]["generators"][0]["list"]["elements"]) {
          paths.push_back(e["path"].as<std::string>());
        }
      }
      if (kind == "Kustomization" && doc["spec"]["path"]) {
        const std::string p = doc["spec"]["path"].as<std::string>();
        if (!platform || p.find("_clusters/") != std::string::npos) paths.push_back(p);
      }
      for (std::string p : paths) {
        SCOPED_TRACE(path + ": " + p);
        if (p.rfind("./", 0) == 0) p = p.substr(2);
        EXPECT_EQ(p.rfind(root + "/", 0), 0u);
        EXPECT_TRUE(fs::is_regular_file(SourceDir() + "/" + p + "/kustomization.yaml"));
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 10);
}

TEST(GitopsGoldenTest, EveryStageObjectHasItsSyncWaveAndEveryStageItsKustomization) {
  // The GKE example uses both engines.
  const std::string target = SourceDir() + "/out/llama31-405b-pretrain/gke-a4";
  ASSERT_TRUE(fs::is_directory(target + "/gitops/flux"));
  std::set<std::string> stages, kustomized;
  int roots = 0;
  for (const auto& dir : fs::directory_iterator(target)) {
    const std::string name = dir.path().filename().string();
    if (!dir.is_directory() || name == "gitops") continue;
    stages.insert(name.substr(3));
    for (const auto& file : fs::directory_iterator(dir.path())) {
      if (file.path().filename() == "kustomization.yaml") continue;
      const YAML::Node doc = YAML::LoadFile(file.path().string());
      EXPECT_EQ(doc["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"].as<std::string>(""),
                std::to_string(std::stoi(name.substr(0, 2))))
          << file.path();
    }
  }
  // gitops/flux and its root/ (the bootstrap's objects, C14/F14).
  std::vector<fs::path> flux_files;
  for (const char* dir : {"/gitops/flux", "/gitops/flux/root"}) {
    for (const auto& file : fs::directory_iterator(target + dir)) {
      if (file.is_regular_file()) flux_files.push_back(file.path());
    }
  }
  for (const auto& path : flux_files) {
    const YAML::Node doc = YAML::LoadFile(path.string());
    if (!doc["kind"] || doc["kind"].as<std::string>() != "Kustomization" || !doc["spec"]) continue;
    const std::string p = doc["spec"]["path"].as<std::string>();
    if (p.size() >= 12 && p.substr(p.size() - 12) == "/gitops/flux") {
      // The root (C11): gitops/flux itself, pruned, never waiting on workloads.
      EXPECT_TRUE(doc["spec"]["prune"].as<bool>(false)) << path;
      EXPECT_FALSE(doc["spec"]["healthChecks"]) << path;
      ++roots;
      continue;
    }
    const std::string stage_dir = p.substr(p.rfind('/') + 1);
    kustomized.insert(stage_dir.substr(3));
    // C2: wait: true skips the health of Skipped (IfNotPresent, existing)
    // objects; wait: false + healthChecks by name checks them every time.
    EXPECT_FALSE(doc["spec"]["wait"].as<bool>(true)) << path;
    std::set<std::string> checked, present;
    for (const auto& ref : doc["spec"]["healthChecks"]) {
      checked.insert(ref["kind"].as<std::string>() + "/" + ref["name"].as<std::string>());
    }
    for (const auto& object : fs::directory_iterator(target + "/" + stage_dir)) {
      if (object.path().filename() == "kustomization.yaml") continue;
      const YAML::Node o = YAML::LoadFile(object.path().string());
      present.insert(o["kind"].as<std::string>() + "/" + o["metadata"]["name"].as<std::string>());
    }
    EXPECT_EQ(checked, present) << path;
    EXPECT_TRUE(doc["spec"]["retryInterval"]) << path;
    EXPECT_FALSE(doc["spec"]["force"]) << path;
  }
  EXPECT_EQ(stages, kustomized);
  EXPECT_EQ(roots, 1);
}

// C1, C7: nothing makes Argo CD delete and re-create a finished workload, it
// applies only what is out of sync, and a failed sync is retried, boundedly.
TEST(GitopsGoldenTest, ArgoNeverReplacesWorkloadsAndRetriesBoundedly) {
  int applications = 0, objects = 0;
  for (const std::string root : {"out", "tests/golden"}) {
    for (const auto& entry : fs::recursive_directory_iterator(SourceDir() + "/" + root)) {
      const std::string path = entry.path().string();
      if (!entry.is_regular_file() || entry.path().extension() != ".yaml" ||
          entry.path().filename() == "kustomization.yaml") {
        continue;
      }
      YAML::Node doc;
      try {
        doc = YAML::LoadFile(path);
      } catch (const YAML::Exception&) {
        continue;  // multi-document files (platform manifests) are not stage objects
      }
      if (!doc.IsMap() || !doc["kind"] || !doc["metadata"].IsMap()) continue;
      ++objects;
      const std::string options =
          doc["metadata"]["annotations"]["argocd.argoproj.io/sync-options"].as<std::string>("");
      EXPECT_EQ(options.find("Replace=true"), std::string::npos) << path;
      EXPECT_EQ(options.find("Force=true"), std::string::npos) << path;
      if (doc["kind"].as<std::string>() != "Application" || path.find("/gitops/argocd/") == std::string::npos) {
        continue;
      }
      ++applications;
      std::set<std::string> sync_options;
      for (const auto& o : doc["spec"]["syncPolicy"]["syncOptions"]) sync_options.insert(o.as<std::string>());
      // C15: a retried sync must apply the failed stage again and fail on its
      // health, not drop it as unchanged and go on to the next wave
      // (tests/gitops/replay scenario C15-retry-after-failed-stage).
      EXPECT_FALSE(sync_options.count("ApplyOutOfSyncOnly=true")) << path;
      EXPECT_GT(doc["spec"]["syncPolicy"]["retry"]["limit"].as<int>(0), 0) << path;
    }
  }
  EXPECT_GT(objects, 100);
  EXPECT_GT(applications, 0);
}

TEST(GitopsGoldenTest, EveryGitopsDirectoryBuildsWithKubectlKustomize) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
    NEMOC_MISSING_PREREQUISITE("kubectl not installed");
  }
  int built = 0;
  for (const std::string root : {"out", "tests/golden"}) {
    for (const auto& entry : fs::recursive_directory_iterator(SourceDir() + "/" + root)) {
      const std::string path = entry.path().string();
      if (entry.path().filename() != "kustomization.yaml" ||
          (path.find("/gitops/") == std::string::npos && path.find("/_clusters/") == std::string::npos)) {
        continue;
      }
      const std::string command = "kubectl kustomize '" + entry.path().parent_path().string() + "' >/dev/null";
      EXPECT_EQ(0, std::system(command.c_str())) << command;
      ++built;
    }
  }
  EXPECT_GE(built, 20);
}

}  // namespace
}  // namespace nemoc::testing
