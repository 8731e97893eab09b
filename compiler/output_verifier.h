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

/// Replaces every {"$nemoc.yaml": v} with the YAML text of v, every
/// {"$nemoc.json": v} with compact JSON text, every {"$nemoc.python": m}
/// with the Python module m describes (python_emitter.h) and every
/// {"$nemoc.pbtxt": message} with protobuf text format (pbtxt_emitter.h):
/// the libraries describe documents as data and C++ renders them (never
/// std.manifestYaml). False, with the first problem in `err`, when a
/// description is malformed (a library bug).
bool RenderEmbeddedDocuments(nlohmann::json* value, std::string* err);

bool IsDnsLabel(const std::string& s);
bool IsDnsSubdomain(const std::string& s);
bool IsLabelKey(const std::string& s);
bool IsLabelValue(const std::string& s);

/// Checks one target's objects. `display_dir` prefixes paths in messages
/// (e.g. "out/proj/tgt"); `schemas` may be null (bundle not found).
/// `pod_name_suffixes`: file -> what its runtime's controller appends to the
/// object's name in pod hostnames (runtime.libsonnet podNameSuffix): such an
/// object's name is a DNS label that fits 63 with the suffix. Kubernetes
/// core kinds follow their own rules here.
bool VerifyObjects(const std::map<std::string, nlohmann::json>& files,
                   const std::string& namespace_name, const std::string& display_dir,
                   KubeSchemas* schemas, Diagnostics* diags,
                   const std::map<std::string, int>* pod_name_suffixes = nullptr);

}  // namespace nemoc

#endif  // NEMOC_OUTPUT_VERIFIER_H_
