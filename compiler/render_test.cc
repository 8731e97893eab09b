#include "render.h"

#include <gtest/gtest.h>

namespace nemoc {
namespace {

std::string Object(const std::string& api, const std::string& kind, const std::string& name,
                   const std::string& ns = "") {
  return "apiVersion: " + api + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n" +
         (ns.empty() ? "" : "  namespace: " + ns + "\n");
}

// kubectl kustomize's legacy order: orderFirst kinds first (Namespace,
// ServiceAccount, ConfigMap, ...), other kinds by group_version_kind (the
// core group "~G" after named groups), then namespace and name.
TEST(RenderTest, StageObjectsInKustomizeOrder) {
  FileTree tree;
  tree["kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
  tree["SUMMARY.md"] = "# summary\n";
  tree[".nemoc-manifest"] = "x\n";
  tree["gitops/argocd/application-x.yaml"] = Object("argoproj.io/v1alpha1", "Application", "x", "argocd");
  tree["00-base/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
  tree["00-base/configmap-b.yaml"] = Object("v1", "ConfigMap", "b", "ns");
  tree["00-base/namespace-ns.yaml"] = Object("v1", "Namespace", "ns");
  tree["30-train/pytorchjob-t.yaml"] = Object("kubeflow.org/v1", "PyTorchJob", "t", "ns");
  tree["20-data-prep/job-z.yaml"] = Object("batch/v1", "Job", "z", "ns");
  tree["40-evaluate/job-a.yaml"] = Object("batch/v1", "Job", "a", "ns");
  tree["05-monitoring/pod-p.yaml"] = Object("v1", "Pod", "p", "ns");
  tree["70-serve/service-s.yaml"] = Object("v1", "Service", "s", "ns");
  tree["00-base/serviceaccount-w.yaml"] = Object("v1", "ServiceAccount", "w", "ns");
  tree["00-base/validatingwebhookconfiguration-v.yaml"] =
      Object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v");
  std::string out, err;
  ASSERT_TRUE(RenderTargetStream(tree, &out, &err)) << err;
  EXPECT_EQ(Object("v1", "Namespace", "ns") + "---\n" + Object("v1", "ServiceAccount", "w", "ns") + "---\n" +
                Object("v1", "ConfigMap", "b", "ns") + "---\n" + Object("v1", "Service", "s", "ns") + "---\n" +
                Object("batch/v1", "Job", "a", "ns") + "---\n" + Object("batch/v1", "Job", "z", "ns") + "---\n" +
                Object("kubeflow.org/v1", "PyTorchJob", "t", "ns") + "---\n" + Object("v1", "Pod", "p", "ns") +
                "---\n" + Object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v"),
            out);
}

// Equal kinds: kustomize compares "gvk|namespace|name" with "~X" for no
// namespace (checked with kubectl 1.32: ml-serving, ml, then none).
TEST(RenderTest, TiesFollowKustomizesLegacyIdString) {
  FileTree tree;
  tree["00-base/configmap-a.yaml"] = Object("v1", "ConfigMap", "a", "ml");
  tree["00-base/configmap-b.yaml"] = Object("v1", "ConfigMap", "b", "ml-serving");
  tree["00-base/configmap-c.yaml"] = Object("v1", "ConfigMap", "c");
  std::string out, err;
  ASSERT_TRUE(RenderTargetStream(tree, &out, &err)) << err;
  EXPECT_EQ(Object("v1", "ConfigMap", "b", "ml-serving") + "---\n" + Object("v1", "ConfigMap", "a", "ml") + "---\n" +
                Object("v1", "ConfigMap", "c"),
            out);
}

TEST(RenderTest, AFileThatIsNotOneObjectIsNamed) {
  std::string out, err;
  FileTree two;
  two["00-base/x.yaml"] = Object("v1", "ConfigMap", "a") + "---\n" + Object("v1", "ConfigMap", "b");
  EXPECT_FALSE(RenderTargetStream(two, &out, &err));
  EXPECT_EQ("00-base/x.yaml: expected one Kubernetes object", err);
  FileTree nameless;
  nameless["00-base/y.yaml"] = "apiVersion: v1\nkind: ConfigMap\n";
  EXPECT_FALSE(RenderTargetStream(nameless, &out, &err));
  EXPECT_EQ("00-base/y.yaml: an object without kind or metadata.name", err);
  FileTree broken;
  broken["00-base/z.yaml"] = "a: [\n";
  EXPECT_FALSE(RenderTargetStream(broken, &out, &err));
  EXPECT_EQ(0u, err.find("00-base/z.yaml: not YAML: "));
}

TEST(RenderTest, AnEmptyTreeIsAnEmptyStream) {
  std::string out = "old", err;
  EXPECT_TRUE(RenderTargetStream({}, &out, &err));
  EXPECT_EQ("", out);
}

}  // namespace
}  // namespace nemoc
