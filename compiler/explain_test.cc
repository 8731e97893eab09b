#include "explain.h"

#include <fstream>

#include <gtest/gtest.h>

namespace nemoc {
namespace {

using nlohmann::json;

const json& Schema() {
  static const json schema = [] {
    std::ifstream in(NEMOC_SOURCE_DIR "/schemas/project.schema.json");
    return json::parse(in);
  }();
  return schema;
}

std::string ExplainOk(const std::string& path, bool recursive = false) {
  std::string out;
  Diagnostics diags;
  EXPECT_TRUE(Explain(Schema(), path, recursive, &out, &diags)) << path;
  EXPECT_TRUE(diags.empty());
  return out;
}

TEST(Explain, ObjectShowsDescriptionAndFieldsWithDefaultsAndBounds) {
  const std::string out = ExplainOk("spec.stages.train.parallelism");
  EXPECT_EQ(out.rfind("FIELD:    spec.stages.train.parallelism <object>\n\nDESCRIPTION:\n    Model parallelism.", 0), 0u)
      << out;
  EXPECT_NE(out.find("FIELDS:\n"), std::string::npos);
  EXPECT_NE(out.find("    tensor\t<integer>\n      Tensor-parallel size (TP). Must divide the attention heads. Default: 1.\n"
                     "      Range: 1..64.\n"),
            std::string::npos)
      << out;
}

TEST(Explain, LeafShowsDefaultAndAllowedValues) {
  const std::string out = ExplainOk("spec.stages.train.precision");
  EXPECT_NE(out.find("FIELD:    spec.stages.train.precision <string>\n"), std::string::npos);
  EXPECT_NE(out.find("DEFAULT:  bf16\nALLOWED:  bf16, fp8\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("FIELDS:"), std::string::npos);
}

TEST(Explain, ListsOfEnumeratedItemsShowTheirValuesWrapped) {
  const std::string out = ExplainOk("spec.stages.evaluate.tasks");
  EXPECT_NE(out.find("ALLOWED ITEMS: boolq, gsm8k, hellaswag, lambada, mgsm, mmlu, mmlu_pro,\n"
                     "               mmlu_redux, piqa, race, wikitext103, wikitext2, winogrande\n"
                     "ITEMS:    1..64\n"),
            std::string::npos)
      << out;
}

TEST(Explain, RequiredFieldsAreMarked) {
  EXPECT_NE(ExplainOk("spec.stages.train").find("    nodes\t<integer> -required-\n"), std::string::npos);
}

TEST(Explain, ArrayItemsAndMapsAreEnteredTransparently) {
  EXPECT_NE(ExplainOk("spec.targets").find("FIELD:    spec.targets <[]object>"), std::string::npos);
  EXPECT_NE(ExplainOk("spec.targets.profile").find("FIELD:    spec.targets.profile <string>"),
            std::string::npos);
  EXPECT_NE(ExplainOk("metadata.labels").find("<map[string]string>"), std::string::npos);
  EXPECT_NE(ExplainOk("metadata.labels.team").find("FIELD:    metadata.labels.team <string>"),
            std::string::npos);
}

TEST(Explain, DescriptionBesideARefWins) {
  // spec.stages.train.image is a $ref to definitions/image with its own description.
  EXPECT_NE(ExplainOk("spec.stages.train.image").find("Default: spec.image."), std::string::npos);
}

TEST(Explain, RootAndRecursiveTree) {
  const std::string root = ExplainOk("");
  EXPECT_EQ(root.rfind("KIND:     Project\nVERSION:  nemoc.dev/v1alpha1\n", 0), 0u) << root;
  const std::string tree = ExplainOk("spec.stages.train", true);
  EXPECT_NE(tree.find("    batch\t<object> -required-\n      global\t<integer> -required-\n"),
            std::string::npos)
      << tree;
  EXPECT_NE(tree.find("    parallelism\t<object>\n      context\t<integer>\n"), std::string::npos) << tree;
}

TEST(Explain, UnknownFieldSuggestsTheClosest) {
  std::string out;
  Diagnostics diags;
  EXPECT_FALSE(Explain(Schema(), "spec.stages.trainn.nodes", false, &out, &diags));
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].code, "explain.unknown-field");
  EXPECT_EQ(diags.items()[0].message, "no field 'trainn' in spec.stages");
  EXPECT_EQ(diags.items()[0].hint, "did you mean 'spec.stages.train'?");

  Diagnostics swapped;
  EXPECT_FALSE(Explain(Schema(), "spec.stages.trian", false, &out, &swapped));
  EXPECT_EQ(swapped.items().at(0).hint, "did you mean 'spec.stages.train'?");

  Diagnostics far;
  EXPECT_FALSE(Explain(Schema(), "spec.zzzzzzzz", false, &out, &far));
  EXPECT_EQ(far.items().at(0).hint.rfind("fields of spec: ", 0), 0u);
  EXPECT_NE(far.items().at(0).hint.find("namespace, "), std::string::npos);

  Diagnostics leaf;
  EXPECT_FALSE(Explain(Schema(), "spec.namespace.x", false, &out, &leaf));
  EXPECT_EQ(leaf.items().at(0).hint, "spec.namespace has no fields below it");

  Diagnostics empty;
  EXPECT_FALSE(Explain(Schema(), "spec..stages", false, &out, &empty));
  EXPECT_EQ(empty.items().at(0).code, "explain.path");
}

}  // namespace
}  // namespace nemoc
