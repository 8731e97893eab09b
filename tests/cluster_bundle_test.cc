// The platform bundle rooted per cluster (field-review.md decision F3,
// compiler/cluster_bundle.h): every target naming a cluster, in any spec
// built into the output root, contributes to one tree
// <out>/_clusters/<cluster>/; building one project keeps what the others
// contribute; clusters that would be installed twice or disagree are located
// errors that leave the disk untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

// A project on vanilla-k8s delivered by Argo CD with the platform bundle.
std::string Spec(const std::string& name, const std::string& runtime, const std::string& cluster,
                 const std::string& server, const std::string& repo = "https://git.example/acme/infra.git") {
  return R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: )" + name + R"(
spec:
  namespace: )" + name + R"(-ns
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
      nodes: 2
      gpusPerNode: 8
      parallelism: {tensor: 2, pipeline: 2, sequenceParallel: true}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  gitops:
    repoURL: )" + repo + R"(
    engines: [argocd]
    clusters: {lab: ")" + server + R"("}
  targets:
    - name: lab
      profile: vanilla-k8s
      runtime: )" + runtime + R"(
      cluster: )" + cluster + R"(
      rdma: {count: 4}
)";
}

const char kServer[] = "https://lab.example.internal:6443";

bool Has(const std::string& dir, const std::string& file) { return fs::exists(dir + "/" + file); }

TEST(ClusterBundleTest, ProjectsNamingOneClusterShareOneTreeAndKeepEachOthersComponents) {
  ScratchDir scratch;
  const std::string out = scratch.path() + "/out";
  const std::string alpha = scratch.Write("alpha.yaml", Spec("alpha", "pytorchjob", "lab", kServer));
  const std::string beta = scratch.Write("beta.yaml", Spec("beta", "jobset", "lab", kServer));
  RunResult r = RunNemoc({"build", "--quiet", "--out", out, alpha, beta});
  ASSERT_EQ(0, r.exit_code) << r.err;
  const std::string lab = out + "/_clusters/lab";
  const std::string apps = lab + "/platform/apps/argocd";
  // One tree: the union of both projects' components, nothing in the projects' trees.
  EXPECT_TRUE(Has(apps, "application-platform-lab-training-operator.yaml"));  // alpha: PyTorchJob
  EXPECT_TRUE(Has(apps, "application-platform-lab-jobset.yaml"));             // beta: JobSet
  EXPECT_TRUE(Has(apps, "application-platform-lab-gpu-operator.yaml"));
  EXPECT_FALSE(fs::exists(out + "/alpha/lab/gitops/platform"));
  EXPECT_FALSE(fs::exists(out + "/beta/lab/gitops/platform"));
  EXPECT_TRUE(Has(out + "/alpha/lab", "gitops/cluster-bundle.json"));
  const std::string record = ReadFile(lab + "/cluster.json");
  EXPECT_NE(std::string::npos, record.find("\"alpha/lab\"")) << record;
  EXPECT_NE(std::string::npos, record.find("\"beta/lab\"")) << record;
  // The root syncs the cluster's directory.
  EXPECT_NE(std::string::npos, ReadFile(lab + "/platform/argocd/application-platform-lab.yaml")
                                   .find("path: out/_clusters/lab/platform/apps/argocd"));
  const std::string both = TreeFingerprint(lab);

  // Building alpha alone reads beta's contribution from its tree: nothing is dropped.
  r = RunNemoc({"build", "--quiet", "--out", out, alpha});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(both, TreeFingerprint(lab));
  // Also when alpha changes (it is compiled again, not skipped as up to date).
  const std::string alpha2 = scratch.Write("alpha.yaml", Replace(ReadFile(alpha), "nodes: 2", "nodes: 4"));
  r = RunNemoc({"build", "--quiet", "--out", out, alpha2});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(both, TreeFingerprint(lab));

  // beta moves to its own cluster: lab keeps alpha's components only.
  const std::string beta2 = scratch.Write(
      "beta.yaml", Spec("beta", "jobset", "lab-b", "https://lab-b.example.internal:6443"));
  r = RunNemoc({"build", "--quiet", "--out", out, beta2});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_FALSE(Has(apps, "application-platform-lab-jobset.yaml"));
  EXPECT_TRUE(Has(apps, "application-platform-lab-training-operator.yaml"));
  EXPECT_TRUE(Has(out + "/_clusters/lab-b/platform/apps/argocd", "application-platform-lab-b-jobset.yaml"));
  EXPECT_EQ(std::string::npos, ReadFile(lab + "/cluster.json").find("beta/lab"));

  // `nemoc check` sees the cluster trees: up to date now, drift after an edit.
  r = RunNemoc({"check", "--out", out, alpha2, beta2});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  {
    std::string text = ReadFile(apps + "/kustomization.yaml");
    scratch.Write("out/_clusters/lab/platform/apps/argocd/kustomization.yaml", text + "# edited\n");
  }
  r = RunNemoc({"check", "--out", out, alpha2});
  EXPECT_NE(0, r.exit_code);
  EXPECT_NE(std::string::npos, r.out.find("_clusters/lab/platform/apps/argocd/kustomization.yaml")) << r.out;

  // The last target naming a cluster leaves: its tree goes.
  const std::string alpha3 = scratch.Write(
      "alpha.yaml", Spec("alpha", "pytorchjob", "lab-c", "https://lab-c.example.internal:6443"));
  r = RunNemoc({"build", "--quiet", "--out", out, alpha3});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_FALSE(fs::exists(lab));
  EXPECT_TRUE(fs::exists(out + "/_clusters/lab-c/cluster.json"));
}

