// out/ is the golden output: it must equal what the current nemoc makes from
// examples/, every document must validate strictly against the Kubernetes
// schemas, and every target root must build with kubectl kustomize.
#include "test_prerequisite.h"
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "diagnostic.h"
#include "kube_schemas.h"
#include "spec_loader.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

// Two golden sets: examples/ -> out/ (what reviewers read) and the
// profile × runtime matrix tests/specs/ -> tests/golden/.
struct GoldenSet {
  std::string specs;
  std::string out;
};
const GoldenSet kSets[] = {{"examples", "out"}, {"tests/specs", "tests/golden"}};

std::vector<std::string> Specs(const std::string& dir) {
  std::vector<std::string> specs;
  for (const auto& entry : fs::directory_iterator(SourceDir() + "/" + dir)) {
    if (entry.path().extension() == ".yaml") specs.push_back(entry.path().string());
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

// Target roots: directories under out/<project>/ holding a kustomization.yaml.
std::vector<std::string> TargetRoots(const std::string& out) {
  std::vector<std::string> roots;
  if (!fs::is_directory(out)) return roots;
  for (const auto& project : fs::directory_iterator(out)) {
    if (!project.is_directory()) continue;
    for (const auto& target : fs::directory_iterator(project.path())) {
      if (fs::is_regular_file(target.path() / "kustomization.yaml")) {
        roots.push_back(target.path().string());
      }
    }
  }
  std::sort(roots.begin(), roots.end());
  return roots;
}

// <out>/_clusters/<cluster>: each cluster's platform bundle (decision F3).
std::vector<std::string> ClusterDirs(const std::string& out) {
  std::vector<std::string> dirs;
  if (!fs::is_directory(out + "/_clusters")) return dirs;
  for (const auto& cluster : fs::directory_iterator(out + "/_clusters")) {
    if (cluster.is_directory()) dirs.push_back(cluster.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string Diff(const std::map<std::string, std::string>& want,
                 const std::map<std::string, std::string>& have) {
  std::string report;
  std::set<std::string> names;
  for (const auto& [k, _] : want) names.insert(k);
  for (const auto& [k, _] : have) names.insert(k);
  for (const auto& name : names) {
    auto w = want.find(name);
    auto h = have.find(name);
    if (w == want.end()) report += "  only in committed out/: " + name + "\n";
    else if (h == have.end()) report += "  missing from committed out/: " + name + "\n";
    else if (w->second != h->second) report += "  differs: " + name + "\n";
  }
  return report;
}

std::vector<std::string> ExampleSpecs() { return Specs("examples"); }

TEST(GoldenTest, ExamplesExist) {
  EXPECT_GE(ExampleSpecs().size(), 4u);
  EXPECT_GE(Specs("tests/specs").size(), 1u);
}

TEST(GoldenTest, CommittedTreesMatchWhatNemocBuilds) {
  for (const auto& set : kSets) {
    SCOPED_TRACE(set.specs);
    ScratchDir scratch;
    std::vector<std::string> args = {"build", "--quiet", "--out", scratch.path() + "/out"};
    for (const auto& spec : Specs(set.specs)) args.push_back(spec);
    RunResult r = RunNemoc(args);
    ASSERT_EQ(0, r.exit_code) << r.err;
    EXPECT_EQ("", r.err) << "examples and golden specs must build without warnings";
    std::string report = Diff(ReadAll(scratch.path() + "/out"), ReadAll(SourceDir() + "/" + set.out));
    EXPECT_EQ("", report) << set.out << "/ is stale; regenerate it with scripts/setup and "
                          << "review the diff:\n" << report;
  }
}

TEST(GoldenTest, TwoBuildsAreByteIdentical) {
  ScratchDir a, b;
  std::vector<std::string> specs = ExampleSpecs();
  std::vector<std::string> args_a = {"build", "--quiet", "--out", a.path()};
  std::vector<std::string> args_b = {"build", "--quiet", "--out", b.path()};
  args_a.insert(args_a.end(), specs.begin(), specs.end());
  // The second build runs from another working directory with the specs in
  // reverse order: neither may leak into the output.
  args_b.insert(args_b.end(), specs.rbegin(), specs.rend());
  ASSERT_EQ(0, RunNemoc(args_a).exit_code);
  ASSERT_EQ(0, RunNemoc(args_b, "/").exit_code);
  auto tree_a = ReadAll(a.path());
  EXPECT_GT(tree_a.size(), 5u);
  EXPECT_EQ(tree_a, ReadAll(b.path()));
  // A rebuild over an existing tree changes nothing either.
  const std::string before = TreeFingerprint(a.path());
  RunResult again = RunNemoc(args_a);
  ASSERT_EQ(0, again.exit_code);
  EXPECT_EQ(before, TreeFingerprint(a.path()));
}

TEST(GoldenTest, EveryDocumentValidatesAgainstKubeSchemas) {
  const std::string bundle = KubeSchemasDir();
  if (bundle.empty()) NEMOC_MISSING_PREREQUISITE("kube-schemas bundle not found at " NEMOC_KUBE_SCHEMAS);
  std::string err;
  auto schemas = KubeSchemas::Open(bundle, &err);
  ASSERT_TRUE(schemas) << err;
  int validated = 0;
  std::vector<std::string> roots = TargetRoots(SourceDir() + "/out");
  for (const auto& root : TargetRoots(SourceDir() + "/tests/golden")) roots.push_back(root);
  int clusters = 0;
  for (const std::string out : {"/out", "/tests/golden"}) {
    for (const auto& dir : ClusterDirs(SourceDir() + out)) {
      roots.push_back(dir);
      ++clusters;
    }
  }
  EXPECT_GE(clusters, 10);
  for (const auto& root : roots) {
    for (const auto& [path, contents] : ReadAll(root)) {
      if (fs::path(path).extension() != ".yaml" ||
          fs::path(path).filename() == "kustomization.yaml") {
        continue;
      }
      Document doc;
      Diagnostics diags;
      ASSERT_TRUE(LoadSpecText(root + "/" + path, contents, &doc, &diags))
          << RenderText(diags, {});
      EXPECT_TRUE(schemas->Validate(doc.root, root + "/" + path, &diags))
          << RenderText(diags, {});
      ++validated;
    }
  }
  EXPECT_GE(validated, 70);
}

TEST(GoldenTest, EveryTargetRootBuildsWithKubectlKustomize) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
    NEMOC_MISSING_PREREQUISITE("kubectl not installed");
  }
  auto roots = TargetRoots(SourceDir() + "/out");
  for (const auto& root : TargetRoots(SourceDir() + "/tests/golden")) roots.push_back(root);
  ASSERT_GE(roots.size(), 14u);
  for (const auto& root : roots) {
    std::string command = "kubectl kustomize '" + root + "' >/dev/null";
    EXPECT_EQ(0, std::system(command.c_str())) << "kubectl kustomize failed for " << root;
  }
}

}  // namespace
}  // namespace nemoc::testing
