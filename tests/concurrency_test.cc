// Several nemoc processes writing one output directory at once
// (field-review.md E1: 19 bad trees in 319 rounds before the per-project
// lock). Every round starts two builds of two variants of one project at the
// same moment (four processes, two per variant); afterwards the tree must be exactly one of the two variants'
// trees (never partial, never mixed), no temporary sibling may be left, both
// processes must succeed, and the next build must succeed too.
#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

const char kSpec[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: race
spec:
  namespace: race-ns
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
      gpusPerNode: 8
      parallelism: {tensor: 2, pipeline: 2, sequenceParallel: true}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
      rdma: {count: 4}
)";

// What a single, uncontended build of each variant writes.
std::string ReferenceTree(const ScratchDir& scratch, const std::string& spec,
                          const std::string& set, const std::string& name) {
  const std::string out = scratch.path() + "/ref-" + name;
  RunResult r = RunNemoc({"build", "--quiet", "--out", out, "--set", set, spec});
  EXPECT_EQ(0, r.exit_code) << r.err;
  return TreeFingerprint(out + "/race/onprem");
}

std::vector<std::string> Siblings(const std::string& project_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(project_dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

TEST(ConcurrencyTest, TwoBuildsIntoOneOutDirLeaveOneCleanTree) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  const std::string a_set = "spec.stages.train.batch.global=32";
  const std::string b_set = "spec.stages.train.batch.global=64";
  const std::string tree_a = ReferenceTree(scratch, spec, a_set, "a");
  const std::string tree_b = ReferenceTree(scratch, spec, b_set, "b");
  ASSERT_NE(tree_a, tree_b);

  const std::string out = scratch.path() + "/out";
  const std::string locks = scratch.path() + "/tmp";  // where the lock files go
  fs::create_directories(locks);
  constexpr int kRounds = 40;
  int saw_a = 0, saw_b = 0;
  for (int round = 0; round < kRounds; ++round) {
    // Four processes, two per variant, started together.
    std::vector<RunResult> results(4);
    std::vector<std::thread> threads;
    for (size_t k = 0; k < results.size(); ++k) {
      threads.emplace_back([&, k] {
        results[k] = RunNemoc({"build", "--quiet", "--out", out, "--set", k % 2 ? b_set : a_set, spec},
                              "", {{"TMPDIR", locks}});
      });
    }
    for (auto& t : threads) t.join();
    for (const RunResult& r : results) {
      ASSERT_EQ(0, r.exit_code) << "round " << round << ":\n" << r.err;
      EXPECT_EQ(std::string::npos, r.err.find("interrupted")) << r.err;
    }
    const std::string got = TreeFingerprint(out + "/race/onprem");
    ASSERT_TRUE(got == tree_a || got == tree_b) << "round " << round << ": a mixed or partial tree";
    (got == tree_a ? saw_a : saw_b) += 1;
    const std::vector<std::string> siblings = Siblings(out + "/race");
    ASSERT_EQ(std::vector<std::string>{"onprem"}, siblings) << "round " << round;
  }
  // And the next build always succeeds and writes its own variant.
  RunResult next = RunNemoc({"build", "--quiet", "--out", out, "--set", a_set, spec});
  ASSERT_EQ(0, next.exit_code) << next.err;
  EXPECT_EQ(tree_a, TreeFingerprint(out + "/race/onprem"));
  // The lock's file is removed by its holder: nothing accumulates in $TMPDIR.
  EXPECT_TRUE(fs::is_empty(locks)) << Siblings(locks).front();
  RecordProperty("a_wins", saw_a);
  RecordProperty("b_wins", saw_b);
}

// field-review.md E15: the lock lived in $TMPDIR, so two builds with
// different TMPDIRs (sudo, systemd PrivateTmp, two CI containers on one
// workspace) each took their own and one deleted the other's live staging
// tree. Build A is held right after taking the output root's lock
// (NEMOC_TEST_PAUSE); build B, with another TMPDIR, must wait for it.
TEST(ConcurrencyTest, BuildsWithDifferentTmpdirsShareTheOutputRootsLock) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  const std::string a_set = "spec.stages.train.batch.global=32";
  const std::string b_set = "spec.stages.train.batch.global=64";
  const std::string tree_b = ReferenceTree(scratch, spec, b_set, "b");
  const std::string out = scratch.path() + "/out";
  const std::string t1 = scratch.path() + "/tmp1", t2 = scratch.path() + "/tmp2";
  fs::create_directories(t1);
  fs::create_directories(t2);
  const std::string gate_a = scratch.path() + "/gate-a", gate_b = scratch.path() + "/gate-b";
  RunResult a, b;
  const bool waited = SecondReachesItsPauseWhileFirstIsHeld(
      [&] {
        return RunNemoc({"build", "--quiet", "--out", out, "--set", a_set, spec}, "",
                        {{"TMPDIR", t1}, {"NEMOC_TEST_PAUSE", "out-locked=" + gate_a}});
      },
      gate_a,
      [&] {
        return RunNemoc({"build", "--out", out, "--set", b_set, spec}, "",
                        {{"TMPDIR", t2}, {"NEMOC_TEST_PAUSE", "out-lock-wait=" + gate_b}});
      },
      gate_b, &a, &b);
  EXPECT_TRUE(waited) << "build B did not wait for build A's lock:\n" << b.err;
  ASSERT_EQ(0, a.exit_code) << a.err;
  ASSERT_EQ(0, b.exit_code) << b.err;
  EXPECT_NE(std::string::npos, b.err.find("waiting for another nemoc writing")) << b.err;
  EXPECT_EQ(std::string::npos, a.err.find("interrupted") + b.err.find("interrupted") + 1) << a.err << b.err;
  EXPECT_EQ(tree_b, TreeFingerprint(out + "/race/onprem"));
  EXPECT_EQ(std::vector<std::string>{"onprem"}, Siblings(out + "/race"));
  // The lock file lives in the output root only while held.
  EXPECT_FALSE(fs::exists(out + "/.nemoc.lock"));
  EXPECT_TRUE(fs::is_empty(t1) && fs::is_empty(t2));
}

