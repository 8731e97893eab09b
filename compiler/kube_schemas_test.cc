#include "test_prerequisite.h"
#include "kube_schemas.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#ifndef NEMOC_KUBE_SCHEMAS
#define NEMOC_KUBE_SCHEMAS "/work/shared/kube-schemas"
#endif

namespace nemoc {
namespace {

using nlohmann::json;

const char kFile[] = "out/proj/tgt/30-train/object.yaml";

bool BundlePresent() {
  std::error_code ec;
  return std::filesystem::is_regular_file(
      std::filesystem::path(NEMOC_KUBE_SCHEMAS) / "index.json", ec);
}

// Messages of all diagnostics, one per line, for failure output and checks.
std::string SchemaMessages(const Diagnostics& d) {
  std::string out;
  for (const Diagnostic& x : d.items()) {
    out += std::string(SeverityName(x.severity)) + " [" + x.code + "] " +
           x.location.file + ": " + x.message;
    if (!x.hint.empty()) out += " (hint: " + x.hint + ")";
    out += "\n";
  }
  return out;
}

json SettingsConfigMap(const std::string& name = "settings") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"labels", {{"app.kubernetes.io/name", "nemo"}}}}},
          {"data", {{"train.yaml", "lr: 0.1\n"}}}};
}

json Namespace() {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "ml", "labels": {"team": "research"}}
  })");
}

json PodSpec(bool with_gpu) {
  json container = {
      {"name", "pytorch"},
      {"image", "nvcr.io/nvidia/nemo:25.04"},
      {"command", {"torchrun", "train.py"}},
      {"env", {{{"name", "NCCL_DEBUG"}, {"value", "INFO"}}}},
      {"resources",
       {{"requests", {{"cpu", "8"}, {"memory", "64Gi"}}},
        {"limits", {{"cpu", 16}, {"memory", "128Gi"}}}}},
  };
  if (with_gpu) container["resources"]["limits"]["nvidia.com/gpu"] = 8;
  return {{"containers", {container}}, {"restartPolicy", "Never"}};
}

json PyTorchJob(const std::string& name = "x") {
  json replica = {{"replicas", 1},
                  {"restartPolicy", "OnFailure"},
                  {"template",
                   {{"metadata", {{"labels", {{"app", "train"}}}}},
                    {"spec", PodSpec(true)}}}};
  json worker = replica;
  worker["replicas"] = 3;
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec",
           {{"runPolicy", {{"cleanPodPolicy", "None"}}},
            {"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", worker}}}}}};
}

json Job() {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "prep"}, {"namespace", "ml"}}},
          {"spec",
           {{"backoffLimit", 2},
            {"template", {{"spec", PodSpec(false)}}}}}};
}

json Deployment() {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "serve"}, {"namespace", "ml"}}},
          {"spec",
           {{"replicas", 2},
            {"selector", {{"matchLabels", {{"app", "serve"}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", "serve"}}}}},
              {"spec", PodSpec(true)}}}}}};
}

class KubeSchemasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BundlePresent()) {
      NEMOC_MISSING_PREREQUISITE("kube-schemas bundle not found at " NEMOC_KUBE_SCHEMAS);
    }
    std::string err;
    schemas_ = KubeSchemas::Open(NEMOC_KUBE_SCHEMAS, &err);
    ASSERT_NE(schemas_, nullptr) << err;
  }

  // Validates and returns the diagnostics; checks the bool agrees with them.
  Diagnostics Check(const json& object) {
    Diagnostics d;
    bool ok = schemas_->Validate(object, kFile, &d);
    EXPECT_EQ(ok, d.empty()) << SchemaMessages(d);
    for (const Diagnostic& x : d.items()) EXPECT_EQ(x.location.file, kFile);
    return d;
  }

  std::unique_ptr<KubeSchemas> schemas_;
};

TEST_F(KubeSchemasTest, ValidObjectsPass) {
  for (const json& obj : {SettingsConfigMap(), Namespace(), PyTorchJob(), Job(), Deployment()}) {
    Diagnostics d = Check(obj);
    EXPECT_TRUE(d.empty()) << obj["kind"] << ":\n" << SchemaMessages(d);
  }
}

TEST_F(KubeSchemasTest, PropertyNamedDescriptionIsKept) {
  // PriorityClass has a real "description" field; dropping "description"
  // annotations while parsing must not drop it.
  json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
             {"kind", "PriorityClass"},
             {"metadata", {{"name", "high"}}},
             {"value", 1000},
             {"description", "for training jobs"}};
  Diagnostics d = Check(pc);
  EXPECT_TRUE(d.empty()) << SchemaMessages(d);

  pc["descripton"] = "typo";
  d = Check(pc);
  ASSERT_EQ(d.error_count(), 1u) << SchemaMessages(d);
  EXPECT_NE(d.items()[0].message.find("\"descripton\""), std::string::npos);
  EXPECT_EQ(d.items()[0].hint, "did you mean \"description\"?");
}

