#include "schema_validator.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using nlohmann::json;

const char kSchemaPath[] = NEMOC_SOURCE_DIR "/schemas/project.schema.json";

const InputSchema& Schema() {
  static const std::unique_ptr<InputSchema> schema = [] {
    std::string err;
    auto s = InputSchema::Load(kSchemaPath, &err);
    if (s == nullptr) ADD_FAILURE() << err;
    return s;
  }();
  return *schema;
}

// A valid spec; every test mutates one piece of it. Line numbers matter.
const char kBase[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: demo
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model:
    preset: llama2-7b
  storage:
    results:
      nfs: {server: nfs.internal, path: /export}
  stages:
    train:
      nodes: 2
      parallelism:
        pipeline: 2
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "mutation anchor not found: " << from;
  } else {
    text.replace(at, from.size(), to);
  }
  return text;
}

// "error code@line:col: message | hint" (the hint part only when present).
std::string Render(const Diagnostic& d) {
  std::string out = std::string(SeverityName(d.severity)) + " " + d.code + "@" +
                    std::to_string(d.location.line) + ":" +
                    std::to_string(d.location.column) + ": " + d.message;
  if (!d.hint.empty()) out += " | " + d.hint;
  return out;
}

std::vector<std::string> RenderAll(const Diagnostics& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds.items()) out.push_back(Render(d));
  return out;
}

struct Result {
  bool loaded = false;
  bool valid = false;
  Document doc;
  Diagnostics diags;
  std::set<std::string> yaml11;
};

// Loads and validates; only the validator's diagnostics are kept (the load
// itself must succeed cleanly).
std::unique_ptr<Result> Check(const std::string& text) {
  auto r = std::make_unique<Result>();
  Diagnostics load_diags;
  r->loaded = LoadSpecText("spec.yaml", text, &r->doc, &load_diags, {}, &r->yaml11);
  EXPECT_TRUE(r->loaded);
  EXPECT_TRUE(load_diags.empty()) << ::testing::PrintToString(RenderAll(load_diags));
  if (!r->loaded) return r;
  r->valid = Schema().Validate(r->doc, r->yaml11, &r->diags);
  return r;
}

using Lines = std::vector<std::string>;

// ---------------------------------------------------------------------------
// Loading the schema.

TEST(InputSchemaTestLoad, RealSchemaCompiles) {
  std::string err;
  auto schema = InputSchema::Load(kSchemaPath, &err);
  ASSERT_NE(nullptr, schema) << err;
  EXPECT_EQ("", err);
  EXPECT_EQ("nemoc Project", schema->json()["title"]);
}

TEST(InputSchemaTestLoad, MissingFileIsAnError) {
  std::string err;
  EXPECT_EQ(nullptr, InputSchema::Load("/nonexistent/nemoc/schema.json", &err));
  EXPECT_EQ("cannot read input schema: /nonexistent/nemoc/schema.json does not exist", err);
}

