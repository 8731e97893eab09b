#include "render.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace nemoc {
namespace {

// kustomize's legacy resource order (kubernetes-sigs/kustomize
// api/resid/gvk.go, kustomize v5.5.0 in kubectl 1.32): kinds in orderFirst
// come first in this order, kinds in orderLast last, every other kind between
// them; ties by Gvk.String() ("group_version_kind", "~G" for the core group),
// then by the legacy id string (below).
constexpr std::array<std::string_view, 22> kOrderFirst = {
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
    "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap",
    "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
    "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget"};
constexpr std::array<std::string_view, 2> kOrderLast = {"MutatingWebhookConfiguration",
                                                         "ValidatingWebhookConfiguration"};

int TypeOrder(const std::string& kind) {
  for (size_t i = 0; i < kOrderFirst.size(); ++i) {
    if (kOrderFirst[i] == kind) return -static_cast<int>(kOrderFirst.size()) + static_cast<int>(i);
  }
  for (size_t i = 0; i < kOrderLast.size(); ++i) {
    if (kOrderLast[i] == kind) return 1 + static_cast<int>(i);
  }
  return 0;
}

// Gvk.String(): group_version_kind with "~G" for the core group.
std::string GvkString(const std::string& api_version, const std::string& kind) {
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "~G" : api_version.substr(0, slash);
  const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  return group + "_" + (version.empty() ? "~V" : version) + "_" + (kind.empty() ? "~K" : kind);
}

struct Object {
  int order;
  std::string gvk;
  std::string ns;
  std::string name;
  const std::string* text;
};

// A stage directory's object file: "NN-name/file.yaml", not its kustomization.
bool IsStageObject(const std::string& path) {
  const size_t slash = path.find('/');
  if (slash == std::string::npos || path.find('/', slash + 1) != std::string::npos) return false;
  if (slash < 4 || !std::isdigit(static_cast<unsigned char>(path[0])) ||
      !std::isdigit(static_cast<unsigned char>(path[1])) || path[2] != '-') {
    return false;
  }
  const std::string file = path.substr(slash + 1);
  return file != "kustomization.yaml" && file.size() > 5 && file.compare(file.size() - 5, 5, ".yaml") == 0;
}

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  return value && value.IsScalar() ? value.Scalar() : std::string();
}

}  // namespace

bool RenderTargetStream(const FileTree& tree, std::string* out, std::string* err) {
  std::vector<Object> objects;
  for (const auto& [path, text] : tree) {
    if (!IsStageObject(path)) continue;
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      *err = path + ": not YAML: " + e.what();
      return false;
    }
    if (docs.size() != 1 || !docs[0].IsMap()) {
      *err = path + ": expected one Kubernetes object";
      return false;
    }
    const YAML::Node& doc = docs[0];
    const std::string kind = Scalar(doc, "kind");
    const YAML::Node metadata = doc["metadata"];
    const std::string name = metadata && metadata.IsMap() ? Scalar(metadata, "name") : std::string();
    if (kind.empty() || name.empty()) {
      *err = path + ": an object without kind or metadata.name";
      return false;
    }
    objects.push_back({TypeOrder(kind), GvkString(Scalar(doc, "apiVersion"), kind),
                       metadata.IsMap() ? Scalar(metadata, "namespace") : std::string(), name, &text});
  }
  // Equal GVKs: kustomize's legacyResIDSortString, gvk|namespace|name with
  // "~X" for no namespace (api/internal/builtins/SortOrderTransformer.go), so
  // "ml-serving" sorts before "ml" and a cluster-scoped object last.
  const auto legacy = [](const Object& o) { return o.gvk + "|" + (o.ns.empty() ? "~X" : o.ns) + "|" + o.name; };
  std::sort(objects.begin(), objects.end(), [&](const Object& a, const Object& b) {
    if (a.order != b.order) return a.order < b.order;
    if (a.gvk != b.gvk) return a.gvk < b.gvk;
    return legacy(a) < legacy(b);
  });
  out->clear();
  for (const auto& object : objects) {
    if (!out->empty()) *out += "---\n";
    *out += *object.text;
    if (!object.text->empty() && object.text->back() != '\n') *out += '\n';
  }
  return true;
}

}  // namespace nemoc
