#include "gpu_node.h"

#include <string>

#include <gtest/gtest.h>

#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using nlohmann::json;

// The built-in profiles' rules as the input schema holds them
// (scripts/update-schema-catalogue copies each profile's gpuNode there).
const json& SchemaRules() {
  static const json rules = test_tables::SchemaValue(kGpuNodesAt);
  return rules;
}

TEST(GpuNode, EveryBuiltInProfileDeclaresAValidRuleOfKnownAccelerators) {
  AcceleratorTable table;
  std::string err;
  ASSERT_TRUE(AcceleratorTable::Load(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json", &table, &err)) << err;
  // One rule per built-in profile (profiles/*.libsonnet), whatever their number.
  const size_t profiles = test_tables::BuiltinProfiles().size();
  ASSERT_GT(profiles, 0u);
  ASSERT_EQ(profiles, SchemaRules().size()) << SchemaRules().dump();
  for (const auto& [profile, rule] : SchemaRules().items()) {
    EXPECT_TRUE(ValidGpuNodeRule(rule, &err)) << profile << ": " << err;
    EXPECT_TRUE(KnownAccelerators(rule, table, &err)) << profile << ": " << err;
  }
  json unknown = SchemaRules()["gke-a4"];
  unknown["fixed"]["accelerator"] = "b300-288gb";
  EXPECT_FALSE(KnownAccelerators(unknown, table, &err));
  EXPECT_NE(err.find("'b300-288gb'"), std::string::npos) << err;
}

TEST(GpuNode, EachProfileResolvesItsTargetsNode) {
  GpuNode node;
  // gke-a4: every node is an A4.
  ASSERT_TRUE(ResolveGpuNode(SchemaRules()["gke-a4"], json{{"name", "a4"}}, &node));
  EXPECT_EQ("b200-180gb", node.accelerator);
  EXPECT_EQ(8, node.gpus);
  EXPECT_EQ("an a4-highgpu-8g node", node.name);
  // eks-efa: the instance type names it; an unknown one is the profile's to report.
  ASSERT_TRUE(ResolveGpuNode(SchemaRules()["eks-efa"], json{{"instanceType", "p4d.24xlarge"}}, &node));
  EXPECT_EQ("a100-40gb", node.accelerator);
  EXPECT_EQ(8, node.gpus);
  EXPECT_EQ("p4d.24xlarge", node.name);
  EXPECT_FALSE(ResolveGpuNode(SchemaRules()["eks-efa"], json{{"instanceType", "m5.large"}}, &node));
  EXPECT_FALSE(ResolveGpuNode(SchemaRules()["eks-efa"], json::object(), &node));
  // vanilla-k8s: the gpu option is the accelerator, h100-80gb when unset; the node's size is unknown.
  ASSERT_TRUE(ResolveGpuNode(SchemaRules()["vanilla-k8s"], json{{"gpu", "a100-40gb"}}, &node));
  EXPECT_EQ("a100-40gb", node.accelerator);
  EXPECT_EQ(0, node.gpus);
  ASSERT_TRUE(ResolveGpuNode(SchemaRules()["vanilla-k8s"], json::object(), &node));
  EXPECT_EQ("h100-80gb", node.accelerator);
}

TEST(GpuNode, AMalformedRuleNamesItsMember) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "must be an object"},
      {json{{"fixed", {{"gpus", 8}}}}, "gpuNode.fixed lacks accelerator"},
      {json{{"fixed", {{"accelerator", "h100-80gb"}, {"gpus", 0}}}}, "gpuNode.fixed.gpus"},
      {json{{"fixed", {{"accelerator", "h100-80gb"}}}, {"option", "gpu"}}, "fixed stands alone"},
      {json{{"option", ""}}, "names the target option"},
      {json{{"option", "sku"}, {"values", json::object()}}, "gpuNode.values must be"},
      {json{{"option", "sku"}, {"values", {{"nd", {{"accelerator", "h100-80gb"}, {"gpu", 8}}}}}}, "unknown member 'gpu'"},
      {json{{"accelerator", "h100-80gb"}}, "unknown member 'accelerator'"},
  };
  for (const auto& [rule, expected] : cases) {
    std::string err;
    EXPECT_FALSE(ValidGpuNodeRule(rule, &err)) << rule.dump();
    EXPECT_NE(err.find(expected), std::string::npos) << rule.dump() << ": " << err;
  }
}

TEST(GpuNode, GpusPerNodeAboveTheNodesIsLocatedAtTheStage) {
  Document doc;
  Diagnostics load;
  const std::string text =
      "spec:\n"
      "  stages:\n"
      "    pretrain: {gpusPerNode: 8}\n"
      "    train: {gpusPerNode: 16}\n";
  ASSERT_TRUE(LoadSpecText("spec.yaml", text, &doc, &load));
  const json spec = doc.root["spec"];
  Diagnostics diags;
  CheckGpusPerNode(doc, spec, "p4d", GpuNode{"a100-40gb", 8, "p4d.24xlarge"}, &diags);
  ASSERT_EQ(1u, diags.items().size());
  EXPECT_EQ("profile.gpus-per-node", diags.items()[0].code);
  EXPECT_EQ("target p4d: gpusPerNode 16 exceeds the 8 GPUs of p4d.24xlarge", diags.items()[0].message);
  EXPECT_EQ(4, diags.items()[0].location.line);
  Diagnostics unknown_size;
  CheckGpusPerNode(doc, spec, "onprem", GpuNode{"h100-80gb", 0, "h100-80gb"}, &unknown_size);
  EXPECT_TRUE(unknown_size.items().empty());
}

}  // namespace
}  // namespace nemoc