// A build that fails after taking the lock leaves no output root behind:
// the lock created the root, and removes it again when it is still empty.
TEST(ConcurrencyTest, AFailedBuildLeavesNoOutputRootForItsLock) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  // --commit outside a repository fails after the output lock is taken.
  RunResult r = RunNemoc({"build", "--quiet", "--commit", "--repo", scratch.path(), "--out",
                          scratch.path() + "/fresh/nested/out", spec});
  ASSERT_EQ(1, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("not in a Git repository")) << r.err;
  EXPECT_FALSE(fs::exists(scratch.path() + "/fresh")) << "the lock's directories were left behind";
}

// E16: a user's directory under a reserved name is refused -- and was then
// removed when the build gave up. It must survive, and the error name it.
TEST(ConcurrencyTest, AUsersDirectoryUnderAReservedNameSurvivesTheRefusal) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  const std::string notes = scratch.Write("out/race/.onprem.nemoc-tmp/notes.txt", "mine\n");
  RunResult r = RunNemoc({"build", "--quiet", "--out", scratch.path() + "/out", spec});
  EXPECT_EQ(1, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("so nemoc did not create it; refusing to remove it")) << r.err;
  EXPECT_TRUE(fs::exists(notes)) << "nemoc removed a directory it said it refused to touch";
  EXPECT_FALSE(fs::exists(scratch.path() + "/out/race/onprem"));
}

// E27: a symlinked out/<project> or out/_clusters led writes, swaps and
// removals outside --out. Both are refused, located, and nothing outside
// the root changes.
TEST(ConcurrencyTest, SymlinkedProjectOrClustersDirectoryIsRefused) {
  for (const std::string linked : {"race", "_clusters"}) {
    ScratchDir scratch;
    // With GitOps, the cluster bundle goes to out/_clusters.
    const std::string spec = scratch.Write(
        "race.yaml", Replace(kSpec, "  targets:", "  gitops: {repoURL: https://git.example/infra.git}\n  targets:"));
    const std::string out = scratch.path() + "/out";
    ASSERT_EQ(0, RunNemoc({"build", "--quiet", "--out", out, spec}).exit_code);
    ASSERT_TRUE(fs::is_directory(out + "/" + linked));
    fs::rename(out + "/" + linked, scratch.path() + "/elsewhere");
    fs::create_directory_symlink("../elsewhere", out + "/" + linked);
    const std::string before = TreeFingerprint(scratch.path() + "/elsewhere");
    RunResult r = RunNemoc({"build", "--quiet", "--out", out, "--set", "spec.stages.train.batch.global=64", spec});
    EXPECT_EQ(1, r.exit_code) << linked << "\n" << r.err;
    EXPECT_NE(std::string::npos, r.err.find(out + "/" + linked + ": error: " + out + "/" + linked +
                                             " is a symlink or special file"))
        << r.err;
    EXPECT_EQ(before, TreeFingerprint(scratch.path() + "/elsewhere")) << linked;
  }
}