TEST(InputSchemaTestLoad, InvalidJsonIsAnError) {
  const std::string path = ::testing::TempDir() + "/nemoc_bad_schema.json";
  {
    std::ofstream out(path);
    out << "{\"type\": ";
  }
  std::string err;
  EXPECT_EQ(nullptr, InputSchema::Load(path, &err));
  EXPECT_EQ("input schema " + path + " is not valid JSON", err);
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// Validate.

TEST(InputSchemaTest, MinimalSpecIsValid) {
  auto r = Check(kBase);
  EXPECT_TRUE(r->valid);
  EXPECT_EQ(Lines{}, RenderAll(r->diags));
}

TEST(InputSchemaTest, UnknownKeyGetsDidYouMean) {
  auto r = Check(Replace(kBase, "      nodes: 2\n", "      nodes: 2\n      maxStep: 10\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.unknown-field@16:7: unknown field 'maxStep' in "
                  "spec.stages.train | did you mean 'maxSteps'?"},
            RenderAll(r->diags));
}

// A profile's options (scripts/update-schema-catalogue copies them from the
// profiles' `options` into the schema, x-nemoc-profiles naming the readers).
TEST(InputSchemaTest, OptionsOfAnotherProfileAreRefusedAtTheirKey) {
  EXPECT_EQ(Schema().profiles(), test_tables::BuiltinProfiles());  // profiles/*.libsonnet, whatever their number
  auto r = Check(std::string(kBase) + "      instanceType: p5.48xlarge\n");
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.wrong-profile@23:7: spec.targets[0].instanceType applies to profile "
                  "eks-efa, not vanilla-k8s"},
            RenderAll(r->diags));
  // Kueue is common on every profile (issue #15): no profile's option.
  r = Check(std::string(kBase) + "      kueue: {clusterQueue: team-a, covers: [nvidia.com/gpu]}\n      hostNetwork: true\n");
  EXPECT_EQ((Lines{"error spec.wrong-profile@24:7: spec.targets[0].hostNetwork applies to profile "
                   "gke-a4, not vanilla-k8s"}),
            RenderAll(r->diags));
  r = Check(std::string(kBase) + "      rdma: {count: 4}\n");
  EXPECT_TRUE(r->valid);
  EXPECT_EQ(Lines{}, RenderAll(r->diags));
  // Every problem in one run, and an option's own value is not validated
  // further once it is refused (efa's missing awsOfiNccl says nothing).
  r = Check(Replace(kBase, "profile: vanilla-k8s", "profile: eks-efa") +
            "      rdma: {count: 4}\n      gcpServiceAccount: a@b.iam.gserviceaccount.com\n"
            "      instanceType: p5.48xlarge\n");
  EXPECT_EQ((Lines{"error spec.wrong-profile@24:7: spec.targets[0].gcpServiceAccount applies to "
                   "profile gke-a4, not eks-efa",
                   "error spec.wrong-profile@23:7: spec.targets[0].rdma applies to profile "
                   "vanilla-k8s, not eks-efa"}),
            RenderAll(r->diags));
  // An unknown field's hint lists the common fields and the profile's own options.
  r = Check(Replace(kBase, "profile: vanilla-k8s", "profile: gke-a4") +
            "      efa: {image: {repository: r}}\n      maxSteps: 3\n");
  EXPECT_EQ((Lines{"error spec.unknown-field@24:7: unknown field 'maxSteps' in spec.targets[0] | "
                   "allowed fields: cluster, clusterHas, env, environment, gcpServiceAccount, gpu, hostNetwork, kueue, name, "
                   "ncclTopologyConfigMap, nodeSelector, overrides, profile, runtime, stageNodes, storage",
                   "error spec.wrong-profile@23:7: spec.targets[0].efa applies to profile eks-efa, not gke-a4"}),
            RenderAll(r->diags));
}

TEST(InputSchemaTest, ProfilesTheSchemaDoesNotHoldAreLeftToTheUnknownProfileCheck) {
  // A --jpath profile has its options composed in first (Compiler::InputSchemaForSpec);
  // a name no file has is reported after validation (spec.unknown-profile).
  auto r = Check(Replace(kBase, "profile: vanilla-k8s", "profile: my-cloud") +
                 "      rdma: {count: 4}\n      instanceType: p5.48xlarge\n");
  EXPECT_TRUE(r->valid);
  EXPECT_EQ(Lines{}, RenderAll(r->diags));
}

TEST(InputSchemaTest, ComposedProfileOptionsValidateAndArePoliced) {
  json schema = Schema().json();
  std::string err;
  // A profile extending vanilla-k8s inherits rdma (the same schema) and adds zone.
  json options = {{"rdma", schema["definitions"]["target"]["properties"]["rdma"]},
                  {"zone", {{"description", "The zone."}, {"type", "string"}, {"enum", {"a", "b"}}}}};
  options["rdma"].erase("x-nemoc-profiles");
  ASSERT_TRUE(ComposeProfileOptions("my-cloud", options, &schema, &err)) << err;
  auto composed = InputSchema::FromJson(schema, "composed", &err);
  ASSERT_NE(composed, nullptr) << err;
  EXPECT_EQ(composed->profiles().count("my-cloud"), 1u);
  Document doc;
  Diagnostics diags;
  std::set<std::string> yaml11;
  ASSERT_TRUE(LoadSpecText("spec.yaml", Replace(kBase, "profile: vanilla-k8s", "profile: my-cloud") +
                           "      zone: c\n      rdma: {count: 4}\n      efa: {}\n",
                           &doc, &diags, {}, &yaml11));
  EXPECT_FALSE(composed->Validate(doc, yaml11, &diags));
  EXPECT_EQ((Lines{"error spec.wrong-profile@25:7: spec.targets[0].efa applies to profile eks-efa, not my-cloud",
                   "error spec.not-allowed@23:13: spec.targets[0].zone: \"c\" is not one of: a, b | did you mean 'a'?"}),
            RenderAll(diags));
  // zone on a built-in profile's target: my-cloud's option.
  Diagnostics other;
  ASSERT_TRUE(LoadSpecText("spec.yaml", std::string(kBase) + "      zone: a\n", &doc, &other, {}, &yaml11));
  EXPECT_FALSE(composed->Validate(doc, yaml11, &other));
  EXPECT_EQ(Lines{"error spec.wrong-profile@23:7: spec.targets[0].zone applies to profile my-cloud, not vanilla-k8s"},
            RenderAll(other));
  // What composition refuses: a common field, another schema for a known
  // option, an option without a description.
  json fresh = Schema().json();
  EXPECT_FALSE(ComposeProfileOptions("x", {{"gpu", {{"description", "d"}, {"type", "string"}}}}, &fresh, &err));
  EXPECT_EQ(err, "option gpu is a field every target has (spec.targets[].gpu)");
  EXPECT_FALSE(ComposeProfileOptions("x", {{"zone", {{"type", "string"}}}}, &fresh, &err));
  EXPECT_EQ(err, "option zone must be a JSON Schema with a description");
}