// A project directory removed by hand leaves no contribution: the next build
// of any project recomputes the cluster without it, and removes a cluster
// nobody names any more.
TEST(ClusterBundleTest, TargetsRemovedByHandLeaveTheirClusters) {
  ScratchDir scratch;
  const std::string out = scratch.path() + "/out";
  const std::string alpha = scratch.Write("alpha.yaml", Spec("alpha", "pytorchjob", "lab", kServer));
  const std::string beta = scratch.Write("beta.yaml", Spec("beta", "jobset", "lab", kServer));
  const std::string gamma = scratch.Write(
      "gamma.yaml", Spec("gamma", "jobset", "lab-g", "https://lab-g.example.internal:6443"));
  ASSERT_EQ(0, RunNemoc({"build", "--quiet", "--out", out, alpha, beta, gamma}).exit_code);
  const std::string apps = out + "/_clusters/lab/platform/apps/argocd";
  ASSERT_TRUE(Has(apps, "application-platform-lab-jobset.yaml"));
  fs::remove_all(out + "/beta");
  fs::remove_all(out + "/gamma");
  RunResult r = RunNemoc({"check", "--out", out, alpha});
  EXPECT_NE(0, r.exit_code) << "the cluster trees still name the removed targets";
  r = RunNemoc({"build", "--quiet", "--out", out, alpha});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_FALSE(Has(apps, "application-platform-lab-jobset.yaml"));
  EXPECT_TRUE(Has(apps, "application-platform-lab-training-operator.yaml"));
  EXPECT_EQ(std::string::npos, ReadFile(out + "/_clusters/lab/cluster.json").find("beta/lab"));
  EXPECT_FALSE(fs::exists(out + "/_clusters/lab-g"));
  EXPECT_EQ(0, RunNemoc({"check", "--out", out, alpha}).exit_code);
}

// Each refusal: exit 1, located at the `cluster:` line of the spec being
// built, and the output root exactly as it was.
void ExpectRefused(const std::string& out, const std::vector<std::string>& args, const std::string& code,
                   const std::string& location, const std::string& detail) {
  const std::string before = TreeFingerprint(out);
  RunResult r = RunNemoc(args);
  EXPECT_EQ(1, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, r.err.find(location + ": error: ")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find(detail)) << r.err;
  EXPECT_NE(std::string::npos, r.err.find(code)) << r.err;
  EXPECT_EQ(before, TreeFingerprint(out));
}

TEST(ClusterBundleTest, ClustersThatDisagreeAreLocatedAndNothingIsWritten) {
  ScratchDir scratch;
  const std::string out = scratch.path() + "/out";
  const std::string alpha = scratch.Write("alpha.yaml", Spec("alpha", "pytorchjob", "lab", kServer));
  ASSERT_EQ(0, RunNemoc({"build", "--quiet", "--out", out, alpha}).exit_code);

  // One cluster name, two API servers.
  const std::string beta = scratch.Write("beta.yaml", Spec("beta", "jobset", "lab", "https://other:6443"));
  ExpectRefused(out, {"build", "--quiet", "--out", out, beta}, "server", beta + ":30:16",
                "has server https://other:6443 where alpha/lab has " + std::string(kServer));
  // One API server, two cluster names: every component would be installed twice.
  const std::string gamma = scratch.Write("gamma.yaml", Spec("gamma", "jobset", "lab-2", kServer));
  ExpectRefused(out, {"build", "--quiet", "--out", out, gamma}, "same API server", gamma + ":30:16",
                "names cluster 'lab-2' but alpha/lab delivers to the same API server");
  // D7: validate refuses what build refuses.
  ExpectRefused(out, {"validate", "--quiet", "--out", out, gamma}, "same API server", gamma + ":30:16",
                "names cluster 'lab-2' but alpha/lab delivers to the same API server");
  // One cluster, two values for one field of one object.
  const std::string delta = scratch.Write(
      "delta.yaml", Spec("delta", "pytorchjob", "lab", kServer, "https://git.example/other/repo.git"));
  ExpectRefused(out, {"build", "--quiet", "--out", out, delta}, "platform/argocd/application-platform-lab.yaml /spec/source/repoURL",
                delta + ":30:16", "needs https://git.example/other/repo.git where alpha/lab need");
}

}  // namespace
}  // namespace nemoc::testing
