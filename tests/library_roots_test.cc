// Library roots with an explicit precedence (issue #20 item 4): --jpath
// directories are searched first, in the order given, then nemoc's built-in
// libsonnet/ and profiles/; a --jpath file that replaces a built-in one is
// used, and the build warns naming both.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

std::string Workload(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "kustomization.yaml") return name.substr(0, name.find('-'));
  }
  return "";
}

class LibraryRootsTest : public ::testing::Test {
 protected:
  // examples/gpt-tp2-trainjob.yaml (one vanilla-k8s target, runtime chosen by
  // the spec) on `profile` with the profile's own default runtime.
  std::string Spec(const std::string& profile) {
    std::string text = ReadFile(SourceDir() + "/examples/gpt-tp2-trainjob.yaml");
    text = Replace(text, "profile: vanilla-k8s", "profile: " + profile);
    text = Replace(text, "      runtime: trainjob\n", "");
    return scratch_.Write(profile + ".yaml", text);
  }
  ScratchDir scratch_;
};

TEST_F(LibraryRootsTest, AJpathFileThatReplacesABuiltInIsUsedAndNamed) {
  // A patched copy of the built-in vanilla-k8s profile: Indexed Jobs by default.
  std::string profile = ReadFile(SourceDir() + "/profiles/vanilla-k8s.libsonnet");
  ASSERT_NE(std::string::npos, profile.find("defaults: { runtime: 'pytorchjob' }"));
  profile = Replace(profile, "defaults: { runtime: 'pytorchjob' }", "defaults: { runtime: 'indexed-job' }");
  scratch_.Write("lib/vanilla-k8s.libsonnet", profile);
  scratch_.Write("lib/my-helpers.libsonnet", "{}\n");  // a name of its own: no warning
  const std::string spec = Spec("vanilla-k8s");
  RunResult plain = RunNemoc({"build", "--out", scratch_.path() + "/plain", spec});
  ASSERT_EQ(0, plain.exit_code) << plain.err;
  EXPECT_EQ(std::string::npos, plain.err.find("jpath")) << plain.err;
  RunResult patched = RunNemoc({"build", "--jpath", scratch_.path() + "/lib", "--out", scratch_.path() + "/patched", spec});
  ASSERT_EQ(0, patched.exit_code) << patched.err;
  const std::string train = "/gpt-tp2/lab/30-train";
  EXPECT_EQ("pytorchjob", Workload(scratch_.path() + "/plain" + train));
  EXPECT_EQ("job", Workload(scratch_.path() + "/patched" + train));  // the --jpath copy was used
  EXPECT_EQ(1u, Count(patched.err, "warning")) << patched.err;
  EXPECT_NE(std::string::npos,
            patched.err.find("warning: --jpath " + scratch_.path() + "/lib: vanilla-k8s.libsonnet replaces "
                             "nemoc's built-in "))
      << patched.err;
  EXPECT_NE(std::string::npos, patched.err.find("/profiles/vanilla-k8s.libsonnet for every import")) << patched.err;
  // A library below libsonnet/ is matched by its path there too.
  scratch_.Write("lib2/stages/order.libsonnet", ReadFile(SourceDir() + "/libsonnet/stages/order.libsonnet"));
  RunResult nested = RunNemoc({"build", "--jpath", scratch_.path() + "/lib2", "--out", scratch_.path() + "/nested", spec});
  ASSERT_EQ(0, nested.exit_code) << nested.err;
  EXPECT_NE(std::string::npos, nested.err.find("stages/order.libsonnet replaces nemoc's built-in ")) << nested.err;
}

TEST_F(LibraryRootsTest, JpathDirectoriesAreSearchedInTheOrderGiven) {
  scratch_.Write("first/my-cloud.libsonnet",
                 "(import 'vanilla-k8s.libsonnet') { name: 'my-cloud', defaults: { runtime: 'indexed-job' } }\n");
  scratch_.Write("second/my-cloud.libsonnet",
                 "(import 'vanilla-k8s.libsonnet') { name: 'my-cloud', defaults: { runtime: 'jobset' } }\n");
  const std::string spec = Spec("my-cloud");
  RunResult one = RunNemoc({"build", "--jpath", scratch_.path() + "/first", "--jpath", scratch_.path() + "/second",
                            "--out", scratch_.path() + "/one", spec});
  ASSERT_EQ(0, one.exit_code) << one.err;
  RunResult two = RunNemoc({"build", "--jpath", scratch_.path() + "/second", "--jpath", scratch_.path() + "/first",
                            "--out", scratch_.path() + "/two", spec});
  ASSERT_EQ(0, two.exit_code) << two.err;
  EXPECT_EQ("job", Workload(scratch_.path() + "/one/gpt-tp2/lab/30-train"));
  EXPECT_EQ("jobset", Workload(scratch_.path() + "/two/gpt-tp2/lab/30-train"));
  // A profile of its own shadows nothing built in.
  EXPECT_EQ(std::string::npos, one.err.find("replaces nemoc's built-in")) << one.err;
}

}  // namespace
}  // namespace nemoc::testing
