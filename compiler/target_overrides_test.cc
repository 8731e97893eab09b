#include "target_overrides.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "set_override.h"
#include "spec_loader.h"

namespace nemoc {
namespace {

using nlohmann::json;

const char kOverridesSpec[] =
    "apiVersion: nemoc.dev/v1alpha1\n"                            // 1
    "kind: Project\n"                                            // 2
    "metadata: {name: demo}\n"                                   // 3
    "spec:\n"                                                    // 4
    "  image: {repository: nemo, tag: '25.02'}\n"                // 5
    "  stages:\n"                                                // 6
    "    train:\n"                                               // 7
    "      nodes: 4\n"                                           // 8
    "      batch: {micro: 1, global: 128}\n"                     // 9
    "      overrides: [a=1, b=2]\n"                              // 10
    "    evaluate: {tasks: [hellaswag]}\n"                       // 11
    "  targets:\n"                                               // 12
    "    - name: prod\n"                                         // 13
    "      profile: vanilla-k8s\n"                               // 14
    "    - name: dev\n"                                          // 15
    "      profile: vanilla-k8s\n"                               // 16
    "      overrides:\n"                                         // 17
    "        image: {tag: '25.04'}\n"                            // 18
    "        stages:\n"                                          // 19
    "          train:\n"                                         // 20
    "            nodes: 1\n"                                     // 21
    "            batch: {global: 32}\n"                          // 22
    "            overrides: [c=3]\n"                             // 23
    "            optimizer: {lr: 0.001, weightDecay: null}\n"    // 24
    "          evaluate: null\n"                                 // 25
    "          serve: {triton: {replicas: on}}\n";               // 26

Document Load(std::set<std::string>* yaml11 = nullptr) {
  Document doc;
  Diagnostics diags;
  EXPECT_TRUE(LoadSpecText("spec.yaml", kOverridesSpec, &doc, &diags, {}, yaml11)) << diags.items().size();
  return doc;
}

TEST(TargetOverridesTest, OnlyTargetsWithAnOverridesMappingHaveOverrides) {
  const Document doc = Load();
  EXPECT_FALSE(HasTargetOverrides(doc, 0));
  EXPECT_TRUE(HasTargetOverrides(doc, 1));
  EXPECT_FALSE(HasTargetOverrides(doc, 2));
}

TEST(TargetOverridesTest, MergesLikeAJsonMergePatch) {
  const Document doc = Load();
  const Document merged = ApplyTargetOverrides(doc, 1, nullptr);
  const json& spec = merged.root["spec"];
  // Mappings merge key by key: what the override leaves out stays.
  EXPECT_EQ(spec["image"], json::parse(R"({"repository": "nemo", "tag": "25.04"})"));
  EXPECT_EQ(spec["stages"]["train"]["nodes"], 1);
  EXPECT_EQ(spec["stages"]["train"]["batch"], json::parse(R"({"micro": 1, "global": 32})"));
  // A list is replaced, never appended to (RFC 7386).
  EXPECT_EQ(spec["stages"]["train"]["overrides"], json::parse(R"(["c=3"])"));
  // null removes; a null inside a value that had no counterpart is dropped.
  EXPECT_FALSE(spec["stages"].contains("evaluate"));
  EXPECT_EQ(spec["stages"]["train"]["optimizer"], json::parse(R"({"lr": 0.001})"));
  EXPECT_EQ(spec["stages"]["serve"], json::parse(R"({"triton": {"replicas": "on"}})"));
  // The shared spec itself is unchanged.
  EXPECT_EQ(doc.root["spec"]["stages"]["train"]["nodes"], 4);
  EXPECT_TRUE(doc.root["spec"]["stages"].contains("evaluate"));
  // A target without overrides compiles from the spec as written.
  EXPECT_EQ(ApplyTargetOverrides(doc, 0, nullptr).root, doc.root);
}

TEST(TargetOverridesTest, MergedValuesAreLocatedAtTheOverride) {
  const Document merged = ApplyTargetOverrides(Load(), 1, nullptr);
  auto line = [&](const std::string& pointer, bool key = false) {
    return merged.map.Locate(pointer, key).line;
  };
  EXPECT_EQ(line("/spec/stages/train/nodes"), 21);
  EXPECT_EQ(line("/spec/stages/train/nodes", true), 21);
  EXPECT_EQ(line("/spec/stages/train/batch/global"), 22);
  EXPECT_EQ(line("/spec/stages/train/batch/micro"), 9);  // not overridden
  EXPECT_EQ(line("/spec/image/tag"), 18);
  EXPECT_EQ(line("/spec/image/repository"), 5);
  // A replaced list: its items are the override's, the old item 1 is gone.
  EXPECT_EQ(line("/spec/stages/train/overrides/0"), 23);
  EXPECT_EQ(line("/spec/stages/train/overrides/1"), 23);
  // A stage only the override has, down to its leaves.
  EXPECT_EQ(line("/spec/stages/serve/triton/replicas"), 26);
  // A removed stage falls back to its parent, not to its old lines.
  EXPECT_EQ(line("/spec/stages/evaluate/tasks"), 7);  // spec.stages (a block mapping: its first key)
}

TEST(TargetOverridesTest, SetIntoTheOverridesKeepsItsOrigin) {
  Document doc = Load();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.targets[dev].overrides.stages.train.nodes=2", &doc, &diags));
  const Document merged = ApplyTargetOverrides(doc, 1, nullptr);
  EXPECT_EQ(merged.root["spec"]["stages"]["train"]["nodes"], 2);
  EXPECT_EQ(merged.map.Locate("/spec/stages/train/nodes").file,
            "--set spec.targets[dev].overrides.stages.train.nodes=2");
}

TEST(TargetOverridesTest, Yaml11BooleansAreFollowedToTheirMergedPlace) {
  std::set<std::string> yaml11;
  const Document doc = Load(&yaml11);
  ASSERT_TRUE(yaml11.count("/spec/targets/1/overrides/stages/serve/triton/replicas"));
  ApplyTargetOverrides(doc, 1, &yaml11);
  EXPECT_TRUE(yaml11.count("/spec/stages/serve/triton/replicas"));
}

TEST(TargetOverridesTest, OverrideLinesAreOnePerLeafWithTheMergedPath) {
  const Document doc = Load();
  const auto lines = OverrideLines(doc.root["spec"]["targets"][1]["overrides"]);
  std::string text;
  for (const auto& [pointer, value] : lines) text += PointerToDotted(pointer) + "=" + value + "\n";
  EXPECT_EQ(text,
            "spec.image.tag=\"25.04\"\n"
            "spec.stages.evaluate=null\n"
            "spec.stages.serve.triton.replicas=\"on\"\n"
            "spec.stages.train.batch.global=32\n"
            "spec.stages.train.nodes=1\n"
            "spec.stages.train.optimizer.lr=0.001\n"
            "spec.stages.train.optimizer.weightDecay=null\n"
            "spec.stages.train.overrides=[\"c=3\"]\n");
}

}  // namespace
}  // namespace nemoc
