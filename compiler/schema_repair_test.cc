#include "schema_repair.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nemoc {
namespace {

using nlohmann::json;

Diagnostic Error(const std::string& code, const std::string& pointer, const std::string& message = "",
                 const std::string& hint = "") {
  Diagnostic d;
  d.code = code;
  d.message = message;
  d.hint = hint;
  d.location.pointer = pointer;
  return d;
}

TEST(SchemaRepair, ReadsTheSpecAsTheHintsSay) {
  json root = json::parse(R"({"spec": {"stages": {"train": {"mode": "LoRA", "maxStep": 100, "nodes": -1,
      "batch": {"globl": 32}, "modules": ["a", 7, "b", 8]}},
      "image": {"tag": 25.1}, "targets": [{"kueue": {"queue": "q"}}]}})");
  const std::vector<Diagnostic> found = {
      Error("spec.not-allowed", "/spec/stages/train/mode", "", "did you mean 'lora'?"),
      Error("spec.unknown-field", "/spec/stages/train/maxStep", "", "did you mean 'maxSteps'?"),
      Error("spec.out-of-range", "/spec/stages/train/nodes"),
      Error("spec.missing-field", "/spec/stages/train/batch", "spec.stages.train.batch: missing required field 'global'"),
      Error("spec.unknown-field", "/spec/stages/train/batch/globl", "", "did you mean 'global'?"),
      Error("spec.wrong-type", "/spec/stages/train/modules/1"),
      Error("spec.wrong-type", "/spec/stages/train/modules/3"),
      Error("spec.wrong-type", "/spec/image/tag", "", "quote it: \"25.10\" (YAML reads 25.10 as the number 25.1)"),
      Error("spec.unknown-field", "/spec/targets/0/kueue/queue", "", "renamed to 'clusterQueue': ..."),
  };
  std::vector<std::string> defaulted;
  ASSERT_TRUE(RepairSchemaErrors(found, &root, &defaulted));
  const json& train = root["spec"]["stages"]["train"];
  EXPECT_EQ("lora", train["mode"]);
  EXPECT_EQ(100, train["maxSteps"]);
  EXPECT_FALSE(train.contains("maxStep"));
  EXPECT_FALSE(train.contains("nodes"));  // removed: its default is read
  EXPECT_EQ(32, train["batch"]["global"]);
  EXPECT_EQ(json::array({"a", "b"}), train["modules"]);  // both items, indices as reported
  EXPECT_EQ("25.10", root["spec"]["image"]["tag"]);
  EXPECT_EQ("q", root["spec"]["targets"][0]["kueue"]["clusterQueue"]);
  // Only what was removed is defaulted: the checks' findings there are not shown.
  EXPECT_EQ((std::vector<std::string>{"/spec/stages/train/nodes", "/spec/stages/train/modules/1",
                                      "/spec/stages/train/modules/3"}),
            defaulted);
}

TEST(SchemaRepair, AMissingRequiredFieldOrAMisspeltNameTakenAlreadyIsNotGuessed) {
  json root = json::parse(R"({"spec": {"batch": {"micro": 1}}})");
  std::vector<std::string> defaulted;
  EXPECT_FALSE(RepairSchemaErrors({Error("spec.missing-field", "/spec/batch", "spec.batch: missing required field 'global'")},
                                  &root, &defaulted));
  // `globl` with `global` also written: the misspelt one is dropped, not moved over it.
  root = json::parse(R"({"spec": {"batch": {"global": 8, "globl": 32}}})");
  ASSERT_TRUE(RepairSchemaErrors({Error("spec.unknown-field", "/spec/batch/globl", "", "did you mean 'global'?")},
                                 &root, &defaulted));
  EXPECT_EQ(json::parse(R"({"global": 8})"), root["spec"]["batch"]);
  // A diagnostic without a pointer cannot be repaired.
  EXPECT_FALSE(RepairSchemaErrors({Error("spec.invalid", "")}, &root, &defaulted));
}

}  // namespace
}  // namespace nemoc
