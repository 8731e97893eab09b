#include "drift.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

TEST(UnifiedDiffTest, ChangedFileIsAUnifiedDiffWithGitHeaders) {
  FileChange change{'M', "out/p/t/00-base/namespace-x.yaml", "a: 1\nb: 2\nc: 3\n", "a: 1\nb: 3\nc: 3\n", ""};
  const std::string diff = UnifiedDiff(change, /*color=*/false);
  EXPECT_NE(diff.find("--- a/out/p/t/00-base/namespace-x.yaml\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+++ b/out/p/t/00-base/namespace-x.yaml\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("@@ -1,3 +1,3 @@"), std::string::npos) << diff;
  EXPECT_NE(diff.find("\n-b: 2\n+b: 3\n"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("\x1b["), std::string::npos);
}

TEST(UnifiedDiffTest, ColourOnlyWhenAsked) {
  FileChange change{'M', "f.yaml", "x: 1\n", "x: 2\n", ""};
  const std::string diff = UnifiedDiff(change, /*color=*/true);
  EXPECT_NE(diff.find("\x1b[31m-x: 1\x1b[0m\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("\x1b[32m+x: 2\x1b[0m\n"), std::string::npos) << diff;
}

TEST(UnifiedDiffTest, AddedAndRemovedFiles) {
  const std::string added = UnifiedDiff({'A', "new.yaml", "", "k: v\n", ""}, false);
  EXPECT_NE(added.find("--- /dev/null\n"), std::string::npos) << added;
  EXPECT_NE(added.find("+k: v\n"), std::string::npos) << added;
  const std::string removed = UnifiedDiff({'D', "old.yaml", "k: v\n", "", ""}, false);
  EXPECT_NE(removed.find("+++ /dev/null\n"), std::string::npos) << removed;
  EXPECT_NE(removed.find("-k: v\n"), std::string::npos) << removed;
}

}  // namespace
}  // namespace nemoc