// #48 item 1: options are namespaced per profile. A profile may name an
// option like another profile's with a schema of its own (an AKS profile's
// rdma, an InfiniBand device name, is not vanilla-k8s's {count}); each
// target's value is validated against its own profile's schema.
TEST(InputSchemaTest, TwoProfilesMayDeclareOneOptionNameWithSchemasOfTheirOwn) {
  json schema = Schema().json();
  std::string err;
  ASSERT_TRUE(ComposeProfileOptions("aks", {{"rdma", {{"description", "The InfiniBand device."}, {"type", "string"},
                                                      {"enum", {"ib0", "ib1"}}}}},
                                    &schema, &err))
      << err;
  auto composed = InputSchema::FromJson(schema, "composed", &err);
  ASSERT_NE(composed, nullptr) << err;
  std::set<std::string> yaml11;
  auto check = [&](const std::string& profile, const std::string& rdma) {
    Document doc;
    Diagnostics diags;
    EXPECT_TRUE(LoadSpecText("spec.yaml", Replace(Replace(kBase, "profile: vanilla-k8s", "profile: " + profile),
                                                  "      profile: " + profile + "\n",
                                                  "      profile: " + profile + "\n      rdma: " + rdma + "\n"),
                             &doc, &diags, {}, &yaml11));
    composed->Validate(doc, yaml11, &diags);
    return RenderAll(diags);
  };
  EXPECT_EQ(Lines{}, check("aks", "ib0"));
  EXPECT_EQ(Lines{}, check("vanilla-k8s", "{count: 4}"));
  EXPECT_EQ(Lines{"error spec.not-allowed@23:13: spec.targets[0].rdma: \"ib9\" is not one of: ib0, ib1 | did you mean 'ib0'?"},
            check("aks", "ib9"));
  const Lines object = check("aks", "{count: 4}");
  EXPECT_NE(std::find(object.begin(), object.end(),
                      "error spec.wrong-type@23:13: spec.targets[0].rdma: expected a string, got mapping {\"count\":4}"),
            object.end())
      << ::testing::PrintToString(object);
  const Lines vanilla = check("vanilla-k8s", "ib0");
  ASSERT_EQ(1u, vanilla.size());
  EXPECT_NE(std::string::npos, vanilla[0].find("error spec.wrong-type@23:13: spec.targets[0].rdma: expected a mapping, got string \"ib0\""))
      << vanilla[0] << "\n";
  // Each target gets its own profile's defaults (vanilla-k8s's rdma.count: 8).
  {
    Document doc;
    Diagnostics diags;
    ASSERT_TRUE(LoadSpecText("spec.yaml", Replace(kBase, "      profile: vanilla-k8s\n",
                                                  "      profile: vanilla-k8s\n      rdma: {}\n"),
                             &doc, &diags, {}, &yaml11));
    ASSERT_TRUE(composed->Validate(doc, yaml11, &diags)) << ::testing::PrintToString(RenderAll(diags));
    composed->FillDefaults(&doc.root);
    EXPECT_EQ(doc.root["spec"]["targets"][0]["rdma"]["count"], 8) << doc.root["spec"]["targets"][0].dump();
  }
  // Inside an option, unknown fields are found in the target's own profile's schema.
  const Lines unknown = check("vanilla-k8s", "{count: 4, cuont: 1}");
  ASSERT_EQ(1u, unknown.size());
  EXPECT_NE(std::string::npos, unknown[0].find("unknown field 'cuont' in spec.targets[0].rdma")) << unknown[0];
}

