#include "test_prerequisite.h"
#include "output_verifier.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "kube_schemas.h"
#include "yaml_emitter.h"

#ifndef NEMOC_KUBE_SCHEMAS
#define NEMOC_KUBE_SCHEMAS "/work/shared/kube-schemas"
#endif

namespace nemoc {
namespace {

using nlohmann::json;
using Files = std::map<std::string, json>;

const char kDir[] = "out/proj/tgt";

std::string VerifierMessages(const Diagnostics& d) {
  std::string out;
  for (const Diagnostic& x : d.items()) {
    out += std::string(SeverityName(x.severity)) + " [" + x.code + "] " + x.location.file +
           ": " + x.message + "\n";
  }
  return out;
}

json ConfigMap(const std::string& name, const std::string& ns = "ml") {
  json o = {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", {{"k", "v"}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return o;
}

json PyTorchJob(const std::string& name, int workers) {
  json pod = {{"metadata", {{"labels", {{"app", "train"}}}}},
              {"spec", {{"containers", {{{"name", "pytorch"}, {"image", "nemo:1"}}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec",
           {{"pytorchReplicaSpecs",
             {{"Master", {{"replicas", 1}, {"template", pod}}},
              {"Worker", {{"replicas", workers}, {"template", pod}}}}}}}};
}

// Diagnostics with `code`, as "file: message" lines.
std::string WithCode(const Diagnostics& d, const std::string& code) {
  std::string out;
  for (const Diagnostic& x : d.items()) {
    if (x.code == code) out += x.location.file + ": " + x.message + "\n";
  }
  return out;
}

// ---------------------------------------------------------------------------
// RenderEmbeddedDocuments

TEST(OutputVerifierTestRender, YamlMarkerBecomesEmitYamlText) {
  std::string err;
  const json doc = {{"model", {{"layers", 80}, {"name", "llama"}}},
                    {"devices", json::array({0, 1})}};
  json value = {{"$nemoc.yaml", doc}};
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err));
  ASSERT_TRUE(value.is_string());
  EXPECT_EQ(value.get<std::string>(), EmitYaml(doc));
  EXPECT_EQ(value.get<std::string>(),
            "devices:\n"
            "- 0\n"
            "- 1\n"
            "model:\n"
            "  layers: 80\n"
            "  name: llama\n");
}

TEST(OutputVerifierTestRender, JsonMarkerBecomesCompactJson) {
  std::string err;
  json value = {{"$nemoc.json", {{"b", 1}, {"a", json::array({true, nullptr, "x y"})}}}};
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err));
  EXPECT_EQ(value, json(R"({"a":[true,null,"x y"],"b":1})"));
  json scalar = {{"$nemoc.json", "text"}};
  EXPECT_TRUE(RenderEmbeddedDocuments(&scalar, &err));
  EXPECT_EQ(scalar, json("\"text\""));
}

TEST(OutputVerifierTestRender, NestedInConfigMapData) {
  std::string err;
  json cm = ConfigMap("hydra");
  cm["data"] = {{"config.yaml", {{"$nemoc.yaml", {{"trainer", {{"devices", 8}}}}}}},
                {"topology.json", {{"$nemoc.json", {{"nodes", 4}}}}},
                {"plain", "unchanged"}};
  cm["spec"] = json::array({{{"$nemoc.json", json::array({1, 2})}}, 7});
  EXPECT_TRUE(RenderEmbeddedDocuments(&cm, &err));
  EXPECT_EQ(cm["data"], json({{"config.yaml", "trainer:\n  devices: 8\n"},
                              {"topology.json", "{\"nodes\":4}"},
                              {"plain", "unchanged"}}));
  EXPECT_EQ(cm["spec"], json::array({"[1,2]", 7}));
  EXPECT_EQ(cm["metadata"], json({{"name", "hydra"}, {"namespace", "ml"}}));
}

TEST(OutputVerifierTestRender, MarkerWithOtherKeysIsLeftAlone) {
  std::string err;
  const json original = {{"data",
                          {{"$nemoc.yaml", {{"a", 1}}}, {"other", 2}},
                          }};
  json value = original;
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err));
  EXPECT_EQ(value, original);
  const json both = {{"$nemoc.yaml", 1}, {"$nemoc.json", 2}};
  value = both;
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err));
  EXPECT_EQ(value, both);
}

TEST(OutputVerifierTestRender, NoMarkersNoChange) {
  std::string err;
  const json original = ConfigMap("x");
  json value = original;
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err));
  EXPECT_EQ(value, original);
}

