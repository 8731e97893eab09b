#include "review_diff.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

// What JsonnetExpander::WorkloadKinds gives for the built-in libraries.
const std::vector<std::string> kPrefixes = WorkloadFilePrefixes(
    {"batch/Job", "jobset.x-k8s.io/JobSet", "kubeflow.org/MPIJob", "kubeflow.org/PyTorchJob", "trainer.kubeflow.org/TrainJob"});

FileChange Change(char status, const std::string& path, const std::string& old_text, const std::string& new_text) {
  FileChange c;
  c.status = status;
  c.path = path;
  c.old_text = old_text;
  c.new_text = new_text;
  return c;
}

TEST(ReviewDiffTest, ARenamedHashedFileIsOneChange) {
  std::vector<FileChange> changes = {
      Change('D', "out/p/t/00-base/configmap-p-train-config-92608071.yaml", "name: a\nx: 1\n", ""),
      Change('A', "out/p/t/00-base/configmap-p-train-config-b87d8328.yaml", "", "name: b\nx: 1\n"),
      Change('M', "out/p/t/00-base/kustomization.yaml", "- a\n", "- b\n"),
      // Same stem in another directory: not paired.
      Change('D', "out/p/t/30-train/job-p-train-5953b07f.yaml", "a\n", ""),
      Change('A', "out/p/u/30-train/job-p-train-8d068580.yaml", "", "b\n"),
      // No hash: not paired.
      Change('D', "out/p/t/00-base/namespace-old.yaml", "a\n", ""),
      Change('A', "out/p/t/00-base/namespace-new.yaml", "", "b\n"),
      // Two additions of one stem: ambiguous, not paired.
      Change('D', "out/p/t/40-evaluate/job-p-evaluate-aaaaaaaa.yaml", "a\n", ""),
      Change('A', "out/p/t/40-evaluate/job-p-evaluate-bbbbbbbb.yaml", "", "b\n"),
      Change('A', "out/p/t/40-evaluate/job-p-evaluate-cccccccc.yaml", "", "c\n"),
  };
  PairRenamedFiles(&changes);
  ASSERT_EQ(9u, changes.size());
  const FileChange& renamed = changes[0];  // where its 'A' was, once the 'D' is gone
  EXPECT_EQ('R', renamed.status);
  EXPECT_EQ("out/p/t/00-base/configmap-p-train-config-b87d8328.yaml", renamed.path);
  EXPECT_EQ("out/p/t/00-base/configmap-p-train-config-92608071.yaml", renamed.old_path);
  EXPECT_EQ("name: a\nx: 1\n", renamed.old_text);
  EXPECT_EQ("name: b\nx: 1\n", renamed.new_text);
  int r = 0;
  for (const auto& c : changes) r += c.status == 'R';
  EXPECT_EQ(1, r);
  const LineCounts n = CountLines(renamed);
  EXPECT_EQ(1, n.added);
  EXPECT_EQ(1, n.removed);
  const std::string patch = UnifiedDiff(renamed, false);
  EXPECT_NE(std::string::npos, patch.find("\nrename from out/p/t/00-base/configmap-p-train-config-92608071.yaml\n"
                                          "rename to out/p/t/00-base/configmap-p-train-config-b87d8328.yaml\n"))
      << patch;
  EXPECT_NE(std::string::npos, patch.find("\n-name: a\n+name: b\n")) << patch;
}

TEST(ReviewDiffTest, StatCountsLinesPerFile) {
  FileChange renamed = Change('R', "out/p/t/30-train/job-p-train-8d068580.yaml", "a\nb\n", "a\nc\nd\n");
  renamed.old_path = "out/p/t/30-train/job-p-train-5953b07f.yaml";
  const std::string stat = RenderStat({Change('A', "out/p/t/x.yaml", "", "k: v\n"), renamed});
  EXPECT_EQ(" out/p/t/x.yaml" + std::string(59, ' ') + " | 1 +\n"
            " out/p/t/30-train/{job-p-train-5953b07f.yaml => job-p-train-8d068580.yaml} | 3 ++-\n"
            " 2 files changed, 3 insertions(+), 1 deletion(-)\n",
            stat);
  EXPECT_EQ("", RenderStat({}));
  EXPECT_EQ(" a.yaml | 1 +\n 1 file changed, 1 insertion(+)\n", RenderStat({Change('A', "a.yaml", "", "k: v\n")}));
  EXPECT_EQ("out/p/t", TreeOf("out/p/t/30-train/x.yaml", "out"));
  EXPECT_EQ("out//p/t", TreeOf("out//p/t/SUMMARY.md", "out/"));
  EXPECT_EQ("/abs/out/_clusters/c", TreeOf("/abs/out/_clusters/c/platform/x.yaml", "/abs/out"));
  EXPECT_EQ(nlohmann::json({{"status", "R"}, {"path", renamed.path}, {"oldPath", renamed.old_path},
                            {"added", 2}, {"removed", 1}}),
            ChangeJson(renamed));
}