TEST_F(KubeSchemasTest, UnknownFieldNamesPathAndField) {
  json cm = SettingsConfigMap("cfg");
  cm["metadata"]["lables"] = {{"a", "b"}};
  Diagnostics d = Check(cm);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  const Diagnostic& e = d.items()[0];
  EXPECT_EQ(e.severity, Severity::kError);
  EXPECT_EQ(e.code, "output.schema");
  EXPECT_EQ(e.message, "ConfigMap cfg: metadata: unknown field \"lables\"");
  EXPECT_EQ(e.hint, "did you mean \"labels\"?");
}

TEST_F(KubeSchemasTest, AllUnknownFieldsOfAnObjectAreListed) {
  json cm = SettingsConfigMap("cfg");
  cm["metadata"]["lables"] = {{"a", "b"}};
  cm["metadata"]["namspace"] = "ml";
  Diagnostics d = Check(cm);
  std::string all = SchemaMessages(d);
  EXPECT_EQ(d.error_count(), 2u) << all;
  EXPECT_NE(all.find("unknown field \"lables\""), std::string::npos) << all;
  EXPECT_NE(all.find("unknown field \"namspace\""), std::string::npos) << all;
}

TEST_F(KubeSchemasTest, UnknownRootField) {
  json cm = SettingsConfigMap("cfg");
  cm["spec"] = json::object();
  Diagnostics d = Check(cm);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message, "ConfigMap cfg: unknown field \"spec\"");
}

TEST_F(KubeSchemasTest, WrongType) {
  json dep = Deployment();
  dep["spec"]["replicas"] = "2";
  Diagnostics d = Check(dep);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.schema");
  EXPECT_EQ(d.items()[0].message,
            "Deployment serve: spec.replicas: expected integer, got string \"2\"");
}

TEST_F(KubeSchemasTest, MissingRequired) {
  json job = Job();
  job["spec"]["template"]["spec"].erase("containers");
  Diagnostics d = Check(job);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message,
            "Job prep: spec.template.spec: Missing required property 'containers'.");
}

TEST_F(KubeSchemasTest, NestedErrorInPyTorchJobHasReadablePath) {
  json job = PyTorchJob("x");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
     ["resources"]["limits"]["nvidia.com/gpu"] = true;
  Diagnostics d = Check(job);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message,
            "PyTorchJob x: spec.pytorchReplicaSpecs.Worker.template.spec."
            "containers[0].resources.limits[\"nvidia.com/gpu\"]: expected integer "
            "or string, got boolean true");
}

TEST_F(KubeSchemasTest, EnumViolation) {
  json lq = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "LocalQueue"},
             {"metadata", {{"name", "q"}, {"namespace", "ml"}}},
             {"spec", {{"clusterQueue", "cq"}, {"stopPolicy", "Hold"}}}};
  Diagnostics d = Check(lq);
  EXPECT_TRUE(d.empty()) << SchemaMessages(d);

  lq["spec"]["stopPolicy"] = "Sometimes";
  d = Check(lq);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message,
            "LocalQueue q: spec.stopPolicy: value not allowed: string \"Sometimes\"; "
            "expected \"None\", \"Hold\" or \"HoldAndDrain\"");
}

TEST_F(KubeSchemasTest, UnknownKind) {
  json foo = {{"apiVersion", "example.com/v1"},
              {"kind", "Foo"},
              {"metadata", {{"name", "f"}}}};
  Diagnostics d = Check(foo);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.unknown-kind");
  EXPECT_NE(d.items()[0].message.find("Foo f: "), std::string::npos);
  EXPECT_NE(d.items()[0].message.find("example.com/v1"), std::string::npos);
  EXPECT_EQ(schemas_->loaded_count(), 0u);
}

TEST_F(KubeSchemasTest, WrongApiVersionForKind) {
  json dep = Deployment();
  dep["apiVersion"] = "extensions/v1beta1";
  Diagnostics d = Check(dep);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.unknown-kind");
  EXPECT_EQ(d.items()[0].hint, "kind Deployment is known with apiVersion \"apps/v1\"");

  json cm = SettingsConfigMap();
  cm["kind"] = "Configmap";
  d = Check(cm);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.unknown-kind");
  EXPECT_EQ(d.items()[0].hint, "did you mean kind \"ConfigMap\"?");
}