TEST(OutputVerifierTestRender, PythonMarkerBecomesPythonSource) {
  std::string err;
  json value = {{"$nemoc.python",
                 {{"imports", json::array({{{"module", "nemo_run"}, {"as", "run"}}})},
                  {"main", {{"$call", "run.cli.main"}, {"args", json::array({"x"})}}}}}};
  EXPECT_TRUE(RenderEmbeddedDocuments(&value, &err)) << err;
  EXPECT_EQ(value, json("import nemo_run as run\n\n\nif __name__ == '__main__':\n"
                        "    run.cli.main('x')\n"));
}

TEST(OutputVerifierTestRender, MalformedPythonDescriptionIsAnError) {
  std::string err;
  json value = {{"data", {{"recipe.py", {{"$nemoc.python", {{"main", {{"$call", "os.system;x"}}}}}}}}}};
  EXPECT_FALSE(RenderEmbeddedDocuments(&value, &err));
  EXPECT_NE(std::string::npos, err.find("not a dotted Python name")) << err;
}

// ---------------------------------------------------------------------------
// Name predicates

TEST(OutputVerifierTestNames, DnsLabel) {
  const std::pair<std::string, bool> cases[] = {
      {"a", true},
      {"0", true},
      {"a-b", true},
      {"0abc9", true},
      {"a--b", true},
      {std::string(63, 'a'), true},
      {std::string(64, 'a'), false},
      {"", false},
      {"-a", false},
      {"a-", false},
      {"A", false},
      {"aB", false},
      {"a.b", false},
      {"a_b", false},
      {"a b", false},
      {"a\n", false},
  };
  for (const auto& [s, want] : cases) EXPECT_EQ(IsDnsLabel(s), want) << '"' << s << '"';
}

TEST(OutputVerifierTestNames, DnsSubdomain) {
  const std::string l63(63, 'a');
  const std::string s253 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'b');
  ASSERT_EQ(s253.size(), 253u);
  const std::pair<std::string, bool> cases[] = {
      {"a", true},
      {"a.b", true},
      {"nemo-config.v1", true},
      {"0.0", true},
      {s253, true},
      {s253 + "b", false},
      // Kubernetes does not limit the labels of a subdomain to 63 characters.
      {std::string(100, 'a'), true},
      {"", false},
      {".a", false},
      {"a.", false},
      {"a..b", false},
      {"a-.b", false},
      {"a.-b", false},
      {"A.b", false},
      {"a_b", false},
      {"a/b", false},
  };
  for (const auto& [s, want] : cases) {
    EXPECT_EQ(IsDnsSubdomain(s), want) << '"' << s << "\" (" << s.size() << ")";
  }
}

TEST(OutputVerifierTestNames, LabelValue) {
  const std::pair<std::string, bool> cases[] = {
      {"", true},
      {"a", true},
      {"A", true},
      {"A_b.c-D9", true},
      {"24.07", true},
      {std::string(63, 'z'), true},
      {std::string(64, 'z'), false},
      {"_a", false},
      {"a_", false},
      {".a", false},
      {"a-", false},
      {"a b", false},
      {"a/b", false},
      {"a:b", false},
      {"é", false},
  };
  for (const auto& [s, want] : cases) EXPECT_EQ(IsLabelValue(s), want) << '"' << s << '"';
}

// ---------------------------------------------------------------------------
// VerifyObjects without a schema bundle

TEST(OutputVerifierTestVerify, ValidObjectsPass) {
  Files files = {{"00-base/configmap-hydra.yaml", ConfigMap("hydra")},
                 {"30-train/pytorchjob-sft.yaml", PyTorchJob("sft", 3)}};
  Diagnostics diags;
  EXPECT_TRUE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_TRUE(diags.empty()) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, SubdomainKindsAcceptDotsLabelKindsDoNot) {
  json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "a.b"}, {"namespace", "ml"}}}};
  Files files = {{"00-base/configmap-a.b.yaml", ConfigMap("a.b")},
                 {"00-base/service-a.b.yaml", svc}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  ASSERT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ(d.code, "output.name");
  EXPECT_EQ(d.message, "Service a.b: name is not a valid DNS-1123 label");
  EXPECT_EQ(d.location.file, "out/proj/tgt/00-base/service-a.b.yaml");
  EXPECT_EQ(d.location.line, 0);
}

