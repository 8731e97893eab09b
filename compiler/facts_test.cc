#include "facts.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

const nlohmann::json kSummary = nlohmann::json::parse(R"({
  "profile": "vanilla-k8s",
  "train": {"runtime": "PyTorchJob", "fabric": "InfiniBand", "resources": "Guaranteed",
            "queue": "team-a", "privileges": ["IPC_LOCK"]},
  "storage": {"data": "NFS", "checkpoints": "NFS"},
  "gitops": {"engines": ["argocd"], "source": "repo @ main: out/p/t", "platform": ["gpu-operator"],
             "cluster": {"name": "lab", "server": "https://lab"}, "bootstrap": ["kubectl apply -k gitops/argocd"],
             "remove": ["Argo CD: kubectl delete application r"]},
  "stages": {"40-evaluate": "runs the evaluation"},
  "platform": {"installs": [{"what": "gpu-operator", "provides": ["nvidia.com/gpu"]}],
               "clusterHas": [{"what": "NFS server", "provides": ["nfs"]}]}
})");

TEST(LibraryFacts, EveryFactIsRead) {
  LibraryFacts facts;
  std::string err;
  ASSERT_TRUE(ParseLibraryFacts(kSummary, &facts, &err)) << err;
  EXPECT_EQ("vanilla-k8s", facts.profile);
  EXPECT_TRUE(facts.train.present);
  EXPECT_EQ("team-a", facts.train.queue);
  EXPECT_EQ(std::vector<std::string>{"IPC_LOCK"}, facts.train.privileges);
  ASSERT_EQ(2u, facts.storage.size());
  EXPECT_EQ("checkpoints", facts.storage[0].first);  // the object's (sorted) order
  EXPECT_EQ("lab", facts.gitops.cluster["name"]);
  EXPECT_EQ(std::vector<std::string>{"kubectl apply -k gitops/argocd"}, facts.gitops.bootstrap);
  EXPECT_EQ(std::vector<std::string>{"Argo CD: kubectl delete application r"}, facts.gitops.remove);
  ASSERT_EQ(1u, facts.stages.size());
  ASSERT_EQ(1u, facts.platform.installs.size());
  EXPECT_EQ(std::vector<std::string>{"nvidia.com/gpu"}, facts.platform.installs[0].provides);
  EXPECT_EQ("NFS server", facts.platform.cluster_has[0].what);
}

TEST(LibraryFacts, AbsentGroupsAreNotPresent) {
  LibraryFacts facts;
  std::string err;
  ASSERT_TRUE(ParseLibraryFacts(nlohmann::json::object(), &facts, &err)) << err;
  EXPECT_FALSE(facts.train.present);
  EXPECT_FALSE(facts.gitops.present);
  EXPECT_FALSE(facts.platform.present);
  EXPECT_TRUE(facts.gitops.cluster.is_null());
}

TEST(LibraryFacts, AFactNemocDoesNotReadIsAnError) {
  for (const char* pointer : {"/gpuModel", "/train/nodes", "/gitops/extra", "/platform/installs/0/why"}) {
    nlohmann::json summary = kSummary;
    summary[nlohmann::json::json_pointer(pointer)] = "x";
    LibraryFacts facts;
    std::string err;
    EXPECT_FALSE(ParseLibraryFacts(summary, &facts, &err)) << pointer;
    EXPECT_NE(err.find("is not a fact nemoc reads"), std::string::npos) << err;
  }
}

TEST(LibraryFacts, AFactOfTheWrongTypeIsAnError) {
  const std::vector<std::pair<const char*, nlohmann::json>> cases = {
      {"/profile", 80}, {"/train/privileges", "IPC_LOCK"}, {"/storage/data", nlohmann::json::array()},
      {"/gitops/cluster", "lab"}, {"/platform/installs", nlohmann::json::object()}, {"/stages", "x"}};
  for (const auto& [pointer, value] : cases) {
    nlohmann::json summary = kSummary;
    summary[nlohmann::json::json_pointer(pointer)] = value;
    LibraryFacts facts;
    std::string err;
    EXPECT_FALSE(ParseLibraryFacts(summary, &facts, &err)) << pointer;
    EXPECT_NE(err.find("must be"), std::string::npos) << pointer << ": " << err;
  }
}

}  // namespace
}  // namespace nemoc
