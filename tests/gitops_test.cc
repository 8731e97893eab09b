// GitOps delivery end to end: `nemoc build --commit` in real temporary Git
// repositories (the git CLI checks what libgit2 wrote), the drift gate
// `nemoc check`, `nemoc diff`, and the GitOps objects of the golden trees.
#include "test_prerequisite.h"
#include <cstdio>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

// Runs a shell command in `dir`; returns its stdout and stderr.
std::string Sh(const std::string& dir, const std::string& command, int* exit_code = nullptr) {
  const std::string full = "cd '" + dir + "' && " + command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  if (exit_code != nullptr) *exit_code = WEXITSTATUS(status);
  return out;
}

const char kSpec[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: demo
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model:
    preset: llama2-7b
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
  scratch_.Write("spec.yaml", kSpec);
  // First commit: every generated file, and nothing else (the spec stays untracked).
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("committed "), std::string::npos) << r.out;
  EXPECT_EQ(Commits(), 3);
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: demo/onprem\n");
  EXPECT_EQ(Sh(dir(), "git log -1 --format='%an <%ae>'"), "CI Bot <ci@example.com>\n");
  const std::string files = Sh(dir(), "git show --name-only --format= HEAD");
  EXPECT_NE(files.find("out/demo/onprem/30-train/"), std::string::npos) << files;
  EXPECT_NE(files.find("out/demo/onprem/gitops/flux/kustomization-demo-onprem-train.yaml"),
            std::string::npos) << files;
  EXPECT_NE(files.find("out/demo/onprem/.nemoc-manifest"), std::string::npos);
  EXPECT_EQ(files.find("spec.yaml"), std::string::npos);
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? spec.yaml\n");

  // No-op second build: no new commit.
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing to commit"), std::string::npos) << r.out;
  EXPECT_EQ(Commits(), 3);

  // A changed spec: one commit naming the target; the training job gets a
  // new content-hashed name, the old file is removed in the same commit.
  const std::string before = Sh(dir(), "ls out/demo/onprem/30-train");
  scratch_.Write("spec.yaml", Replace(kSpec, "maxSteps: 10", "maxSteps: 20"));
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
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? spec.yaml\n");
}

TEST_F(GitRepoTest, DeletedStageIsRemovedInTheCommit) {
  scratch_.Write("spec.yaml", kSpec);
  ASSERT_EQ(Nemoc({"build", "--commit", "spec.yaml"}).exit_code, 0);
  // Without the GitOps section the gitops/ directory goes, in one commit.
  std::string spec = kSpec;
  spec = Replace(spec, "  gitops:\n    repoURL: https://git.example/acme/infra.git\n"
                       "    engines: [argocd, flux]\n", "");
  scratch_.Write("spec.yaml", spec);
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  const std::string status = Sh(dir(), "git show --no-renames --name-status --format= HEAD");
  EXPECT_NE(status.find("D\tout/demo/onprem/gitops/flux/kustomization-demo-onprem-train.yaml"),
            std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir() + "/out/demo/onprem/gitops"));
  EXPECT_EQ(Sh(dir(), "git ls-files out/demo/onprem/gitops"), "");
}

