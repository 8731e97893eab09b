#include "output_verifier.h"

#include <regex>
#include <set>

#include "pbtxt_emitter.h"
#include "python_emitter.h"
#include "yaml_emitter.h"

namespace nemoc {

namespace {

// Kubernetes core kinds whose names end up in DNS names, pod hostnames or
// label values, so they must be DNS-1123 labels (63 characters), not
// subdomains. A runtime's workload kind is label-named too: its file says
// what its controller appends (VerifyObjects' pod_name_suffixes).
const std::set<std::string> kLabelNamedKinds = {
    "Namespace", "Service", "Job", "CronJob", "Deployment", "StatefulSet", "DaemonSet"};

// An integer at a path of object keys, or `fallback` when any step is
// missing or of another type (objects may come from a user's library).
int64_t IntAt(const nlohmann::json& j, std::initializer_list<const char*> path, int64_t fallback) {
  const nlohmann::json* node = &j;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return fallback;
    node = &(*node)[key];
  }
  return node->is_number_integer() ? node->get<int64_t>() : fallback;
}

// Extra characters the Kubernetes core controllers append to the object's
// name for pod hostnames, so that name plus suffix still fits 63.
int SuffixBudget(const nlohmann::json& object) {
  const std::string kind = object.value("kind", "");
  static const nlohmann::json kNone = nlohmann::json::object();
  // References, not copies: spec is the largest part of a workload object.
  const nlohmann::json& spec =
      object.contains("spec") && object["spec"].is_object() ? object["spec"] : kNone;
  auto digits = [](int64_t n) { return static_cast<int>(std::to_string(std::max<int64_t>(0, n)).size()); };
  const bool indexed = spec.contains("completionMode") && spec["completionMode"] == "Indexed";
  if (kind == "Job" && indexed) {  // pods <job>-<index>
    return 1 + digits(IntAt(spec, {"completions"}, 1) - 1);
  }
  return 0;
}

std::string DescribeObject(const nlohmann::json& object) {
  return object.value("kind", "object") + " " +
         object.value("/metadata/name"_json_pointer, std::string("(unnamed)"));
}

void CheckLabels(const nlohmann::json& labels, const std::string& where, const std::string& file,
                 Diagnostics* diags) {
  if (!labels.is_object()) return;
  for (const auto& [key, value] : labels.items()) {
    if (!IsLabelKey(key)) {
      diags->Error("output.label", where + ": label key " + key + " is not valid", {file, 0, 0});
    }
    if (!value.is_string() || !IsLabelValue(value.get<std::string>())) {
      diags->Error("output.label", where + ": label " + key + " has an invalid value " + value.dump(),
                   {file, 0, 0});
    }
  }
}

void VisitPodTemplates(const nlohmann::json& node, const std::string& where,
                       const std::string& file, Diagnostics* diags) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "template" && value.is_object() && value.contains("metadata")) {
        CheckLabels(value["metadata"].value("labels", nlohmann::json::object()), where, file, diags);
      }
      VisitPodTemplates(value, where, file, diags);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) VisitPodTemplates(item, where, file, diags);
  }
}

}  // namespace

bool RenderEmbeddedDocuments(nlohmann::json* value, std::string* err) {
  // Inner documents first, so a JSON annotation inside a YAML document is
  // text by the time the outer one is rendered.
  bool ok = true;
  if (value->is_object()) {
    for (auto& [_, child] : value->items()) ok = RenderEmbeddedDocuments(&child, err) && ok;
    if (value->size() == 1 && value->contains("$nemoc.yaml")) {
      *value = EmitYaml((*value)["$nemoc.yaml"]);
    } else if (value->size() == 1 && value->contains("$nemoc.json")) {
      *value = (*value)["$nemoc.json"].dump();
    } else if (value->size() == 1 && value->contains("$nemoc.python")) {
      std::string text, why;
      if (EmitPython((*value)["$nemoc.python"], &text, &why)) {
        *value = text;
      } else {
        if (err->empty()) *err = why;
        ok = false;
      }
    } else if (value->size() == 1 && value->contains("$nemoc.pbtxt")) {
      std::string text, why;
      if (EmitPbtxt((*value)["$nemoc.pbtxt"], &text, &why)) {
        *value = std::move(text);
      } else {
        if (err->empty()) *err = why;
        ok = false;
      }
    }
  } else if (value->is_array()) {
    for (auto& child : *value) ok = RenderEmbeddedDocuments(&child, err) && ok;
  }
  return ok;
}

bool IsDnsLabel(const std::string& s) {
  static const std::regex pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, pattern);
}

bool IsDnsSubdomain(const std::string& s) {
  static const std::regex pattern(
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, pattern);
}

