#include "cluster_bundle.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

using nlohmann::json;

TEST(MergeContributionTest, UnitesKeysAndKeepsEqualValues) {
  json into = {{"spec", {{"values", {{"driver", {{"enabled", false}}}}}, {"project", "default"}}}};
  const json add = {{"spec", {{"values", {{"driver", {{"enabled", false}, {"rdma", {{"enabled", true}}}}}}},
                              {"project", "default"}}}};
  std::string where;
  ASSERT_TRUE(MergeContribution(&into, add, &where)) << where;
  EXPECT_EQ(into["spec"]["values"]["driver"]["rdma"]["enabled"], true);
  EXPECT_EQ(into["spec"]["values"]["driver"]["enabled"], false);
}

TEST(MergeContributionTest, DifferentValuesAndListsAreConflictsAtTheirPointer) {
  json into = {{"spec", {{"source", {{"repoURL", "https://a"}}}}}};
  std::string where;
  EXPECT_FALSE(MergeContribution(&into, {{"spec", {{"source", {{"repoURL", "https://b"}}}}}}, &where));
  EXPECT_EQ(where, "/spec/source/repoURL");
  // Lists are values: two different lists are not silently concatenated.
  json list = {{"a/b", {1, 2}}};
  EXPECT_FALSE(MergeContribution(&list, {{"a/b", {1, 3}}}, &where));
  EXPECT_EQ(where, "/a~1b");
  EXPECT_EQ(list["a/b"], json({1, 2}));
}

TEST(TakeContributionTest, MovesThePlatformFilesOnly) {
  std::map<std::string, json> files = {{"30-train/job.yaml", {{"kind", "Job"}}},
                                       {"gitops/platform/flux/a.yaml", {{"kind", "HelmRelease"}}},
                                       {"gitops/argocd/app.yaml", {{"kind", "Application"}}}};
  const json got = TakeContribution(&files, {{"name", "lab"}, {"server", "https://s"}, {"profile", "vanilla-k8s"}});
  EXPECT_EQ(files.size(), 2u);
  EXPECT_EQ(files.count("gitops/platform/flux/a.yaml"), 0u);
  EXPECT_EQ(got["cluster"], "lab");
  EXPECT_EQ(got["files"]["flux/a.yaml"]["kind"], "HelmRelease");
  std::map<std::string, json> none = {{"30-train/job.yaml", {{"kind", "Job"}}}};
  EXPECT_TRUE(TakeContribution(&none, {{"name", "lab"}}).is_null());
}

}  // namespace
}  // namespace nemoc