TEST_F(KubeSchemasTest, MissingKindOrNotAnObject) {
  json cm = SettingsConfigMap();
  cm.erase("kind");
  Diagnostics d = Check(cm);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.unknown-kind");

  d = Check(json::array({1, 2}));
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].code, "output.schema");
}

TEST_F(KubeSchemasTest, ListIsValidatedItemByItem) {
  json bad = SettingsConfigMap("bad");
  bad["data"]["n"] = 1;  // data values must be strings
  json list = {{"apiVersion", "v1"},
               {"kind", "List"},
               {"items", {SettingsConfigMap("good"), bad, Namespace()}}};
  Diagnostics d = Check(list);
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message,
            "ConfigMap bad: data.n: expected string, got integer 1");
}

TEST_F(KubeSchemasTest, MessagesAreCappedPerDocument) {
  json dep = Deployment();
  json& containers = dep["spec"]["template"]["spec"]["containers"];
  for (int i = 0; i < 14; ++i) {
    json c = containers[0];
    c["name"] = "c" + std::to_string(i);
    c["image"] = i;  // wrong type
    containers.push_back(c);
  }
  Diagnostics d = Check(dep);
  EXPECT_EQ(d.error_count(), 10u) << SchemaMessages(d);
  ASSERT_EQ(d.items().size(), 11u) << SchemaMessages(d);
  EXPECT_EQ(d.items().back().severity, Severity::kNote);
  EXPECT_NE(d.items().back().message.find("4 more"), std::string::npos)
      << SchemaMessages(d);
  EXPECT_NE(d.items()[0].message.find("spec.template.spec.containers[1].image: "
                                      "expected string, got integer 0"),
            std::string::npos)
      << SchemaMessages(d);
}

TEST_F(KubeSchemasTest, SchemasLoadLazily) {
  EXPECT_EQ(schemas_->loaded_count(), 0u);
  EXPECT_TRUE(schemas_->IsNamespaced("v1", "ConfigMap").value_or(false));
  EXPECT_EQ(schemas_->loaded_count(), 0u);
  Check(SettingsConfigMap("a"));
  Check(SettingsConfigMap("b"));
  EXPECT_EQ(schemas_->loaded_count(), 1u);
  Check(Namespace());
  EXPECT_EQ(schemas_->loaded_count(), 2u);
}

TEST_F(KubeSchemasTest, Scope) {
  EXPECT_EQ(schemas_->IsNamespaced("v1", "ConfigMap"), std::optional<bool>(true));
  EXPECT_EQ(schemas_->IsNamespaced("v1", "Namespace"), std::optional<bool>(false));
  EXPECT_EQ(schemas_->IsNamespaced("kubeflow.org/v1", "PyTorchJob"),
            std::optional<bool>(true));
  EXPECT_EQ(schemas_->IsNamespaced("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
            std::optional<bool>(false));
  EXPECT_EQ(schemas_->IsNamespaced("example.com/v1", "Foo"), std::nullopt);
  EXPECT_EQ(schemas_->IsNamespaced("v1", "Deployment"), std::nullopt);
  EXPECT_EQ(schemas_->dir(), NEMOC_KUBE_SCHEMAS);
}

TEST_F(KubeSchemasTest, ConcurrentValidationGivesSameResults) {
  json bad_job = PyTorchJob("bad");
  bad_job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
         ["resources"]["limits"]["cpu"] = json::array();
  bad_job["metadata"]["lables"] = json::object();
  json bad_cm = SettingsConfigMap("bad");
  bad_cm["data"]["x"] = false;
  const std::vector<json> docs = {PyTorchJob("good"), bad_job, SettingsConfigMap("good"), bad_cm};

  // Reference results, computed by this (single-threaded) instance.
  std::vector<std::string> expected;
  for (const json& doc : docs) {
    Diagnostics d;
    schemas_->Validate(doc, kFile, &d);
    expected.push_back(SchemaMessages(d));
  }
  ASSERT_TRUE(expected[0].empty()) << expected[0];
  ASSERT_FALSE(expected[1].empty());
  ASSERT_TRUE(expected[2].empty()) << expected[2];
  ASSERT_FALSE(expected[3].empty());

  // A fresh instance, so that schema loading races too.
  std::string err;
  auto fresh = KubeSchemas::Open(NEMOC_KUBE_SCHEMAS, &err);
  ASSERT_NE(fresh, nullptr) << err;
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        for (size_t i = 0; i < docs.size(); ++i) {
          // Vary the order per thread.
          const json& doc = docs[(i + static_cast<size_t>(t)) % docs.size()];
          Diagnostics d;
          fresh->Validate(doc, kFile, &d);
          got[t].push_back(SchemaMessages(d));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), docs.size() * kRounds);
    for (size_t k = 0; k < got[t].size(); ++k) {
      const size_t i = (k % docs.size() + static_cast<size_t>(t)) % docs.size();
      EXPECT_EQ(got[t][k], expected[i]) << "thread " << t << " item " << k;
    }
  }
  EXPECT_EQ(fresh->loaded_count(), 2u);
}