TEST(ReviewDiffTest, ChangedFactsComeFromSummaryTable) {
  const std::string before =
      "# p / t\n\n| | |\n|---|---|\n| Training | `sft`, 1000 steps |\n| Nodes × GPUs | 2 × 8 |\n"
      "| Image | a |\n\n## Stages\n| 30-train | x |\n";
  const std::string after =
      "# p / t\n\n| | |\n|---|---|\n| Training | `sft`, 1234 steps |\n| Nodes × GPUs | 2 × 8 |\n"
      "| Queue | q |\n\n## Stages\n| 30-train | y |\n";
  EXPECT_EQ(nlohmann::json::parse(R"([
      {"fact": "Image", "before": "a", "after": ""},
      {"fact": "Queue", "before": "", "after": "q"},
      {"fact": "Training", "before": "`sft`, 1000 steps", "after": "`sft`, 1234 steps"}])"),
            ChangedFacts(before, after));
}

TEST(ReviewDiffTest, MarkdownNamesStagesObjectsAndFacts) {
  FileChange job = Change('R', "out/p/t/30-train/pytorchjob-p-train-8d068580.yaml", "a\n", "b\n");
  job.old_path = "out/p/t/30-train/pytorchjob-p-train-5953b07f.yaml";
  const std::vector<FileChange> changes = {
      job,
      Change('M', "out/p/t/30-train/kustomization.yaml", "- a\n", "- b\n"),
      Change('M', "out/p/t/SUMMARY.md", "| | |\n|---|---|\n| Steps | 1 |\n", "| | |\n|---|---|\n| Steps | 2 |\n"),
      Change('A', "out/p/t/gitops/flux/kustomization-p-t-train-e19fe6.yaml", "", "x\n"),
  };
  EXPECT_EQ("### `out/p/t`\n\n"
            "| stage | objects |\n|---|---|\n"
            "| `30-train` | `pytorchjob-p-train-5953b07f` → `pytorchjob-p-train-8d068580` (replaced) (+1 −1) |\n"
            "| `gitops` | `kustomization-p-t-train-e19fe6` added (+1 −0) |\n\n"
            "| fact | before | after |\n|---|---|---|\n| Steps | 1 | 2 |\n\n"
            "**A workload is replaced or removed:** the GitOps engine deletes the old one (a running training "
            "stops; a replaced one runs again under its new name).\n\n",
            RenderMarkdown(changes, {"out/p/t", "out/p/other"}, kPrefixes));
  EXPECT_EQ("No changes: the trees on disk are what the specs make.\n", RenderMarkdown({}, {"out/p/t"}, kPrefixes));
  // A kind no runtime emits is no workload: nothing flagged.
  EXPECT_EQ(RenderMarkdown(changes, {"out/p/t", "out/p/other"}, WorkloadFilePrefixes({"batch/Job"})).find("**A workload"),
            std::string::npos);
}

TEST(ReviewDiff, WorkloadFilesAreNamedByTheKindsTheLibrariesKnow) {
  EXPECT_EQ(WorkloadFilePrefixes({"batch/Job", "jobset.x-k8s.io/JobSet", "kubeflow.org/PyTorchJob"}),
            (std::vector<std::string>{"job-", "jobset-", "pytorchjob-"}));
  EXPECT_TRUE(IsWorkloadFile("out/p/t/30-train/jobset-p-train-1.yaml", kPrefixes));
  EXPECT_FALSE(IsWorkloadFile("out/p/t/00-base/configmap-p-train-config-1.yaml", kPrefixes));
}

}  // namespace
}  // namespace nemoc
