// spec.patches (field review D3): changes to generated objects for what nemoc
// does not model, applied to one target's expanded objects before they are
// verified. A patch names a stage and a kind (and optionally a name) and holds
// a JSON merge patch (RFC 7386) or JSON Patch operations (RFC 6902), applied
// with nlohmann::json's merge_patch() and patch().
//
// The guard rails: a patch that matches no object, fails to apply, changes an
// object's apiVersion, kind, name or namespace, or leaves it invalid against
// its Kubernetes schema is a located error at the patch; without the schema
// bundle a patch cannot be verified and is refused. nemoc's own output checks
// (output_verifier.h) then run on the patched objects like on any other.
//
// An object belongs to the stage its app.kubernetes.io/component label names
// (the training ConfigMap and TrainingRuntime live in 00-base but are
// training's), else to the stage of its directory; gitops/ objects belong to
// none. The stage's workload name hashes the stage's patches
// (stages/pod.libsonnet patchesOf), so a changed patch replaces the workload
// (F15); no state hash reads them.
#ifndef NEMOC_OBJECT_PATCHES_H_
#define NEMOC_OBJECT_PATCHES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "facts.h"
#include "source_map.h"

namespace nemoc {

class KubeSchemas;

/// Applies spec["patches"] (`spec`: the target's effective spec, i.e. the
/// "spec" member) to `files` ("30-train/job-x.yaml" -> object). `doc` locates
/// the patches; `stage_dirs` is the libraries' stage key -> directory table.
/// Appends what each patch changed to `applied`, in patch-name order; a patch
/// of a stage the target does not run (no object of it) is recorded as not
/// applied, one that matches no object of a stage it runs is an error. Returns
/// false when any patch was refused (every refusal is reported).
bool ApplyObjectPatches(const std::string& target_name, const nlohmann::json& spec, const Document& doc,
                        const std::vector<std::pair<std::string, std::string>>& stage_dirs,
                        KubeSchemas* schemas, std::map<std::string, nlohmann::json>* files,
                        std::vector<AppliedPatch>* applied, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_OBJECT_PATCHES_H_