TEST(OutputVerifierTestVerify, BadSubdomainName) {
  Files files = {{"00-base/configmap-Bad_Name.yaml", ConfigMap("Bad_Name")}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.name"),
            "out/proj/tgt/00-base/configmap-Bad_Name.yaml: ConfigMap Bad_Name: name is not a "
            "valid DNS-1123 subdomain\n");
  EXPECT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, RuntimeWorkloadsLeaveRoomForTheSuffixTheirRuntimeDeclares) {
  // The runtime's file says what its controller appends (runtime.libsonnet
  // podNameSuffix; the expansion passes it per file): "-worker-2" is 9.
  for (const auto& [suffix, fits] : std::vector<std::pair<int, int>>{{9, 54}, {10, 53}}) {
    const std::string ok(static_cast<size_t>(fits), 'j');
    const std::string path_ok = "30-train/pytorchjob-" + ok + ".yaml";
    Files files = {{path_ok, PyTorchJob(ok, 3)}};
    std::map<std::string, int> suffixes = {{path_ok, suffix}};
    Diagnostics diags;
    EXPECT_TRUE(VerifyObjects(files, "ml", kDir, nullptr, &diags, &suffixes)) << VerifierMessages(diags);
    const std::string bad = ok + "j";
    const std::string path_bad = "30-train/pytorchjob-" + bad + ".yaml";
    files = {{path_bad, PyTorchJob(bad, 3)}};
    suffixes = {{path_bad, suffix}};
    EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags, &suffixes));
    EXPECT_EQ(WithCode(diags, "output.name"),
              "out/proj/tgt/" + path_bad + ": PyTorchJob " + bad +
                  ": name is not a valid DNS-1123 label of at most " + std::to_string(fits) + " characters\n");
  }
  // A runtime's object is a DNS label even with nothing appended; an object
  // no runtime claims is judged by its kind (a CRD's name: a subdomain).
  Files dotted = {{"30-train/pytorchjob-a.b.yaml", PyTorchJob("a.b", 1)}};
  std::map<std::string, int> none = {{"30-train/pytorchjob-a.b.yaml", 0}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(dotted, "ml", kDir, nullptr, &diags, &none));
  Diagnostics unclaimed;
  EXPECT_TRUE(VerifyObjects(dotted, "ml", kDir, nullptr, &unclaimed)) << VerifierMessages(unclaimed);
}

// The first name length that is refused for `object` (named n..n), probing
// lengths 40..64.
int FirstRefusedLength(json object) {
  const std::string lower_kind = [&] {
    std::string k = object["kind"];
    for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return k;
  }();
  for (int n = 40; n <= 64; ++n) {
    const std::string name(static_cast<size_t>(n), 'n');
    object["metadata"]["name"] = name;
    Files files = {{"30-train/" + lower_kind + "-" + name + ".yaml", object}};
    Diagnostics diags;
    if (!VerifyObjects(files, "ml", kDir, nullptr, &diags)) return n;
  }
  return 0;
}

TEST(OutputVerifierTestVerify, CoreKindSuffixBudgets) {
  // Indexed Job with 100 completions: hostnames <job>-0..<job>-99.
  json indexed = {{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata", {{"name", "x"}, {"namespace", "ml"}}},
                  {"spec", {{"completionMode", "Indexed"}, {"completions", 100}}}};
  EXPECT_EQ(FirstRefusedLength(indexed), 61);
  indexed["spec"]["completionMode"] = "NonIndexed";
  EXPECT_EQ(FirstRefusedLength(indexed), 64);
}

TEST(OutputVerifierTestVerify, OtherLabelKindsGetTheFull63) {
  const std::string name(63, 'n');
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", "ml"}}}};
  Files files = {{"30-train/job-" + name + ".yaml", job}};
  Diagnostics diags;
  EXPECT_TRUE(VerifyObjects(files, "ml", kDir, nullptr, &diags)) << VerifierMessages(diags);
  job["metadata"]["name"] = name + "n";
  files = {{"30-train/job-" + name + "n.yaml", job}};
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.name"), "out/proj/tgt/30-train/job-" + name +
                                                "n.yaml: Job " + name +
                                                "n: name is not a valid DNS-1123 label\n");
}