// --- Tests that do not need the bundle. -----------------------------------

TEST(KubeSchemasOpenTest, NonexistentDirectory) {
  std::string err;
  auto s = KubeSchemas::Open("/nonexistent/kube-schemas-dir", &err);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(err.find("/nonexistent/kube-schemas-dir"), std::string::npos) << err;
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("kube_schemas_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(KubeSchemasOpenTest, MalformedIndex) {
  TempDir dir;
  std::string err;
  dir.Write("index.json", "{\"schemas\": [");
  EXPECT_EQ(KubeSchemas::Open(dir.path(), &err), nullptr);
  EXPECT_NE(err.find("malformed"), std::string::npos) << err;

  dir.Write("index.json", R"({"schemas": [{"apiVersion": "v1", "kind": "X"}]})");
  err.clear();
  EXPECT_EQ(KubeSchemas::Open(dir.path(), &err), nullptr);
  EXPECT_NE(err.find("\"file\""), std::string::npos) << err;

  dir.Write("index.json", R"({"items": []})");
  err.clear();
  EXPECT_EQ(KubeSchemas::Open(dir.path(), &err), nullptr);
  EXPECT_FALSE(err.empty());
}

TEST(KubeSchemasOpenTest, BrokenSchemaFileGivesDiagnosticNotCrash) {
  TempDir dir;
  dir.Write("index.json", R"({"schemas": [
      {"apiVersion": "v1", "kind": "A", "file": "a-v1.json", "scope": "Cluster"},
      {"apiVersion": "v1", "kind": "B", "file": "b-v1.json", "scope": "Namespaced"},
      {"apiVersion": "v1", "kind": "C", "file": "missing.json", "scope": "Namespaced"},
      {"apiVersion": "v1", "kind": "D", "file": "d-v1.json", "scope": "Namespaced"}]})");
  dir.Write("a-v1.json", "{not json");
  dir.Write("b-v1.json", R"({"type": "object", "minProperties": "many"})");
  dir.Write("d-v1.json", R"({"type": "object", "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "description": {"type": "string", "description": "a field named description"},
      "n": {"type": "integer", "description": "annotation", "enum": [1, 2]}},
      "additionalProperties": false})");
  std::string err;
  auto s = KubeSchemas::Open(dir.path(), &err);
  ASSERT_NE(s, nullptr) << err;
  EXPECT_EQ(s->IsNamespaced("v1", "A"), std::optional<bool>(false));
  for (const char* kind : {"A", "B", "C"}) {
    Diagnostics d;
    EXPECT_FALSE(s->Validate({{"apiVersion", "v1"}, {"kind", kind}}, kFile, &d));
    ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
    EXPECT_EQ(d.items()[0].code, "output.schema-bundle") << SchemaMessages(d);
  }
  EXPECT_EQ(s->loaded_count(), 3u);
  Diagnostics d;
  EXPECT_TRUE(s->Validate(
      {{"apiVersion", "v1"}, {"kind", "D"}, {"description", "x"}, {"n", 2}}, kFile, &d))
      << SchemaMessages(d);
  EXPECT_FALSE(s->Validate({{"apiVersion", "v1"}, {"kind", "D"}, {"n", 3}}, kFile, &d));
  ASSERT_EQ(d.items().size(), 1u) << SchemaMessages(d);
  EXPECT_EQ(d.items()[0].message, "D: n: value not allowed: integer 3; expected 1 or 2");
}

TEST(KubeSchemasOpenTest, DefaultDirFromEnvironment) {
  const char* old = std::getenv("NEMOC_KUBE_SCHEMAS");
  std::string saved = old != nullptr ? old : "";
  ::setenv("NEMOC_KUBE_SCHEMAS", "/some/bundle", 1);
  EXPECT_EQ(DefaultKubeSchemasDir(), "/some/bundle");
  ::unsetenv("NEMOC_KUBE_SCHEMAS");
  EXPECT_EQ(DefaultKubeSchemasDir(), "");
  if (old != nullptr) ::setenv("NEMOC_KUBE_SCHEMAS", saved.c_str(), 1);
}

}  // namespace
}  // namespace nemoc