TEST_F(GitRepoTest, DeletedPipelineStageIsRemovedInTheCommit) {
  // A spec with an evaluation stage, then the same spec without it: the
  // stage directory and its Flux Kustomization go in one commit.
  const std::string with_eval =
      Replace(kSpec, "      data: {mock: true}\n", "      data: {mock: true}\n    evaluate: {}\n");
  scratch_.Write("spec.yaml", with_eval);
  RunResult r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Commits(), 3);
  ASSERT_TRUE(fs::exists(dir() + "/out/demo/onprem/40-evaluate/kustomization.yaml"));
  ASSERT_NE(Sh(dir(), "git ls-files out/demo/onprem/40-evaluate"), "");

  scratch_.Write("spec.yaml", kSpec);
  r = Nemoc({"build", "--commit", "spec.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Commits(), 4);
  EXPECT_EQ(Sh(dir(), "git log -1 --format=%s"), "nemoc build: demo/onprem\n");
  const std::string status = Sh(dir(), "git show --no-renames --name-status --format= HEAD");
  EXPECT_NE(status.find("D\tout/demo/onprem/40-evaluate/kustomization.yaml"), std::string::npos)
      << status;
  EXPECT_NE(status.find("D\tout/demo/onprem/40-evaluate/job-demo-evaluate-"), std::string::npos)
      << status;
  EXPECT_NE(status.find("D\tout/demo/onprem/gitops/flux/kustomization-demo-onprem-evaluate.yaml"),
            std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir() + "/out/demo/onprem/40-evaluate"));
  EXPECT_EQ(Sh(dir(), "git ls-files out/demo/onprem/40-evaluate"), "");
  EXPECT_EQ(Sh(dir(), "git status --porcelain"), "?? spec.yaml\n");
}

TEST_F(GitRepoTest, CheckFindsHandEditsAndBuildCommitRefusesThem) {
  scratch_.Write("spec.yaml", kSpec);
  ASSERT_EQ(Nemoc({"build", "--commit", "spec.yaml"}).exit_code, 0);
  RunResult r = Nemoc({"check", "spec.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  const std::string edited = "out/demo/onprem/00-base/namespace-nemo.yaml";
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
  scratch_.Write("spec.yaml", kSpec);
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
            "Release Bot|nemoc build: demo/onprem\n");
  EXPECT_NE(Sh(dir(), "git ls-tree -r --name-only deploy").find("out/demo/onprem/kustomization.yaml"),
            std::string::npos);
  EXPECT_EQ(Sh(dir(), "git rev-list --count deploy"), "3\n");  // on top of main
}

TEST(GitCommitUsageTest, OutsideARepositoryIsAnError) {
  ScratchDir scratch;
  scratch.Write("spec.yaml", kSpec);
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
      if (!entry.is_regular_file() || path.find("/gitops/") == std::string::npos ||
          entry.path().filename() == "kustomization.yaml") {
        continue;
      }
      const YAML::Node doc = YAML::LoadFile(path);
      const std::string kind = doc["kind"].as<std::string>();
      const bool platform = doc["metadata"]["labels"]["app.kubernetes.io/part-of"].as<std::string>() ==
                            "nemoc-platform";
      std::vector<std::string> paths;
      if (kind == "Application" && !platform) paths.push_back(doc["spec"]["source"]["path"].as<std::string>());
      if (kind == "ApplicationSet") {
        for (const auto& e : doc["spec"]["generators"][0]["list"]["elements"]) {
          paths.push_back(e["path"].as<std::string>());
        }
      }
      if (kind == "Kustomization" && !platform) paths.push_back(doc["spec"]["path"].as<std::string>());
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
  for (const auto& file : fs::directory_iterator(target + "/gitops/flux")) {
    const YAML::Node doc = YAML::LoadFile(file.path().string());
    if (doc["kind"].as<std::string>() != "Kustomization" || !doc["spec"]) continue;
    const std::string p = doc["spec"]["path"].as<std::string>();
    kustomized.insert(p.substr(p.rfind('/') + 4));
    EXPECT_TRUE(doc["spec"]["wait"].as<bool>());
  }
  EXPECT_EQ(stages, kustomized);
}

TEST(GitopsGoldenTest, EveryGitopsDirectoryBuildsWithKubectlKustomize) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
    NEMOC_MISSING_PREREQUISITE("kubectl not installed");
  }
  int built = 0;
  for (const std::string root : {"out", "tests/golden"}) {
    for (const auto& entry : fs::recursive_directory_iterator(SourceDir() + "/" + root)) {
      const std::string path = entry.path().string();
      if (entry.path().filename() != "kustomization.yaml" || path.find("/gitops/") == std::string::npos) {
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