TEST(OutputVerifierTestVerify, FileNameMustMatchKindAndName) {
  Files files = {{"00-base/configmap-other.yaml", ConfigMap("hydra")},
                 {"00-base/ConfigMap-x.yaml", ConfigMap("x")}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.path"),
            "out/proj/tgt/00-base/ConfigMap-x.yaml: ConfigMap x: file name should be "
            "configmap-x.yaml\n"
            "out/proj/tgt/00-base/configmap-other.yaml: ConfigMap hydra: file name should be "
            "configmap-hydra.yaml\n");
  EXPECT_EQ(diags.items().size(), 2u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, DuplicateIdentityAcrossFiles) {
  Files files = {{"00-base/configmap-hydra.yaml", ConfigMap("hydra")},
                 {"30-train/configmap-hydra.yaml", ConfigMap("hydra")}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.duplicate"),
            "out/proj/tgt/30-train/configmap-hydra.yaml: ConfigMap hydra is generated twice "
            "(also in out/proj/tgt/00-base/configmap-hydra.yaml)\n");
  EXPECT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, IdentityIsGroupKindNamespaceName) {
  json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", "hydra"}, {"namespace", "ml"}}}};
  json other_group = ConfigMap("hydra");
  other_group["apiVersion"] = "example.com/v1";
  json other_version = {{"apiVersion", "apps/v1beta1"},
                        {"kind", "Deployment"},
                        {"metadata", {{"name", "d"}, {"namespace", "ml"}}}};
  json deployment = other_version;
  deployment["apiVersion"] = "apps/v1";
  Files files = {{"00-base/configmap-hydra.yaml", ConfigMap("hydra")},
                 {"10-x/configmap-hydra.yaml", ConfigMap("hydra", "other")},
                 {"20-x/configmap-hydra.yaml", other_group},
                 {"00-base/serviceaccount-hydra.yaml", sa},
                 {"40-x/deployment-d.yaml", deployment},
                 {"50-x/deployment-d.yaml", other_version}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  // Only the same group (apps) in two versions is the same object.
  EXPECT_EQ(WithCode(diags, "output.duplicate"),
            "out/proj/tgt/50-x/deployment-d.yaml: Deployment d is generated twice "
            "(also in out/proj/tgt/40-x/deployment-d.yaml)\n");
  EXPECT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, InvalidLabelValueInMetadata) {
  json cm = ConfigMap("hydra");
  cm["metadata"]["labels"] = {{"ok", "fine"}, {"team", "ml team"}, {"gpus", 8}};
  Files files = {{"00-base/configmap-hydra.yaml", cm}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.label"),
            "out/proj/tgt/00-base/configmap-hydra.yaml: ConfigMap hydra: label gpus has an "
            "invalid value 8\n"
            "out/proj/tgt/00-base/configmap-hydra.yaml: ConfigMap hydra: label team has an "
            "invalid value \"ml team\"\n");
  EXPECT_EQ(diags.items().size(), 2u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestVerify, InvalidLabelValueInPodTemplate) {
  json job = PyTorchJob("sft", 2);
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["labels"]["app"] =
      "-bad";
  Files files = {{"30-train/pytorchjob-sft.yaml", job}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.label"),
            "out/proj/tgt/30-train/pytorchjob-sft.yaml: PyTorchJob sft: label app has an "
            "invalid value \"-bad\"\n");
  EXPECT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);

  // A plain Job's spec.template.
  json batch = {{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", "j"}, {"namespace", "ml"}}},
                {"spec",
                 {{"template",
                   {{"metadata", {{"labels", {{"x", std::string(64, 'x')}}}}},
                    {"spec", json::object()}}}}}};
  files = {{"30-train/job-j.yaml", batch}};
  Diagnostics more;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &more));
  EXPECT_EQ(more.items().size(), 1u) << VerifierMessages(more);
  EXPECT_EQ(WithCode(more, "output.label").rfind(
                "out/proj/tgt/30-train/job-j.yaml: Job j: label x has an invalid value", 0),
            0u)
      << VerifierMessages(more);
}

TEST(OutputVerifierTestVerify, NotAKubernetesObject) {
  json no_kind = ConfigMap("x");
  no_kind.erase("kind");
  json no_name = ConfigMap("x");
  no_name["metadata"].erase("name");
  Files files = {{"00-base/a.yaml", no_kind},
                 {"00-base/b.yaml", no_name},
                 {"00-base/c.yaml", json::array()}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_EQ(WithCode(diags, "output.malformed"),
            "out/proj/tgt/00-base/a.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n"
            "out/proj/tgt/00-base/b.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n"
            "out/proj/tgt/00-base/c.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n");
  EXPECT_EQ(diags.items().size(), 3u) << VerifierMessages(diags);
}

TEST(OutputVerifierTestBug, NonStringFieldsAreReportedNotThrown) {
  json bad_kind = ConfigMap("x");
  bad_kind["kind"] = 5;
  json bad_name = ConfigMap("y");
  bad_name["metadata"]["name"] = 7;
  json bad_ns = ConfigMap("z");
  bad_ns["metadata"]["namespace"] = json::array();
  Files files = {{"00-base/a.yaml", bad_kind},
                 {"00-base/b.yaml", bad_name},
                 {"00-base/configmap-z.yaml", bad_ns}};
  Diagnostics diags;
  bool ok = true;
  EXPECT_NO_THROW(ok = VerifyObjects(files, "ml", kDir, nullptr, &diags));
  EXPECT_FALSE(ok);
  EXPECT_EQ(diags.items().size(), 3u) << VerifierMessages(diags);
  EXPECT_EQ(WithCode(diags, "output.malformed"),
            "out/proj/tgt/00-base/a.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n"
            "out/proj/tgt/00-base/b.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n"
            "out/proj/tgt/00-base/configmap-z.yaml: not a Kubernetes object (apiVersion, kind, "
            "metadata.name)\n");
}

// ---------------------------------------------------------------------------
// VerifyObjects with the Kubernetes schema bundle

class OutputVerifierTestSchemas : public ::testing::Test {
 protected:
  void SetUp() override {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(
            std::filesystem::path(NEMOC_KUBE_SCHEMAS) / "index.json", ec)) {
      NEMOC_MISSING_PREREQUISITE("kube-schemas bundle not found at " NEMOC_KUBE_SCHEMAS);
    }
    std::string err;
    schemas_ = KubeSchemas::Open(NEMOC_KUBE_SCHEMAS, &err);
    ASSERT_NE(schemas_, nullptr) << err;
  }

  std::unique_ptr<KubeSchemas> schemas_;
};

TEST_F(OutputVerifierTestSchemas, ValidObjectsPass) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ml"}}}};
  Files files = {{"00-base/namespace-ml.yaml", ns},
                 {"00-base/configmap-hydra.yaml", ConfigMap("hydra")}};
  Diagnostics diags;
  EXPECT_TRUE(VerifyObjects(files, "ml", kDir, schemas_.get(), &diags)) << VerifierMessages(diags);
  EXPECT_TRUE(diags.empty()) << VerifierMessages(diags);
}

