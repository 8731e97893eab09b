#include "build_stamp.h"

#include <gtest/gtest.h>

#include "disk_interface.h"

namespace nemoc {
namespace {

Stamp Sample() {
  Stamp s;
  s.inputs = std::string(32, 'a');
  s.tree = std::string(32, 'b');
  s.imports = {{"-", "nemoc.libsonnet"}, {"0:stages/", "k8s.libsonnet"}};
  s.kinds = {{"v1", "ConfigMap"}, {"kubeflow.org/v1", "PyTorchJob"}};
  return s;
}

TEST(BuildStampTest, LinesRoundTrip) {
  const Stamp s = Sample();
  const std::string lines = StampLines(s);
  EXPECT_EQ(lines,
            "#nemoc-stamp inputs=" + s.inputs + " tree=" + s.tree + "\n"
            "#import -\tnemoc.libsonnet\n#import 0:stages/\tk8s.libsonnet\n"
            "#kind v1\tConfigMap\n#kind kubeflow.org/v1\tPyTorchJob\n");
  Stamp back;
  ASSERT_TRUE(ParseStamp("a.yaml\nb/c.yaml\n" + lines, &back));
  EXPECT_EQ(back.inputs, s.inputs);
  EXPECT_EQ(back.tree, s.tree);
  EXPECT_EQ(back.imports, s.imports);
  EXPECT_EQ(back.kinds, s.kinds);
  EXPECT_EQ(StampLines(Stamp{}), "");
}

TEST(BuildStampTest, MissingOrMalformedStampsAreRefused) {
  Stamp back;
  EXPECT_FALSE(ParseStamp("a.yaml\n", &back));  // a marker from before stamps
  EXPECT_FALSE(ParseStamp("#nemoc-stamp inputs=xyz tree=" + std::string(32, 'b') + "\n", &back));
  EXPECT_FALSE(ParseStamp("#nemoc-stamp tree=" + std::string(32, 'b') + "\n", &back));
  EXPECT_FALSE(ParseStamp(StampLines(Sample()) + "#import no-tab\n", &back));
}

TEST(BuildStampTest, TreeDigestCoversPathsAndBytes) {
  const FileTree a = {{"a/x.yaml", "1"}, {"b.yaml", "2"}};
  EXPECT_EQ(TreeDigest(a), TreeDigest(FileTree(a)));
  EXPECT_NE(TreeDigest(a), TreeDigest({{"a/x.yaml", "1"}, {"b.yaml", "3"}}));
  EXPECT_NE(TreeDigest(a), TreeDigest({{"a/y.yaml", "1"}, {"b.yaml", "2"}}));
  EXPECT_NE(TreeDigest(a), TreeDigest({{"a/x.yaml", "1"}}));
  // Moving bytes between a path and its content is a different tree.
  EXPECT_NE(TreeDigest({{"ab", "c"}}), TreeDigest({{"a", "bc"}}));
}

class TargetUpToDateTest : public ::testing::Test {
 protected:
  DataDir data{NEMOC_SOURCE_DIR};
  JsonnetExpander expander{{data.libsonnet(), data.profiles()}};
  StampCalculator calculator{data, {}, nullptr};
  SpecInputs spec{"s.yaml", "apiVersion: x\n", {}, {}, ""};
  FileTree tree = {{"kustomization.yaml", "resources: []\n"}};
  MemoryDisk disk;
  // Stamps live outside the tree (C13); on the in-memory disk here.
  void SetUp() override { setenv("NEMOC_STAMP_DIR", "/stamps", 1); }

  // A stamp as a build would record it: one import of the entry point.
  Stamp Recorded() {
    Stamp s;
    s.imports = {{"-", "nemoc.libsonnet"}, {"0:", "k8s.libsonnet"}};
    s.kinds = {{"v1", "ConfigMap"}};
    EXPECT_TRUE(calculator.InputsDigest(spec, "t", s, &expander, nullptr, &s.inputs));
    s.tree = TreeDigest(tree);
    return s;
  }
};

TEST_F(TargetUpToDateTest, MatchesOnlyWhenInputsAndTreeMatch) {
  const Stamp s = Recorded();
  ASSERT_TRUE(WriteTree(disk, "out/p/t", tree, nullptr, nullptr));
  SaveStamp(disk, "out/p/t", StampLines(s));
  EXPECT_TRUE(TargetUpToDate(disk, calculator, spec, "t", "out/p/t", &expander));
  // Another target name, other spec bytes, another --set: other inputs.
  EXPECT_FALSE(TargetUpToDate(disk, calculator, spec, "u", "out/p/t", &expander));
  SpecInputs edited = spec;
  edited.spec_text += "# comment\n";
  EXPECT_FALSE(TargetUpToDate(disk, calculator, edited, "t", "out/p/t", &expander));
  SpecInputs with_set = spec;
  with_set.sets = {"spec.x=1"};
  EXPECT_FALSE(TargetUpToDate(disk, calculator, with_set, "t", "out/p/t", &expander));
  // Another --jpath list is another input.
  EXPECT_FALSE(TargetUpToDate(disk, StampCalculator(data, {"extra"}, nullptr), spec, "t",
                              "out/p/t", &expander));
}

TEST_F(TargetUpToDateTest, EditedTreesMissingStampsAndLeftoversAreNotUpToDate) {
  const Stamp s = Recorded();
  ASSERT_TRUE(WriteTree(disk, "out/p/t", tree, nullptr, nullptr));
  SaveStamp(disk, "out/p/t", StampLines(s));
  MemoryDisk edited = disk;
  edited.AddFile("out/p/t/kustomization.yaml", "resources: [x]\n");
  EXPECT_FALSE(TargetUpToDate(edited, calculator, spec, "t", "out/p/t", &expander));
  MemoryDisk leftover = disk;
  leftover.AddFile("out/p/.t.nemoc-tmp/kustomization.yaml", "");
  EXPECT_FALSE(TargetUpToDate(leftover, calculator, spec, "t", "out/p/t", &expander));
  MemoryDisk unstamped;
  ASSERT_TRUE(WriteTree(unstamped, "out/p/t", tree, nullptr, nullptr));
  EXPECT_FALSE(TargetUpToDate(unstamped, calculator, spec, "t", "out/p/t", &expander));
  // The marker holds the file list only: a stamp left in it (as nemoc
  // wrote before C13) is not trusted, the tree is rebuilt.
  MemoryDisk old_marker;
  ASSERT_TRUE(WriteTree(old_marker, "out/p/t", tree, nullptr, nullptr, StampLines(s)));
  SaveStamp(old_marker, "out/p/t", StampLines(s));
  EXPECT_FALSE(TargetUpToDate(old_marker, calculator, spec, "t", "out/p/t", &expander));
  MemoryDisk empty;
  EXPECT_FALSE(TargetUpToDate(empty, calculator, spec, "t", "out/p/t", &expander));
  // An import that no longer resolves.
  Stamp gone = s;
  gone.imports.push_back({"0:", "no-such-file.libsonnet"});
  MemoryDisk other;
  ASSERT_TRUE(WriteTree(other, "out/p/t", tree, nullptr, nullptr));
  SaveStamp(other, "out/p/t", StampLines(gone));
  EXPECT_FALSE(TargetUpToDate(other, calculator, spec, "t", "out/p/t", &expander));
}

}  // namespace
}  // namespace nemoc
