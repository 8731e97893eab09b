// Library roots with an explicit precedence (issue #20 item 4, the table in
// docs/extending.md): nemoc's libraries are namespaced (imported as
// 'nemoc/<path>'), so only a --jpath file at nemoc/<path> replaces one;
// profiles and runtimes are found by name, --jpath directories first, in the
// order given. A --jpath file that replaces a built-in one is used, and the
// build warns naming both; a library of your own with a built-in's name
// replaces nothing.
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
  // A file of nemoc's is replaced at its namespaced path: here the training
  // stage's description (libsonnet/stages/train.stage.json), its directory
  // renamed -- for the libraries and for C++'s stage table alike.
  std::string train_stage = ReadFile(SourceDir() + "/libsonnet/stages/train.stage.json");
  ASSERT_NE(std::string::npos, train_stage.find("\"30-train\""));
  scratch_.Write("lib2/nemoc/stages/train.stage.json", Replace(train_stage, "\"30-train\"", "\"31-train\""));
  RunResult nested = RunNemoc({"build", "--jpath", scratch_.path() + "/lib2", "--out", scratch_.path() + "/nested", spec});
  ASSERT_EQ(0, nested.exit_code) << nested.err;
  EXPECT_EQ("pytorchjob", Workload(scratch_.path() + "/nested/gpt-tp2/lab/31-train"));
  EXPECT_NE(std::string::npos,
            nested.err.find("nemoc/stages/train.stage.json replaces nemoc's built-in " + SourceDir() +
                            "/libsonnet/stages/train.stage.json"))
      << nested.err;
  // ... and a library at its own: the stage order, the training directory renamed again.
  std::string order = ReadFile(SourceDir() + "/libsonnet/stages/order.libsonnet");
  ASSERT_NE(std::string::npos, order.find("    dir: s.description.dir,\n"));
  scratch_.Write("lib3/nemoc/stages/order.libsonnet",
                 Replace(order, "    dir: s.description.dir,\n",
                         "    dir: if s.key == 'train' then '32-train' else s.description.dir,\n"));
  nested = RunNemoc({"build", "--jpath", scratch_.path() + "/lib3", "--out", scratch_.path() + "/nested3", spec});
  ASSERT_EQ(0, nested.exit_code) << nested.err;
  EXPECT_EQ("pytorchjob", Workload(scratch_.path() + "/nested3/gpt-tp2/lab/32-train"));
  EXPECT_NE(std::string::npos, nested.err.find("nemoc/stages/order.libsonnet replaces nemoc's built-in")) << nested.err;
}

TEST_F(LibraryRootsTest, ALibraryOfYourOwnWithABuiltInsNameReplacesNothing) {
  // Helpers that would break every build if nemoc's libraries imported them.
  scratch_.Write("lib/k8s.libsonnet", "{ mine: 'from my k8s.libsonnet' }\n");
  scratch_.Write("lib/stages/order.libsonnet", "error 'not nemoc\\'s stage order'\n");
  // A profile of my own: extends the built-in one by its namespaced name and
  // reads my k8s.libsonnet by the plain name.
  scratch_.Write("lib/my-cloud.libsonnet",
                 "(import 'nemoc/profiles/vanilla-k8s.libsonnet') + "
                 "{ name: 'my-cloud', description:: (import 'k8s.libsonnet').mine }\n");
  const std::string spec = Spec("my-cloud");
  RunResult r = RunNemoc({"build", "--jpath", scratch_.path() + "/lib", "--out", scratch_.path() + "/out", spec});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("warning")) << r.err;
  EXPECT_EQ("pytorchjob", Workload(scratch_.path() + "/out/gpt-tp2/lab/30-train"));  // nemoc's order
  RunResult listed = RunNemoc({"profiles", "--jpath", scratch_.path() + "/lib", "-o", "json"});
  ASSERT_EQ(0, listed.exit_code) << listed.err;
  EXPECT_NE(std::string::npos, listed.out.find("from my k8s.libsonnet")) << listed.out;
}

TEST_F(LibraryRootsTest, AProfileNoSpecNamesIsNeverEvaluated) {
  // A directory of profiles: only those a spec names are evaluated (a broken
  // or costly neighbour does not fail, slow down or bound the build).
  scratch_.Write("lib/broken.libsonnet", "error 'never evaluate me'\n");
  scratch_.Write("lib/my-cloud.libsonnet",
                 "(import 'nemoc/profiles/vanilla-k8s.libsonnet') + { name: 'my-cloud', description:: 'mine' }\n");
  for (const std::string profile : {"vanilla-k8s", "my-cloud"}) {
    const std::string spec = Spec(profile);
    RunResult r = RunNemoc({"build", "--jpath", scratch_.path() + "/lib", "--out", scratch_.path() + "/" + profile, spec});
    EXPECT_EQ(0, r.exit_code) << profile << ": " << r.err;
    EXPECT_EQ(std::string::npos, r.err.find("never evaluate me")) << r.err;
  }
  // Named, it is reported at its file.
  RunResult broken = RunNemoc({"build", "--jpath", scratch_.path() + "/lib", "--out", scratch_.path() + "/b", Spec("broken")});
  EXPECT_EQ(1, broken.exit_code) << broken.err;
  EXPECT_NE(std::string::npos, broken.err.find(scratch_.path() + "/lib/broken.libsonnet:1:1: error: ")) << broken.err;
  EXPECT_NE(std::string::npos, broken.err.find("never evaluate me")) << broken.err;
}

TEST_F(LibraryRootsTest, ARuntimeWithABuiltInsNameReplacesItAndIsNamed) {
  scratch_.Write("lib/runtimes/pytorchjob.libsonnet",
                 "(import 'nemoc/runtimes/pytorchjob.libsonnet') + { describe:: 'patched PyTorchJob' }\n");
  const std::string spec = Spec("vanilla-k8s");
  RunResult r = RunNemoc({"build", "--jpath", scratch_.path() + "/lib", "--out", scratch_.path() + "/out", spec});
  ASSERT_EQ(0, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, ReadFile(scratch_.path() + "/out/gpt-tp2/lab/SUMMARY.md").find("patched PyTorchJob"));
  EXPECT_EQ(1u, Count(r.err, "warning")) << r.err;
  EXPECT_NE(std::string::npos,
            r.err.find("runtimes/pytorchjob.libsonnet replaces nemoc's built-in " + SourceDir() +
                       "/libsonnet/runtimes/pytorchjob.libsonnet"))
      << r.err;
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