bool IsLabelKey(const std::string& s) {
  static const std::regex name("^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$");
  const size_t slash = s.find('/');
  const std::string prefix = slash == std::string::npos ? "" : s.substr(0, slash);
  const std::string rest = slash == std::string::npos ? s : s.substr(slash + 1);
  if (slash != std::string::npos && !IsDnsSubdomain(prefix)) return false;
  return !rest.empty() && rest.size() <= 63 && std::regex_match(rest, name);
}

bool IsLabelValue(const std::string& s) {
  static const std::regex pattern("^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$");
  return s.size() <= 63 && std::regex_match(s, pattern);
}

bool VerifyObjects(const std::map<std::string, nlohmann::json>& files,
                   const std::string& namespace_name, const std::string& display_dir,
                   KubeSchemas* schemas, Diagnostics* diags,
                   const std::map<std::string, int>* pod_name_suffixes) {
  const size_t errors_before = diags->error_count();
  std::map<std::string, std::string> identities;  // apiGroup/kind/namespace/name -> file
  for (const auto& [path, object] : files) {
    const std::string file = display_dir + "/" + path;
    auto is_string = [](const nlohmann::json& o, const char* key) {
      return o.contains(key) && o[key].is_string();
    };
    if (!object.is_object() || !is_string(object, "kind") || !is_string(object, "apiVersion") ||
        !object.contains("metadata") || !object["metadata"].is_object() ||
        !is_string(object["metadata"], "name") ||
        (object["metadata"].contains("namespace") && !is_string(object["metadata"], "namespace"))) {
      diags->Error("output.malformed", "not a Kubernetes object (apiVersion, kind, metadata.name)",
                   {file, 0, 0});
      continue;
    }
    const std::string kind = object["kind"].get<std::string>();
    const std::string api_version = object["apiVersion"].get<std::string>();
    const std::string name = object["metadata"]["name"].get<std::string>();
    const std::string where = DescribeObject(object);
    const auto runtime_suffix =
        pod_name_suffixes != nullptr ? pod_name_suffixes->find(path) : std::map<std::string, int>::const_iterator();
    const bool from_runtime = pod_name_suffixes != nullptr && runtime_suffix != pod_name_suffixes->end();
    const bool label_named = from_runtime || kLabelNamedKinds.count(kind) > 0;
    const int budget = !label_named ? 253 : 63 - (from_runtime ? runtime_suffix->second : SuffixBudget(object));
    if (!(label_named ? IsDnsLabel(name) : IsDnsSubdomain(name)) ||
        static_cast<int>(name.size()) > budget) {
      diags->Error("output.name",
                   where + ": name is not a valid " +
                       std::string(label_named ? "DNS-1123 label" : "DNS-1123 subdomain") +
                       (budget < 63 ? " of at most " + std::to_string(budget) + " characters"
                                    : ""),
                   {file, 0, 0});
    }
    std::string lower_kind = kind;
    for (char& c : lower_kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string base = path.substr(path.rfind('/') + 1);
    if (base != lower_kind + "-" + name + ".yaml") {
      diags->Error("output.path", where + ": file name should be " + lower_kind + "-" + name + ".yaml",
                   {file, 0, 0});
    }
    std::optional<bool> namespaced;
    if (schemas != nullptr) namespaced = schemas->IsNamespaced(api_version, kind);
    const bool has_namespace = object["metadata"].contains("namespace");
    if (namespaced.has_value()) {
      if (*namespaced && (!has_namespace || object["metadata"]["namespace"] != namespace_name)) {
        diags->Error("output.namespace",
                     where + ": must be in namespace " + namespace_name, {file, 0, 0});
      }
      if (!*namespaced && has_namespace) {
        diags->Error("output.namespace", where + ": is cluster-scoped but has a namespace",
                     {file, 0, 0});
      }
    }
    const std::string group = api_version.find('/') == std::string::npos
                                  ? ""
                                  : api_version.substr(0, api_version.find('/'));
    const std::string identity = group + "/" + kind + "/" +
                                 (has_namespace ? object["metadata"]["namespace"].get<std::string>() : "") +
                                 "/" + name;
    auto [it, inserted] = identities.emplace(identity, file);
    if (!inserted) {
      diags->Error("output.duplicate", where + " is generated twice (also in " + it->second + ")",
                   {file, 0, 0});
    }
    CheckLabels(object["metadata"].value("labels", nlohmann::json::object()), where, file, diags);
    VisitPodTemplates(object.value("spec", nlohmann::json::object()), where, file, diags);
    if (schemas != nullptr) schemas->Validate(object, file, diags);
  }
  return diags->error_count() == errors_before;
}

}  // namespace nemoc