TEST(InputSchemaTest, UnknownTopLevelKeyListsAllowedFields) {
  auto r = Check(std::string(kBase) + "status: {phase: done}\n");
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.unknown-field@23:1: unknown field 'status' at the top level"
                  " | allowed fields: apiVersion, kind, metadata, spec"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, UnknownKeyInListItem) {
  auto r = Check(Replace(kBase, "      profile: vanilla-k8s\n",
                         "      profile: vanilla-k8s\n      gpus: h100-80gb\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.unknown-field@23:7: unknown field 'gpus' in spec.targets[0]"
                  " | did you mean 'gpu'?"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, UnknownKeyInListItemWithNothingClose) {
  auto r = Check(Replace(kBase, "      profile: vanilla-k8s\n",
                         "      profile: vanilla-k8s\n      zzzzzzzz: 1\n"));
  ASSERT_EQ(1u, r->diags.items().size());
  // Every field a vanilla-k8s target may have, in (sorted) schema order: the
  // common ones and its profile's options (other profiles' are left out).
  std::string allowed;
  for (const auto& [key, property] : Schema().json()["definitions"]["target"]["properties"].items()) {
    if (property.contains("x-nemoc-profiles") && property["x-nemoc-profiles"] != json{"vanilla-k8s"}) continue;
    allowed += (allowed.empty() ? "" : ", ") + key;
  }
  EXPECT_NE(std::string::npos, allowed.find("rdma, "));
  EXPECT_EQ(std::string::npos, allowed.find("efa"));
  EXPECT_NE(std::string::npos, allowed.find("gpu, "));
  EXPECT_EQ("error spec.unknown-field@23:7: unknown field 'zzzzzzzz' in spec.targets[0] | "
            "allowed fields: " + allowed,
            Render(r->diags.items()[0]));
}

TEST(InputSchemaTest, WrongType) {
  auto r = Check(Replace(kBase, "nodes: 2", "nodes: \"2\""));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.wrong-type@15:14: spec.stages.train.nodes: expected an "
                  "integer, got string \"2\""},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, WrongTypeMappingWhereListIsWanted) {
  auto r = Check(Replace(kBase, "  stages:\n", "  imagePullSecrets: {a: b}\n  stages:\n"));
  EXPECT_EQ(Lines{"error spec.wrong-type@13:21: spec.imagePullSecrets: expected a list, got "
                  "mapping {\"a\":\"b\"}"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, EnumViolationWithSuggestion) {
  auto r = Check(Replace(kBase, "      nodes: 2\n", "      mode: pretrian\n      nodes: 2\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.not-allowed@15:13: spec.stages.train.mode: \"pretrian\" is not "
                  "one of: pretrain, sft, lora | did you mean 'pretrain'?"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, EnumViolationWithoutSuggestion) {
  auto r = Check(Replace(kBase, "      nodes: 2\n", "      mode: rlhf-xyz\n      nodes: 2\n"));
  EXPECT_EQ(Lines{"error spec.not-allowed@15:13: spec.stages.train.mode: \"rlhf-xyz\" is not "
                  "one of: pretrain, sft, lora"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, PatternViolationUsesDescriptionAsHint) {
  auto r = Check(Replace(kBase, "namespace: nemo", "namespace: Nemo_NS"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.invalid@6:14: spec.namespace: \"Nemo_NS\" is not valid | "
                  "A DNS-1123 label: lowercase letters, digits and '-', starting and ending "
                  "with a letter or digit, at most 63 characters."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, NotConstraintRefusesLatestTag) {
  auto r = Check(Replace(kBase, "tag: \"24.07\"", "tag: latest"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.invalid@7:49: spec.image.tag: \"latest\" is not valid | Image "
                  "tag such as 25.02 (quote numeric-looking tags). latest is refused."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, Minimum) {
  auto r = Check(Replace(kBase, "nodes: 2", "nodes: 0"));
  EXPECT_FALSE(r->valid);
  // valijson formats the bound with std::to_string(double).
  EXPECT_EQ(Lines{"error spec.out-of-range@15:14: spec.stages.train.nodes: 0 must be at least 1 | Number of nodes (pods), one "
                  "per node."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, Maximum) {
  auto r = Check(Replace(kBase, "      nodes: 2\n", "      nodes: 2\n      gpusPerNode: 17\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.out-of-range@16:20: spec.stages.train.gpusPerNode: 17 must be at most 16 | GPUs per node, one process "
                  "each."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, MissingRequiredFieldIsLocatedAtParentKey) {
  auto r = Check(Replace(kBase, "      nodes: 2\n", ""));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.missing-field@14:5: spec.stages.train: missing required field "
                  "'nodes' | Number of nodes (pods), one per node."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, MissingRequiredTopLevelField) {
  auto r = Check(Replace(kBase, "kind: Project\n", ""));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.missing-field@1:1: the spec: missing required field 'kind' | "
                  "Always Project."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, MaxPropertiesOneMeansExactlyOne) {
  auto r = Check(Replace(kBase, "data: {mock: true}", "data: {mock: true, fromDataPrep: true}"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.invalid@19:13: spec.stages.train.data: set exactly one of: "
                  "fromDataPrep, jsonl, mock, prefixes"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, MinPropertiesOnExactlyOneObject) {
  auto r = Check(Replace(kBase, "data: {mock: true}", "data: {}"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.invalid@19:13: spec.stages.train.data: set exactly one of: "
                  "fromDataPrep, jsonl, mock, prefixes"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, InvalidLabelKey) {
  auto r = Check(Replace(kBase, "  name: demo\n", "  name: demo\n  labels: {\"bad key!\": x}\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.invalid-key@5:12: metadata.labels: key 'bad key!' is not "
                  "valid | A Kubernetes label or annotation key: an optional DNS subdomain "
                  "prefix of at most 253 characters and '/', then a name of at most 63 characters."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, ValidLabelKeysPass) {
  auto r = Check(Replace(kBase, "  name: demo\n",
                         "  name: demo\n  labels: {team: ml, example.com/tier: gold}\n"));
  EXPECT_TRUE(r->valid);
  EXPECT_EQ(Lines{}, RenderAll(r->diags));
}

TEST(InputSchemaTest, Yaml11BooleanWhereBooleanIsWanted) {
  auto r = Check(Replace(kBase, "  namespace: nemo\n",
                         "  namespace: nemo\n  serviceAccount: {create: yes}\n"));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.wrong-type@7:28: spec.serviceAccount.create: expected a boolean "
                  "(true or false), got string \"yes\" | yes is a YAML 1.1 boolean; nemoc "
                  "reads YAML 1.2, where it is a string. Write true or false."},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, QuotedYesWhereBooleanIsWantedHasNoYaml11Hint) {
  auto r = Check(Replace(kBase, "  namespace: nemo\n",
                         "  namespace: nemo\n  serviceAccount: {create: \"yes\"}\n"));
  EXPECT_EQ(Lines{"error spec.wrong-type@7:28: spec.serviceAccount.create: expected a boolean "
                  "(true or false), got string \"yes\""},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, Yaml11BooleanWhereStringIsWantedIsAWarning) {
  auto r = Check(Replace(kBase, "  name: demo\n", "  name: demo\n  labels: {team: yes}\n"));
  EXPECT_TRUE(r->valid);
  EXPECT_EQ(Lines{"warning yaml.yaml11-boolean@5:18: metadata.labels.team: yes is a boolean to "
                  "YAML 1.1 readers; nemoc reads it as the string \"yes\" | quote it (\"yes\") "
                  "to make the string explicit"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, VeryLongStringIsRefusedWithoutCrashing) {
  const std::string long_name(10000, 'a');
  auto r = Check(Replace(kBase, "namespace: nemo", "namespace: " + long_name));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.too-long@6:14: spec.namespace: string of 10000 characters is too "
                  "long (at most 4096)"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, VeryLongStringInAbsolutePath) {
  const std::string long_path = "/" + std::string(9999, 'p');
  auto r = Check(Replace(kBase, "path: /export", "path: " + long_path));
  EXPECT_FALSE(r->valid);
  EXPECT_EQ(Lines{"error spec.too-long@12:41: spec.storage.results.nfs.path: string of 10000 "
                  "characters is too long (at most 4096)"},
            RenderAll(r->diags));
}

TEST(InputSchemaTest, VeryLongLabelKeyIsRefused) {
  const std::string long_key(10000, 'k');
  // An explicit key ("? key"): implicit keys are limited to 1024 characters.
  auto r = Check(Replace(kBase, "  name: demo\n",
                         "  name: demo\n  labels:\n    ? " + long_key + "\n    : x\n"));
  EXPECT_FALSE(r->valid);
  ASSERT_EQ(1u, r->diags.items().size()) << r->diags.items().size();
  EXPECT_EQ("spec.invalid-key", r->diags.items()[0].code);
  // Keys are shortened in messages: a huge key must not make a huge message.
  EXPECT_EQ("metadata.labels: key '" + long_key.substr(0, 57) + "...' is not valid",
            r->diags.items()[0].message);
  EXPECT_EQ(6, r->diags.items()[0].location.line);
  EXPECT_EQ(7, r->diags.items()[0].location.column);
}

TEST(InputSchemaTest, SeveralProblemsAreAllReported) {
  std::string text = kBase;
  text = Replace(text, "namespace: nemo", "namespace: Nemo");              // pattern
  text = Replace(text, "      nodes: 2\n", "      nodes: -1\n      mode: sf\n");  // min + enum
  text = Replace(text, "global: 32", "globl: 32");                         // unknown + missing
  text = Replace(text, "      profile: vanilla-k8s\n", "      profile: vanilla-k8s\n      runtime: 7\n");
  auto r = Check(text);
  EXPECT_FALSE(r->valid);
  r->diags.SortByLocation();
  EXPECT_EQ((Lines{
                "error spec.invalid@6:14: spec.namespace: \"Nemo\" is not valid | A DNS-1123 "
                "label: lowercase letters, digits and '-', starting and ending with a letter or "
                "digit, at most 63 characters.",
                "error spec.out-of-range@15:14: spec.stages.train.nodes: -1 must be at least 1 | Number of nodes (pods), one per "
                "node.",
                "error spec.not-allowed@16:13: spec.stages.train.mode: \"sf\" is not one of: "
                "pretrain, sft, lora | did you mean 'sft'?",
                "error spec.missing-field@19:7: spec.stages.train.batch: missing required "
                "field 'global' | Global batch size.",
                "error spec.unknown-field@19:25: unknown field 'globl' in spec.stages.train.batch"
                " | did you mean 'global'?",
                // The enum and the type constraint both reject the integer.
                "error spec.not-allowed@24:16: spec.targets[0].runtime: 7 is not one of: "
                "pytorchjob, trainjob, jobset, indexed-job",
                "error spec.wrong-type@24:16: spec.targets[0].runtime: expected a string, got "
                "integer 7",
            }),
            RenderAll(r->diags));
}

TEST(InputSchemaTest, DuplicateListEntries) {
  auto r = Check(Replace(kBase, "  stages:\n", "  imagePullSecrets: [ngc, ngc]\n  stages:\n"));
  EXPECT_FALSE(r->valid);
  ASSERT_EQ(1u, r->diags.items().size()) << ::testing::PrintToString(RenderAll(r->diags));
  EXPECT_EQ("spec.duplicate-item", r->diags.items()[0].code);
  EXPECT_EQ("spec.imagePullSecrets: \"ngc\" is listed twice (first as item 0)",
            r->diags.items()[0].message);
  // Located at the second occurrence.
  EXPECT_EQ(13, r->diags.items()[0].location.line);
  EXPECT_EQ(27, r->diags.items()[0].location.column);
}

// ---------------------------------------------------------------------------
// FillDefaults.

TEST(InputSchemaTestDefaults, FillsNestedDefaultsOnlyUnderExistingObjects) {
  auto r = Check(kBase);
  ASSERT_TRUE(r->valid);
  json filled = r->doc.root;
  Schema().FillDefaults(&filled);
  const json& spec = filled["spec"];
  const json& train = spec["stages"]["train"];
  // parallelism exists: its defaults appear, the explicit value stays.
  EXPECT_EQ((json{{"tensor", 1}, {"pipeline", 2}, {"context", 1}, {"expert", 1},
                  {"sequenceParallel", false}}),
            train["parallelism"]);
  EXPECT_EQ("pretrain", train["mode"]);
  EXPECT_EQ("nemo1", train["framework"]);
  EXPECT_EQ(8, train["gpusPerNode"]);
  EXPECT_EQ("bf16", train["precision"]);
  EXPECT_EQ(1000, train["maxSteps"]);
  EXPECT_EQ(3, train["restarts"]);
  EXPECT_EQ("256Gi", train["shmSize"]);  // default next to a $ref
  EXPECT_EQ((json{{"micro", 1}, {"global", 32}}), train["batch"]);
  EXPECT_EQ((json{{"mock", true}}), train["data"]);
  // An absent object whose schema defaults it ({} or [], issue #48 item 4:
  // defaults in one place) is created and filled; one without a default
  // stays absent.
  EXPECT_EQ(0.0003, train["optimizer"]["lr"]);
  EXPECT_TRUE(train["checkpoint"].contains("every"));
  EXPECT_EQ(json::object(), train["resources"]);
  EXPECT_EQ(json::object(), train["env"]);
  EXPECT_EQ(json::array(), train["overrides"]);
  EXPECT_FALSE(train.contains("peft"));
  EXPECT_TRUE(spec["monitoring"].contains("alerts"));
  EXPECT_TRUE(spec["serviceAccount"].contains("create"));
  EXPECT_EQ(json::array(), spec["imagePullSecrets"]);
  EXPECT_FALSE(spec.contains("gitops"));
  EXPECT_FALSE(spec["storage"].contains("data"));
  EXPECT_EQ(json::object(), filled["metadata"]["labels"]);
  // Defaults inside $ref'd objects and list items.
  EXPECT_EQ("IfNotPresent", spec["image"]["pullPolicy"]);
  EXPECT_EQ(false, spec["storage"]["results"]["nfs"]["readOnly"]);
  EXPECT_FALSE(spec["storage"]["results"].contains("mountPath"));
  EXPECT_EQ((json{{"name", "onprem"}, {"profile", "vanilla-k8s"}, {"nodeSelector", json::object()}}), spec["targets"][0]);
}

TEST(InputSchemaTestDefaults, FillsDefaultsInListItemsAndExistingSections) {
  std::string text = Replace(kBase, "data: {mock: true}",
                             "data: {prefixes: [{path: a/b}, {path: c, weight: 2}]}");
  text = Replace(text, "      profile: vanilla-k8s\n",
                 "      profile: vanilla-k8s\n      rdma: {networks: [ib]}\n");
  text = Replace(text, "  stages:\n", "  gitops: {repoURL: https://git.example/x.git}\n  stages:\n");
  auto r = Check(text);
  ASSERT_TRUE(r->valid) << ::testing::PrintToString(RenderAll(r->diags));
  json filled = r->doc.root;
  Schema().FillDefaults(&filled);
  EXPECT_EQ((json::array({{{"path", "a/b"}, {"weight", 1}}, {{"path", "c"}, {"weight", 2}}})),
            filled["spec"]["stages"]["train"]["data"]["prefixes"]);
  EXPECT_EQ((json{{"networks", {"ib"}}, {"resourceName", "nvidia.com/hostdev"}, {"count", 8}}),
            filled["spec"]["targets"][0]["rdma"]);
  EXPECT_EQ((json{{"repoURL", "https://git.example/x.git"},
                  {"revision", "main"},
                  {"path", "out"},
                  {"engines", {"argocd"}},
                  {"automated", false},
                  {"platform", true},
                  {"clusters", json::object()},
                  {"defaultTimeout", "1m"},
                  // Every engine's settings, whichever engines the spec names.
                  {"argocd", filled["spec"]["gitops"]["argocd"]},
                  {"flux", filled["spec"]["gitops"]["flux"]}}),
            filled["spec"]["gitops"]);
  EXPECT_EQ("argocd", filled["spec"]["gitops"]["argocd"]["namespace"]);
  EXPECT_EQ("flux-system", filled["spec"]["gitops"]["flux"]["namespace"]);
}

TEST(InputSchemaTestDefaults, ExplicitValuesAreKept) {
  auto r = Check(Replace(kBase, "        pipeline: 2\n", "        tensor: 4\n        pipeline: 2\n"));
  ASSERT_TRUE(r->valid);
  json filled = r->doc.root;
  Schema().FillDefaults(&filled);
  EXPECT_EQ(4, filled["spec"]["stages"]["train"]["parallelism"]["tensor"]);
}

// ---------------------------------------------------------------------------
// SchemaAt.

TEST(InputSchemaTestSchemaAt, ResolvesRefsThroughPropertiesItemsAndAdditionalProperties) {
  const InputSchema& s = Schema();
  const json& defs = s.json()["definitions"];

  ASSERT_NE(nullptr, s.SchemaAt(""));
  EXPECT_EQ(&s.json(), s.SchemaAt(""));

  // properties + $ref (spec.stages -> #/definitions/stages -> train -> #/definitions/train).
  const json* tensor = s.SchemaAt("/spec/stages/train/parallelism/tensor");
  ASSERT_NE(nullptr, tensor);
  EXPECT_EQ(&defs["parallelism"]["properties"]["tensor"], tensor);

  // items + $ref.
  const json* target = s.SchemaAt("/spec/targets/0");
  ASSERT_NE(nullptr, target);
  EXPECT_EQ(&defs["target"], target);
  const json* count = s.SchemaAt("/spec/targets/3/rdma/count");
  ASSERT_NE(nullptr, count);
  EXPECT_EQ(8, (*count)["default"]);
  // A $ref'd leaf resolves to the definition, not the referring property.
  const json* name = s.SchemaAt("/spec/targets/0/name");
  ASSERT_NE(nullptr, name);
  EXPECT_EQ(&defs["shortName"], name);

  // additionalProperties (labelMap values), also with an escaped key.
  const json* label = s.SchemaAt("/metadata/labels/example.com~1tier");
  ASSERT_NE(nullptr, label);
  EXPECT_EQ(&defs["labelMap"]["additionalProperties"], label);
  const json* env = s.SchemaAt("/spec/stages/train/env/NCCL_DEBUG");
  ASSERT_NE(nullptr, env);
  EXPECT_EQ("Variable value: a string, or {secretKeyRef: {name, key}} for the value of a key of a Secret in the "
            "namespace.",
            (*env)["description"]);

  // Nested items inside a $ref'd object.
  const json* prefix_path = s.SchemaAt("/spec/stages/train/data/prefixes/0/path");
  ASSERT_NE(nullptr, prefix_path);
  EXPECT_EQ(&defs["relativePath"], prefix_path);

  // Unknown places.
  EXPECT_EQ(nullptr, s.SchemaAt("/spec/nope"));
  EXPECT_EQ(nullptr, s.SchemaAt("/spec/namespace/x"));
  EXPECT_EQ(nullptr, s.SchemaAt("/spec/stages/train/bogus"));
}

// ---------------------------------------------------------------------------
// Product rules on the schema itself.

const json& ResolveRef(const json& root, const json& node) {
  const json* current = &node;
  for (int i = 0; i < 16 && current->is_object() && current->contains("$ref"); ++i) {
    current = &root.at(json::json_pointer((*current)["$ref"].get<std::string>().substr(1)));
  }
  return *current;
}

void WalkSchema(const json& root, const json& node, const std::string& where,
                std::vector<std::string>* no_description, std::vector<std::string>* open,
                int* properties_seen) {
  // Editor-only rules (what a target of each profile may set) constrain
  // fields described elsewhere; they declare none.
  if (node.is_object() && node.value("x-nemoc-editor-only", false)) return;
  if (node.is_object()) {
    if (node.contains("properties")) {
      if (!node.contains("additionalProperties") || node["additionalProperties"] != false) {
        open->push_back(where);
      }
      for (const auto& [key, property] : node["properties"].items()) {
        ++*properties_seen;
        const bool described = property.contains("description") ||
                                ResolveRef(root, property).contains("description");
        if (!described) no_description->push_back(where + "/properties/" + key);
      }
    }
    for (const auto& [key, child] : node.items()) {
      WalkSchema(root, child, where + "/" + key, no_description, open, properties_seen);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      WalkSchema(root, node[i], where + "/" + std::to_string(i), no_description, open,
                 properties_seen);
    }
  }
}

TEST(InputSchemaTestRules, EveryPropertyHasADescriptionAndEveryObjectIsClosed) {
  const json& root = Schema().json();
  std::vector<std::string> no_description, open;
  int properties_seen = 0;
  WalkSchema(root, root, "#", &no_description, &open, &properties_seen);
  EXPECT_GT(properties_seen, 150);  // the walk really visited the whole schema
  EXPECT_EQ(std::vector<std::string>{}, no_description);
  EXPECT_EQ(std::vector<std::string>{}, open);
}

// E20: every list has maxItems and every map maxProperties, so no input
// costs more than the output can hold (20,000 list items were accepted).
TEST(InputSchemaTestRules, EveryListAndMapIsBounded) {
  const json& root = Schema().json();
  std::vector<std::string> unbounded;
  int lists = 0;
  std::vector<std::pair<const json*, std::string>> stack = {{&root, "#"}};
  while (!stack.empty()) {
    const auto [node, where] = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      const std::string type = node->contains("type") && (*node)["type"].is_string() ? (*node)["type"].get<std::string>() : "";
      if (type == "array" || node->contains("items")) {
        ++lists;
        if (!node->contains("maxItems")) unbounded.push_back(where + " (list)");
      }
      const bool open_map = node->contains("patternProperties") || node->contains("propertyNames") ||
                            (node->contains("additionalProperties") && (*node)["additionalProperties"] != false);
      if (type == "object" && open_map && !node->contains("maxProperties")) unbounded.push_back(where + " (map)");
      for (const auto& [key, child] : node->items()) stack.push_back({&child, where + "/" + key});
    } else if (node->is_array()) {
      for (size_t i = 0; i < node->size(); ++i) stack.push_back({&(*node)[i], where + "/" + std::to_string(i)});
    }
  }
  EXPECT_GE(lists, 10);  // the walk really visited the lists
  EXPECT_EQ(std::vector<std::string>{}, unbounded);
}

TEST(InputSchemaTestRules, EveryRefResolves) {
  const json& root = Schema().json();
  std::vector<std::string> broken;
  std::vector<const json*> stack = {&root};
  while (!stack.empty()) {
    const json* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      if (node->contains("$ref")) {
        const std::string ref = (*node)["$ref"].get<std::string>();
        if (ref.rfind("#/", 0) != 0 || !root.contains(json::json_pointer(ref.substr(1)))) {
          broken.push_back(ref);
        }
      }
      for (const auto& [_, child] : node->items()) stack.push_back(&child);
    } else if (node->is_array()) {
      for (const auto& child : *node) stack.push_back(&child);
    }
  }
  EXPECT_EQ(std::vector<std::string>{}, broken);
}

// ---------------------------------------------------------------------------
// Excerpt.

TEST(InputSchemaTestExcerpt, QuotesStringsFlattensAndTruncates) {
  EXPECT_EQ("\"abc\"", Excerpt("abc"));
  EXPECT_EQ("42", Excerpt(42));
  EXPECT_EQ("\"a b c\"", Excerpt("a\nb\tc"));
  const std::string excerpt = Excerpt(std::string(100, 'x'));
  EXPECT_EQ(60u, excerpt.size());
  EXPECT_EQ("\"" + std::string(56, 'x') + "...", excerpt);
}

bool IsValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t j = 1; j < len; ++j) {
      if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

TEST(InputSchemaTestExcerpt, TruncationKeepsUtf8Intact) {
  std::string value = "a";
  for (int i = 0; i < 40; ++i) value += "\xc3\xa9";  // é
  const std::string excerpt = Excerpt(value);
  EXPECT_TRUE(IsValidUtf8(excerpt)) << excerpt;
  EXPECT_LE(excerpt.size(), 60u);
  EXPECT_EQ("...", excerpt.substr(excerpt.size() - 3));
}

}  // namespace
}  // namespace nemoc