TEST_F(OutputVerifierTestSchemas, NamespacedObjectWithoutOrInAnotherNamespace) {
  Files files = {{"00-base/configmap-a.yaml", ConfigMap("a", "")},
                 {"00-base/configmap-b.yaml", ConfigMap("b", "other")}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, schemas_.get(), &diags));
  EXPECT_EQ(WithCode(diags, "output.namespace"),
            "out/proj/tgt/00-base/configmap-a.yaml: ConfigMap a: must be in namespace ml\n"
            "out/proj/tgt/00-base/configmap-b.yaml: ConfigMap b: must be in namespace ml\n");
  EXPECT_EQ(diags.items().size(), 2u) << VerifierMessages(diags);
}

TEST_F(OutputVerifierTestSchemas, ClusterScopedObjectWithNamespace) {
  json ns = {{"apiVersion", "v1"},
             {"kind", "Namespace"},
             {"metadata", {{"name", "ml"}, {"namespace", "ml"}}}};
  Files files = {{"00-base/namespace-ml.yaml", ns}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, schemas_.get(), &diags));
  EXPECT_EQ(WithCode(diags, "output.namespace"),
            "out/proj/tgt/00-base/namespace-ml.yaml: Namespace ml: is cluster-scoped but has "
            "a namespace\n");
  EXPECT_EQ(diags.items().size(), 1u) << VerifierMessages(diags);
}

TEST_F(OutputVerifierTestSchemas, SchemaViolation) {
  json cm = ConfigMap("hydra");
  cm["data"]["replicas"] = 3;  // ConfigMap data values are strings
  Files files = {{"00-base/configmap-hydra.yaml", cm}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, schemas_.get(), &diags));
  ASSERT_FALSE(diags.items().empty());
  for (const Diagnostic& d : diags.items()) {
    EXPECT_EQ(d.code, "output.schema") << VerifierMessages(diags);
    EXPECT_EQ(d.location.file, "out/proj/tgt/00-base/configmap-hydra.yaml");
  }
  EXPECT_NE(WithCode(diags, "output.schema").find("data.replicas"), std::string::npos)
      << VerifierMessages(diags);
}

TEST_F(OutputVerifierTestSchemas, UnknownKindIsNotNamespaceChecked) {
  json custom = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w"}}}};
  Files files = {{"00-base/widget-w.yaml", custom}};
  Diagnostics diags;
  EXPECT_FALSE(VerifyObjects(files, "ml", kDir, schemas_.get(), &diags));
  EXPECT_EQ(WithCode(diags, "output.namespace"), "");
  EXPECT_NE(WithCode(diags, "output.unknown-kind"), "") << VerifierMessages(diags);
}

}  // namespace
}  // namespace nemoc
