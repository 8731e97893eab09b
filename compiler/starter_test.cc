#include "starter.h"

#include <gtest/gtest.h>

#include "spec_loader.h"

namespace nemoc {
namespace {

struct Data {
  ModelCatalog catalog;
  AcceleratorTable accelerators;
  Data() {
    std::string err;
    EXPECT_TRUE(ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &catalog, &err)) << err;
    EXPECT_TRUE(AcceleratorTable::Load(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json", &accelerators, &err))
        << err;
  }
};

std::string Starter(const std::string& profile, const std::string& model, std::string* err = nullptr) {
  static const Data data;
  StarterOptions options;
  options.profile = profile;
  options.model = model;
  options.schema_ref = "schemas/project.schema.json";
  std::string yaml, error;
  const bool ok = StarterSpec(options, data.catalog, data.accelerators, &yaml, &error);
  if (err) *err = error;
  EXPECT_EQ(ok, err == nullptr) << error;
  return yaml;
}

TEST(Starter, SmallModelFitsOneNodeWithoutModelParallelism) {
  const std::string yaml = Starter("vanilla-k8s", "llama2-7b");
  EXPECT_EQ(yaml.rfind("# yaml-language-server: $schema=schemas/project.schema.json\n", 0), 0u);
  EXPECT_NE(yaml.find("      nodes: 1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      parallelism: {tensor: 1, pipeline: 1}\n"), std::string::npos) << yaml;
}

TEST(Starter, LargeModelGetsModelParallelismAndMoreNodes) {
  const std::string yaml = Starter("gke-a4", "llama3.1-405b");
  EXPECT_EQ(yaml.find("      nodes: 1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("sequenceParallel: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      seqLength: 8192\n"), std::string::npos);
  EXPECT_NE(yaml.find("NVIDIA B200 180GB (180.0 GB)"), std::string::npos) << yaml;
}

TEST(Starter, ParsesAsYamlWithTheTemplateOfEachProfile) {
  for (const auto& profile : StarterProfiles()) {
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
  Starter("gke-a5", "llama3.1-8b", &err);
  EXPECT_NE(err.find("did you mean 'gke-a4'?"), std::string::npos) << err;
  static const Data data;
  StarterOptions bad;
  bad.name = "Bad_Name";
  std::string yaml;
  EXPECT_FALSE(StarterSpec(bad, data.catalog, data.accelerators, &yaml, &err));
  EXPECT_NE(err.find("DNS-1123"), std::string::npos);
}

}  // namespace
}  // namespace nemoc
