#include "node_fabric.h"

#include <string>

#include <gtest/gtest.h>

#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using nlohmann::json;

// The built-in profiles' rules as the input schema holds them
// (scripts/update-schema-catalogue copies each profile's nodeFabric there).
const json& SchemaRules() {
  static const json rules = test_tables::SchemaValue(kNodeFabricsAt);
  return rules;
}

TEST(NodeFabric, EveryBuiltInProfileDeclaresAValidRule) {
  // One rule per built-in profile (profiles/*.libsonnet), whatever their number.
  const size_t profiles = test_tables::BuiltinProfiles().size();
  ASSERT_GT(profiles, 0u);
  ASSERT_EQ(profiles, SchemaRules().size()) << SchemaRules().dump();
  for (const auto& [profile, rule] : SchemaRules().items()) {
    std::string err;
    EXPECT_TRUE(ValidNodeFabricRule(rule, &err)) << profile << ": " << err;
  }
}

TEST(NodeFabric, EachProfileResolvesItsTargetsFabric) {
  EXPECT_EQ("gib", ResolveNodeFabric(SchemaRules()["gke-a4"], json{{"name", "a4"}}));
  EXPECT_EQ("efa", ResolveNodeFabric(SchemaRules()["eks-efa"], json{{"instanceType", "p5.48xlarge"}}));
  // vanilla-k8s: InfiniBand when the target requests RDMA devices, TCP when not.
  EXPECT_EQ("infiniband",
            ResolveNodeFabric(SchemaRules()["vanilla-k8s"], json{{"rdma", {{"resourceName", "nvidia.com/hostdev"}}}}));
  EXPECT_EQ("tcp", ResolveNodeFabric(SchemaRules()["vanilla-k8s"], json{{"gpu", "a100-80gb"}}));
  EXPECT_EQ("tcp", ResolveNodeFabric(SchemaRules()["vanilla-k8s"], json{{"rdma", nullptr}}));
}

TEST(NodeFabric, AMalformedRuleNamesItsMember) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "must be an object"},
      {json{{"fixed", ""}}, "nodeFabric.fixed must be a fabric name"},
      {json{{"fixed", "RoCE"}}, "nodeFabric.fixed 'RoCE' must be lower-case"},
      {json{{"fixed", "-ib"}}, "starting with a letter"},
      {json{{"fixed", "ib"}, {"option", "ib"}}, "fixed stands alone"},
      {json{{"option", ""}}, "names the target option"},
      {json{{"option", "ib"}, {"set", "infiniband"}}, "nodeFabric lacks unset: the fabric when a target does not set its ib"},
      {json{{"option", "ib"}, {"set", 1}, {"unset", "tcp"}}, "nodeFabric.set must be a fabric name"},
      {json{{"option", "ib"}, {"set", "infiniband"}, {"unset", "tcp"}, {"default", "tcp"}}, "unknown member 'default'"},
  };
  for (const auto& [rule, expected] : cases) {
    std::string err;
    EXPECT_FALSE(ValidNodeFabricRule(rule, &err)) << rule.dump();
    EXPECT_NE(err.find(expected), std::string::npos) << rule.dump() << ": " << err;
  }
}

// profile.tcp-fabric: multi-node training stages over TCP, one warning at the
// target naming them; one node, or an RDMA fabric, says nothing.
TEST(NodeFabric, MultiNodeTrainingOverTcpIsAWarningAtTheTarget) {
  Document doc;
  Diagnostics load;
  const std::string text =
      "spec:\n"
      "  stages:\n"
      "    pretrain: {nodes: 4}\n"
      "    train: {nodes: 2}\n"
      "    evaluate: {nodes: 1}\n"
      "  targets:\n"
      "    - name: onprem\n"
      "      profile: vanilla-k8s\n";
  ASSERT_TRUE(LoadSpecText("spec.yaml", text, &doc, &load));
  TypedSpec spec;  // what Prepare reads of the normalized spec (normalizer.h)
  spec.training["pretrain"].nodes = 4;
  spec.training["train"].nodes = 2;
  const json& rule = SchemaRules()["vanilla-k8s"];
  Diagnostics diags;
  CheckNodeFabric(doc, spec, "onprem", "/spec/targets/0", rule, "tcp", &diags);
  ASSERT_EQ(1u, diags.items().size());
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ("profile.tcp-fabric", d.code);
  EXPECT_EQ(Severity::kWarning, d.severity);
  EXPECT_EQ("target onprem: multi-node training (pretrain and train, up to 4 nodes) without RDMA devices: "
            "NCCL will use TCP sockets between the nodes",
            d.message);
  EXPECT_EQ(7, d.location.line);
  EXPECT_NE(d.hint.find("the target's rdma (nemoc explain spec.targets.rdma)"), std::string::npos) << d.hint;

  Diagnostics rdma;
  CheckNodeFabric(doc, spec, "onprem", "/spec/targets/0", rule, "infiniband", &rdma);
  EXPECT_TRUE(rdma.items().empty());

  // A fixed 'tcp' profile: no option to name in the hint.
  Diagnostics fixed;
  CheckNodeFabric(doc, spec, "onprem", "/spec/targets/0", json{{"fixed", "tcp"}}, "tcp", &fixed);
  ASSERT_EQ(1u, fixed.items().size());
  EXPECT_NE(fixed.items()[0].hint.find("train on one node"), std::string::npos) << fixed.items()[0].hint;

  TypedSpec single;
  single.training["train"].nodes = 1;
  Diagnostics one;
  CheckNodeFabric(doc, single, "onprem", "/spec/targets/0", rule, "tcp", &one);
  EXPECT_TRUE(one.items().empty());
}

}  // namespace
}  // namespace nemoc
