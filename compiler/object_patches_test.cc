#include "object_patches.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kube_schemas.h"
#include "spec_loader.h"
#include "test_prerequisite.h"

namespace nemoc {
namespace {

using nlohmann::json;

const char kSpec[] =
    "spec:\n"                                                           // 1
    "  patches:\n"                                                      // 2
    "    grace:\n"                                                      // 3
    "      target: {stage: train, kind: ConfigMap}\n"                   // 4
    "      merge: {metadata: {annotations: {a: b}}}\n"                  // 5
    "    dns:\n"                                                        // 6
    "      target: {stage: evaluate, kind: Job, name: e-1}\n"           // 7
    "      ops:\n"                                                      // 8
    "        - {op: add, path: /spec/template/spec/hostIPC, value: 1}\n"  // 9
    "    serve:\n"                                                      // 10
    "      target: {stage: serve, kind: Deployment}\n"                  // 11
    "      merge: {spec: {replicas: 3}}\n";                             // 12

const std::vector<std::pair<std::string, std::string>> kStageDirs = {
    {"base", "00-base"}, {"train", "30-train"}, {"evaluate", "40-evaluate"}, {"serve", "70-serve"}};

json PatchTarget(const std::string& kind, const std::string& name, const std::string& component) {
  json o = {{"apiVersion", kind == "ConfigMap" ? "v1" : "batch/v1"},
            {"kind", kind},
            {"metadata", {{"name", name}, {"namespace", "ns"}}}};
  if (!component.empty()) o["metadata"]["labels"]["app.kubernetes.io/component"] = component;
  if (kind == "Job") {
    json container = {{"name", "c"}, {"image", "i"}};
    json pod = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
    o["spec"]["template"]["spec"] = pod;
  }
  return o;
}

class ObjectPatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::filesystem::path(NEMOC_KUBE_SCHEMAS) / "index.json")) {
      NEMOC_MISSING_PREREQUISITE("kube-schemas bundle not found at " NEMOC_KUBE_SCHEMAS);
    }
    std::string err;
    schemas_ = KubeSchemas::Open(NEMOC_KUBE_SCHEMAS, &err);
    ASSERT_NE(schemas_, nullptr) << err;
    Diagnostics diags;
    ASSERT_TRUE(LoadSpecText("spec.yaml", kSpec, &doc_, &diags, {}, nullptr));
    // The training ConfigMap lives in 00-base but is training's (its component).
    files_["00-base/configmap-t.yaml"] = PatchTarget("ConfigMap", "t", "train");
    files_["00-base/configmap-other.yaml"] = PatchTarget("ConfigMap", "other", "");
    files_["40-evaluate/job-e-1.yaml"] = PatchTarget("Job", "e-1", "evaluate");
    files_["40-evaluate/job-e-2.yaml"] = PatchTarget("Job", "e-2", "evaluate");
  }
  std::unique_ptr<KubeSchemas> schemas_;
  Document doc_;
  std::map<std::string, json> files_;
};

TEST_F(ObjectPatchesTest, PatchesReachTheirStagesObjectsByComponentOrDirectory) {
  std::vector<AppliedPatch> applied;
  Diagnostics diags;
  // hostIPC: 1 is no boolean: the Job's schema refuses it, located at the ops.
  EXPECT_FALSE(ApplyObjectPatches("prod", doc_.root["spec"], doc_, kStageDirs, schemas_.get(), &files_, &applied, &diags));
  ASSERT_EQ(1u, diags.items().size());
  EXPECT_EQ("spec.patch-invalid", diags.items()[0].code);
  EXPECT_EQ(9, diags.items()[0].location.line);  // the operations
  EXPECT_NE(std::string::npos, diags.items()[0].message.find("target prod: patch dns makes Job e-1 (40-evaluate/job-e-1.yaml) invalid"))
      << diags.items()[0].message;
  // The ConfigMap of training was patched, the other base ConfigMap was not.
  EXPECT_EQ("b", files_["00-base/configmap-t.yaml"]["metadata"]["annotations"]["a"]);
  EXPECT_FALSE(files_["00-base/configmap-other.yaml"]["metadata"].contains("annotations"));
  EXPECT_FALSE(files_["40-evaluate/job-e-1.yaml"]["spec"]["template"]["spec"].contains("hostIPC"));
  ASSERT_EQ(2u, applied.size());
  EXPECT_EQ("grace", applied[0].name);
  EXPECT_EQ(std::vector<std::string>{"00-base/configmap-t.yaml"}, applied[0].files);
  // No object of stage serve: this target does not run it.
  EXPECT_EQ("serve", applied[1].name);
  EXPECT_NE(std::string::npos, applied[1].what.find("not applied: this target does not run stage serve"));
}

