#include "starter.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "fit_check.h"
#include "normalizer.h"
#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

struct Data {
  ModelCatalog catalog;
  AcceleratorTable accelerators;
  // The built-in profiles, as they describe themselves (their starters).
  std::vector<ProfileInfo> profiles;
  Data() {
    std::string err;
    EXPECT_TRUE(ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &catalog, &err)) << err;
    EXPECT_TRUE(AcceleratorTable::Load(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json", &accelerators, &err))
        << err;
    DataDir data;
    data.root = NEMOC_SOURCE_DIR;
    Diagnostics diags;
    profiles = ListProfiles(data, {}, &diags);
    EXPECT_TRUE(diags.items().empty());
  }
  nlohmann::json StarterOf(const std::string& profile) const {
    for (const auto& p : profiles) {
      if (p.name == profile) return p.description["starter"];
    }
    return nullptr;
  }
};

std::string Starter(const std::string& profile, const std::string& model, std::string* err = nullptr,
                    const std::string& queue = "") {
  static const Data data;
  StarterOptions options;
  options.profile = profile;
  options.model = model;
  options.cluster_queue = queue.empty() && profile == "gke-a4" ? "a4-high" : queue;
  options.schema_ref = "schemas/project.schema.json";
  std::string yaml, error;
  const bool ok = StarterSpec(options, data.StarterOf(profile), data.catalog, data.accelerators, &yaml, &error);
  if (err) *err = error;
  EXPECT_EQ(ok, err == nullptr) << error;
  return yaml;
}

// The starter sizes its layout on a training stage it builds itself
// (starter.cc TrainFor: framework nemo1, micro batch 1, ...); the spec it
// writes must get the same estimate once the normalizer fills the input
// schema's defaults -- a default that changes (framework nemo2 keeps fp32
// gradients) would otherwise size the starter on a stage nemoc never builds.
TEST(Starter, ItsEstimateIsTheOneTheNormalizedSpecGets) {
  for (const char* model : {"llama2-7b", "llama2-70b", "llama3.1-8b", "nemotron4-340b"}) {
    const std::string yaml = Starter("vanilla-k8s", model);
    const size_t at = yaml.find("the estimate (~");
    ASSERT_NE(at, std::string::npos) << yaml;
    const std::string written = yaml.substr(at + 15, yaml.find(" GB)", at) - at - 15);
    const nlohmann::json normalized = test_tables::Normalized("starter.yaml", yaml);
    ASSERT_TRUE(normalized.is_object()) << model;
    const TypedSpec typed = ReadTypedSpec(normalized["spec"]);
    ASSERT_NE(nullptr, typed.Training("train")) << typed.error;
    const double gb = EstimateMemory(*typed.Training("train"),
                                     ModelArchitecture::FromJson(normalized["spec"]["model"]["architecture"]))
                          .total_gb;
    char rounded[32];
    std::snprintf(rounded, sizeof rounded, "%.1f", gb);
    EXPECT_EQ(written, rounded) << model;
  }
}

TEST(Starter, SmallModelFitsOneNodeWithoutModelParallelism) {
  const std::string yaml = Starter("vanilla-k8s", "llama2-7b");
  EXPECT_EQ(yaml.rfind("# yaml-language-server: $schema=schemas/project.schema.json\n", 0), 0u);
  EXPECT_NE(yaml.find("      nodes: 1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      parallelism: {tensor: 1, pipeline: 1}\n"), std::string::npos) << yaml;
}

// A preset without a default tokenizer (libsonnet/models.json tokenizer, field
// review A28): the starter's pretraining would be refused without one, so it
// writes the catalog's value and says where the file comes from.
TEST(Starter, APresetWithoutADefaultTokenizerGetsOneWritten) {
  for (const char* model : {"nemotron4-15b", "nemotron4-340b"}) {
    const std::string yaml = Starter("vanilla-k8s", model);
    EXPECT_NE(yaml.find("    # No default tokenizer (libsonnet/models.json): "), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("\n    tokenizer: {library: sentencepiece, model: /results/tokenizers/nemotron_2_256k.model}\n"),
              std::string::npos)
        << yaml;
  }
  EXPECT_EQ(Starter("vanilla-k8s", "llama3.1-8b").find("tokenizer:"), std::string::npos);
}

TEST(Starter, OneNodeNeedsNoFabric) {
  // vanilla-k8s: the rdma line is live for several nodes, commented out for one.
  const std::string one = Starter("vanilla-k8s", "llama2-7b");
  EXPECT_NE(one.find("      # One node: NCCL stays inside it, no fabric needed. For several nodes:\n"
                     "      # GPUDirect RDMA through the NVIDIA Network Operator; without it NCCL falls back to TCP.\n"
                     "      # rdma: {resourceName: nvidia.com/hostdev, count: 8, networks: [ib-sriov-net]}\n"),
            std::string::npos)
      << one;
  const std::string several = Starter("vanilla-k8s", "llama2-70b");
  EXPECT_EQ(several.find("      nodes: 1\n"), std::string::npos) << several;
  EXPECT_NE(several.find("\n      rdma: {resourceName: nvidia.com/hostdev, count: 8, networks: [ib-sriov-net]}\n"),
            std::string::npos)
      << several;
}

TEST(Starter, GkeA4AsksForTheClustersQueue) {
  // Field review F1: no hard-coded queue name; the Toolkit has used a4-high and a4.
  std::string err;
  static const Data data;
  StarterOptions o;
  o.profile = "gke-a4";
  o.model = "llama3.1-8b";
  std::string yaml;
  EXPECT_FALSE(StarterSpec(o, data.StarterOf("gke-a4"), data.catalog, data.accelerators, &yaml, &err));
  EXPECT_NE(err.find("pass --cluster-queue NAME, a name from `kubectl get clusterqueues`"), std::string::npos) << err;
  o.cluster_queue = "team-a4";
  ASSERT_TRUE(StarterSpec(o, data.StarterOf("gke-a4"), data.catalog, data.accelerators, &yaml, &err)) << err;
  EXPECT_NE(yaml.find("      kueue: {clusterQueue: team-a4, covers: [nvidia.com/gpu], topology: block}\n"),
            std::string::npos)
      << yaml;
  o.cluster_queue = "Bad_Queue";
  EXPECT_FALSE(StarterSpec(o, data.StarterOf("gke-a4"), data.catalog, data.accelerators, &yaml, &err));
  EXPECT_NE(err.find("is not a ClusterQueue name"), std::string::npos) << err;
  o.profile = "eks-efa";
  o.cluster_queue = "q";
  EXPECT_FALSE(StarterSpec(o, data.StarterOf("eks-efa"), data.catalog, data.accelerators, &yaml, &err));
  EXPECT_NE(err.find("the eks-efa starter uses no Kueue"), std::string::npos) << err;
}

TEST(Starter, LargeModelGetsModelParallelismAndMoreNodes) {
  const std::string yaml = Starter("gke-a4", "llama3.1-405b");
  EXPECT_EQ(yaml.find("      nodes: 1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("sequenceParallel: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      seqLength: 8192\n"), std::string::npos);
  EXPECT_NE(yaml.find("NVIDIA B200 180GB (180.0 GB)"), std::string::npos) << yaml;
}

TEST(Starter, ParsesAsYamlWithTheTemplateOfEachProfile) {
  static const Data data;
  ASSERT_EQ(data.profiles.size(), 3u);
  for (const auto& info : data.profiles) {
    const std::string profile = info.name;
    const std::string yaml = Starter(profile, "llama3.1-8b");
    Document doc;
    Diagnostics diags;
    EXPECT_TRUE(LoadSpecText("starter.yaml", yaml, &doc, &diags)) << profile << "\n" << yaml;
    EXPECT_EQ(doc.root["spec"]["targets"][0]["profile"], profile);
  }
}

TEST(Starter, RefusesUnknownModelsProfilesAndNames) {
  std::string err;
  Starter("vanilla-k8s", "llama3.1-8bb", &err);
  EXPECT_EQ(err, "unknown model 'llama3.1-8bb' (did you mean 'llama3.1-8b'?)");
  static const Data data;
  EXPECT_EQ(ChooseStarterProfile(data.profiles, "gke-a5", &err), nullptr);
  EXPECT_NE(err.find("did you mean 'gke-a4'?"), std::string::npos) << err;
  // No --profile: the profile whose starter says default.
  const ProfileInfo* chosen = ChooseStarterProfile(data.profiles, "", &err);
  ASSERT_NE(chosen, nullptr) << err;
  EXPECT_EQ(chosen->name, "vanilla-k8s");
  StarterOptions bad;
  bad.name = "Bad_Name";
  std::string yaml;
  EXPECT_FALSE(StarterSpec(bad, data.StarterOf("vanilla-k8s"), data.catalog, data.accelerators, &yaml, &err));
  EXPECT_NE(err.find("DNS-1123"), std::string::npos);
}

}  // namespace
}  // namespace nemoc
