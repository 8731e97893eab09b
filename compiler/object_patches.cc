#include "object_patches.h"

#include <cstddef>
#include <string>

#include "kube_schemas.h"

namespace nemoc {
namespace {

const char kComponentLabel[] = "app.kubernetes.io/component";

// nlohmann's messages start with "[json.exception.out_of_range.403] ".
std::string Reason(const nlohmann::json::exception& e) {
  std::string text = e.what();
  if (!text.empty() && text[0] == '[') {
    const size_t end = text.find("] ");
    if (end != std::string::npos) text = text.substr(end + 2);
  }
  return text;
}

std::string Identity(const nlohmann::json& object) {
  if (!object.is_object()) return "(not an object)";
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& metadata =
      object.contains("metadata") && object["metadata"].is_object() ? object["metadata"] : empty;
  auto text = [](const nlohmann::json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string("-");
  };
  return text(object, "apiVersion") + " " + text(object, "kind") + " " + text(metadata, "namespace") + "/" +
         text(metadata, "name");
}

// The stage key an object belongs to: its component label's stage, else its
// directory's; "" for none (gitops/ and the cluster contribution).
std::string StageOf(const std::string& file, const nlohmann::json& object,
                    const std::vector<std::pair<std::string, std::string>>& stage_dirs) {
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object()) {
    const auto& metadata = object["metadata"];
    if (metadata.contains("labels") && metadata["labels"].is_object() &&
        metadata["labels"].contains(kComponentLabel) && metadata["labels"][kComponentLabel].is_string()) {
      const std::string component = metadata["labels"][kComponentLabel].get<std::string>();
      for (const auto& [key, dir] : stage_dirs) {
        const size_t dash = dir.find('-');
        if (dash != std::string::npos && dir.compare(dash + 1, std::string::npos, component) == 0) return key;
      }
    }
  }
  const std::string top = file.substr(0, file.find('/'));
  for (const auto& [key, dir] : stage_dirs) {
    if (dir == top) return key;
  }
  return "";
}

std::string ObjectName(const nlohmann::json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return "";
  const auto& metadata = object["metadata"];
  return metadata.contains("name") && metadata["name"].is_string() ? metadata["name"].get<std::string>() : "";
}

std::string KindOf(const nlohmann::json& object) {
  return object.is_object() && object.contains("kind") && object["kind"].is_string()
             ? object["kind"].get<std::string>()
             : "";
}

// A JSON pointer into an object that reaches a field deciding what its
// pods may do on the node or in the API (core/v1 PodSpec, SecurityContext).
bool TouchesSecurity(const std::string& path) {
  static const char* const kFields[] = {
      "securityContext", "privileged", "allowPrivilegeEscalation", "capabilities", "runAsUser", "runAsNonRoot",
      "seccompProfile", "hostNetwork", "hostPID", "hostIPC", "hostPath", "serviceAccountName",
      "automountServiceAccountToken", "procMount", "hostUsers"};
  size_t start = 0;
  while (start < path.size()) {
    const size_t end = path.find('/', start + 1);
    const std::string token = path.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
    for (const char* field : kFields) {
      if (token == field) return true;
    }
    if (end == std::string::npos) break;
    start = end;
  }
  return false;
}

}  // namespace