TEST_F(ObjectPatchesTest, AValidOpsPatchChangesOnlyTheNamedObject) {
  doc_.root["spec"]["patches"]["dns"]["ops"][0]["path"] = "/spec/template/spec/terminationGracePeriodSeconds";
  std::vector<AppliedPatch> applied;
  Diagnostics diags;
  EXPECT_TRUE(ApplyObjectPatches("prod", doc_.root["spec"], doc_, kStageDirs, schemas_.get(), &files_, &applied, &diags));
  EXPECT_TRUE(diags.items().empty());
  EXPECT_EQ(1, files_["40-evaluate/job-e-1.yaml"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]);
  EXPECT_FALSE(files_["40-evaluate/job-e-2.yaml"]["spec"]["template"]["spec"].contains("terminationGracePeriodSeconds"));
  EXPECT_TRUE(applied[0].security.empty());
  ASSERT_EQ(3u, applied.size());
  EXPECT_EQ("dns", applied[0].name);
  EXPECT_EQ("Job of stage evaluate, named e-1", applied[0].selects);
  EXPECT_EQ("1 JSON Patch operation (RFC 6902)", applied[0].what);
}

TEST_F(ObjectPatchesTest, APatchThatGrantsPrivilegesIsWarnedAboutAndRecorded) {
  doc_.root["spec"]["patches"]["dns"]["ops"][0]["path"] = "/spec/template/spec/hostNetwork";
  doc_.root["spec"]["patches"]["dns"]["ops"][0]["value"] = true;
  std::vector<AppliedPatch> applied;
  Diagnostics diags;
  EXPECT_TRUE(ApplyObjectPatches("prod", doc_.root["spec"], doc_, kStageDirs, schemas_.get(), &files_, &applied, &diags));
  ASSERT_EQ(1u, diags.items().size());
  EXPECT_EQ("spec.patch-security", diags.items()[0].code);
  EXPECT_EQ(Severity::kWarning, diags.items()[0].severity);
  EXPECT_EQ(9, diags.items()[0].location.line);
  ASSERT_FALSE(applied.empty());
  EXPECT_EQ(std::vector<std::string>{"40-evaluate/job-e-1.yaml /spec/template/spec/hostNetwork"}, applied[0].security);
  // The annotation of grace is no privilege.
  EXPECT_TRUE(applied[1].security.empty());
}

TEST_F(ObjectPatchesTest, WithoutTheSchemaBundleEveryPatchIsRefused) {
  std::vector<AppliedPatch> applied;
  Diagnostics diags;
  const auto before = files_;
  EXPECT_FALSE(ApplyObjectPatches("prod", doc_.root["spec"], doc_, kStageDirs, nullptr, &files_, &applied, &diags));
  ASSERT_EQ(3u, diags.items().size());
  for (const auto& d : diags.items()) EXPECT_EQ("spec.patch-unverified", d.code);
  EXPECT_EQ(before, files_);
}

TEST_F(ObjectPatchesTest, ASpecWithoutPatchesChangesNothing) {
  std::vector<AppliedPatch> applied;
  Diagnostics diags;
  const auto before = files_;
  EXPECT_TRUE(ApplyObjectPatches("prod", json{{"stages", json::object()}}, doc_, kStageDirs, nullptr, &files_, &applied, &diags));
  EXPECT_EQ(before, files_);
  EXPECT_TRUE(applied.empty());
}

}  // namespace
}  // namespace nemoc