// field-review.md E4: an I/O error in a multi-spec build replaced the earlier
// targets and left an empty project directory. Spec "race" builds first, then
// "other" cannot be written (a regular file stands where its project
// directory goes): "race" must keep its previous tree.
TEST(ConcurrencyTest, MultiSpecBuildIsAllOrNothing) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  std::string other_text = kSpec;
  other_text.replace(other_text.find("name: race"), 10, "name: other");
  const std::string other = scratch.Write("other.yaml", other_text);
  const std::string out = scratch.path() + "/out";
  RunResult first = RunNemoc({"build", "--quiet", "--out", out, spec});
  ASSERT_EQ(0, first.exit_code) << first.err;
  scratch.Write("out/other", "not a directory\n");
  const std::string before = TreeFingerprint(out);

  RunResult r = RunNemoc({"build", spec, other, "--quiet", "--out", out, "--set",
                          "spec.stages.train.batch.global=64"});
  EXPECT_NE(0, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("out/other")) << r.err;
  EXPECT_EQ(before, TreeFingerprint(out)) << "a target was replaced although the build failed";
  EXPECT_EQ(std::vector<std::string>{"onprem"}, Siblings(out + "/race"));
}

// Issue #47: a spec's trees are staged on disk as soon as it has compiled
// (1,000 targets held ~200 MiB of trees until the swap). A spec compiled
// after it that fails -- here its profile cannot mount the storage, found by
// the libraries -- still leaves every tree as it was and no staging behind,
// whatever the order the two workers finish in (-j 1: "race" is staged
// first; -j 2: either).
TEST(ConcurrencyTest, ASpecStagedBeforeAnotherFailsIsAbandoned) {
  ScratchDir scratch;
  const std::string spec = scratch.Write("race.yaml", kSpec);
  std::string broken_text = kSpec;
  broken_text.replace(broken_text.find("name: race"), 10, "name: other");
  broken_text.replace(broken_text.find("nfs: {server: nfs.internal, path: /export}"), 42, "gcs: {bucket: ckpt}");
  const std::string broken = scratch.Write("other.yaml", broken_text);
  const std::string out = scratch.path() + "/out";
  RunResult first = RunNemoc({"build", "--quiet", "--out", out, spec});
  ASSERT_EQ(0, first.exit_code) << first.err;
  const std::string before = TreeFingerprint(out);
  for (const char* jobs : {"1", "2"}) {
    RunResult r = RunNemoc({"build", "--quiet", "-j", jobs, "--out", out, "--set", "spec.stages.train.batch.global=64",
                            spec, broken});
    EXPECT_EQ(1, r.exit_code) << r.err;
    EXPECT_NE(std::string::npos, r.err.find("cannot mount gcs storage")) << r.err;
    EXPECT_EQ(before, TreeFingerprint(out)) << "-j " << jobs << ": a tree changed although the build failed";
    EXPECT_EQ(std::vector<std::string>{"onprem"}, Siblings(out + "/race")) << "-j " << jobs;
    std::vector<std::string> top = Siblings(out);
    std::sort(top.begin(), top.end());
    EXPECT_EQ((std::vector<std::string>{"race"}), top) << "-j " << jobs;  // no staging left beside it
  }
  // Without the broken spec the same build replaces the tree.
  RunResult ok = RunNemoc({"build", "--quiet", "--out", out, "--set", "spec.stages.train.batch.global=64", spec});
  ASSERT_EQ(0, ok.exit_code) << ok.err;
  EXPECT_NE(before, TreeFingerprint(out));
}

}  // namespace
}  // namespace nemoc::testing
