// Rules every emitted object must satisfy before anything is written:
// embedded documents rendered, names and labels valid for their kind,
// namespaces right, identities unique, and (when the bundle is available)
// strict validation against the Kubernetes/CRD JSON Schemas.
#ifndef NEMOC_OUTPUT_VERIFIER_H_
#define NEMOC_OUTPUT_VERIFIER_H_

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "kube_schemas.h"

namespace nemoc {

/// Replaces every {"$nemoc.yaml": v} with the YAML text of v and every
/// {"$nemoc.json": v} with compact JSON text: the libraries describe
/// documents as data and C++ renders them (never std.manifestYaml).
void RenderEmbeddedDocuments(nlohmann::json* value);
/// As above, with {"$nemoc.pbtxt": message} rendered as protobuf text format
/// too; false with `*err` set when a document cannot be rendered (a library bug).
bool RenderEmbeddedDocuments(nlohmann::json* value, std::string* err);

bool IsDnsLabel(const std::string& s);
bool IsDnsSubdomain(const std::string& s);
bool IsLabelKey(const std::string& s);
bool IsLabelValue(const std::string& s);

/// Checks one target's objects. `display_dir` prefixes paths in messages
/// (e.g. "out/proj/tgt"); `schemas` may be null (bundle not found).
bool VerifyObjects(const std::map<std::string, nlohmann::json>& files,
                   const std::string& namespace_name, const std::string& display_dir,
                   KubeSchemas* schemas, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_OUTPUT_VERIFIER_H_