bool ApplyObjectPatches(const std::string& target_name, const nlohmann::json& spec, const Document& doc,
                        const std::vector<std::pair<std::string, std::string>>& stage_dirs,
                        KubeSchemas* schemas, std::map<std::string, nlohmann::json>* files,
                        std::vector<AppliedPatch>* applied, Diagnostics* diags) {
  if (!spec.is_object() || !spec.contains("patches") || !spec["patches"].is_object()) return true;
  bool ok = true;
  for (const auto& [name, patch] : spec["patches"].items()) {
    const std::string pointer = "/spec/patches/" + EscapePointerToken(name);
    const std::string prefix = "target " + target_name + ": patch " + name;
    const nlohmann::json& target = patch["target"];
    const std::string stage = target["stage"].get<std::string>();
    const std::string kind = target["kind"].get<std::string>();
    const std::string only = target.contains("name") ? target["name"].get<std::string>() : "";
    AppliedPatch record;
    record.name = name;
    record.selects = kind + " of stage " + stage + (only.empty() ? "" : ", named " + only);
    const bool merge = patch.contains("merge");
    const size_t op_count = merge ? 0 : patch["ops"].size();
    record.what = merge ? "merge patch (RFC 7386)"
                        : std::to_string(op_count) + " JSON Patch operation" + (op_count == 1 ? "" : "s") +
                              " (RFC 6902)";
    if (schemas == nullptr) {
      diags->Error("spec.patch-unverified",
                   prefix + " cannot be verified: no Kubernetes schema bundle is loaded, and a patched "
                   "object must still match its kind's schema",
                   doc.map.Locate(pointer, true), "pass --kube-schemas DIR (the bundle nemoc was built with)");
      ok = false;
      continue;
    }
    // The kinds of the stage, for a patch that matches nothing.
    std::map<std::string, size_t> kinds_of_stage;
    size_t matched = 0;
    bool patch_ok = true;
    for (auto& [file, object] : *files) {
      if (StageOf(file, object, stage_dirs) != stage) continue;
      const std::string object_kind = KindOf(object);
      ++kinds_of_stage[object_kind + (only.empty() ? "" : " " + ObjectName(object))];
      if (object_kind != kind || (!only.empty() && ObjectName(object) != only)) continue;
      ++matched;
      const std::string before = Identity(object);
      nlohmann::json patched = object;
      const std::string what = kind + " " + ObjectName(object) + " (" + file + ")";
      try {
        if (merge) {
          patched.merge_patch(patch["merge"]);
        } else {
          for (size_t i = 0; i < patch["ops"].size(); ++i) {
            try {
              patched = patched.patch(nlohmann::json::array({patch["ops"][i]}));
            } catch (const nlohmann::json::exception& e) {
              diags->Error("spec.patch-failed",
                           prefix + ", operation " + std::to_string(i) + ", cannot be applied to " + what +
                               ": " + Reason(e),
                           doc.map.Locate(pointer + "/ops/" + std::to_string(i)),
                           "to read the object as nemoc generates it, remove the patch, build and open " + file);
              patch_ok = false;
              break;
            }
          }
        }
      } catch (const nlohmann::json::exception& e) {
        diags->Error("spec.patch-failed", prefix + " cannot be applied to " + what + ": " + Reason(e),
                     doc.map.Locate(pointer + "/merge"));
        patch_ok = false;
      }
      if (!patch_ok) break;
      if (Identity(patched) != before) {
        diags->Error("spec.patch-identity",
                     prefix + " changes what " + what + " is (" + before + " becomes " + Identity(patched) +
                         "); nemoc names, orders and prunes objects by their identity",
                     doc.map.Locate(pointer + (merge ? "/merge" : "/ops")),
                     "a patch may change an object's fields, not its apiVersion, kind, name or namespace");
        patch_ok = false;
        break;
      }
      Diagnostics schema_errors;
      if (!schemas->Validate(patched, file, &schema_errors)) {
        for (const auto& d : schema_errors.items()) {
          if (d.severity != Severity::kError) continue;
          diags->Error("spec.patch-invalid",
                       prefix + " makes " + what + " invalid: " + d.message,
                       doc.map.Locate(pointer + (merge ? "/merge" : "/ops")),
                       "the Kubernetes schema of " + kind + " refuses the patched object: the API server would too");
        }
        patch_ok = false;
        break;
      }
      if (patched != object) {
        record.files.push_back(file);
        // What SUMMARY.md says about the pods' privileges comes from nemoc's
        // placement; a patch that changes them must say so itself.
        for (const auto& op : nlohmann::json::diff(object, patched)) {
          const std::string path = op["path"].get<std::string>();
          if (TouchesSecurity(path) && record.security.size() < 8) record.security.push_back(file + " " + path);
        }
      }
      object = std::move(patched);
    }
    if (!patch_ok) {
      ok = false;
      continue;
    }
    if (kinds_of_stage.empty()) {
      // A stage this target does not run (its overrides or environment drop
      // it): the spec's patch of it has nothing to do here.
      record.what += "; not applied: this target does not run stage " + stage;
      applied->push_back(std::move(record));
      continue;
    }
    if (matched == 0) {
      std::string present;
      for (const auto& [k, n] : kinds_of_stage) present += (present.empty() ? "" : ", ") + k;
      diags->Error("spec.patch-unmatched",
                   prefix + " matches no object: stage " + stage + " of this target has " + present,
                   doc.map.Locate(pointer + "/target", true),
                   "check target.kind and target.name against the stage's files in the target's tree");
      ok = false;
      continue;
    }
    if (!record.security.empty()) {
      diags->Warning("spec.patch-security",
                     prefix + " changes what its pods may do (" + record.security.front() +
                         (record.security.size() > 1 ? ", and " + std::to_string(record.security.size() - 1) + " more" : "") +
                         "); SUMMARY.md's privileges describe nemoc's settings, its patch table lists this change",
                     doc.map.Locate(pointer + (merge ? "/merge" : "/ops")),
                     "review the patch like a privilege grant");
    }
    applied->push_back(std::move(record));
  }
  return ok;
}

}  // namespace nemoc
