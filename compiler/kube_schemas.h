// Offline validation of emitted Kubernetes objects against the kube-schemas
// bundle (strict, standalone draft-04 JSON Schemas, one per apiVersion+kind,
// looked up through the bundle's index.json).
//
// Schemas are parsed lazily, once per process and per KubeSchemas object, only
// for kinds that are actually validated. Validate() and IsNamespaced() may be
// called from several threads at once.
#ifndef NEMOC_KUBE_SCHEMAS_H_
#define NEMOC_KUBE_SCHEMAS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

class KubeSchemas {
 public:
  /// Opens a bundle directory (reads index.json only). Returns nullptr and
  /// sets *err when the directory or index.json is missing, unreadable or
  /// malformed.
  static std::unique_ptr<KubeSchemas> Open(const std::string& dir,
                                           std::string* err);

  /// Adds a second bundle directory of the same layout (index.json and its
  /// files): the schemas a --jpath directory brings for the kinds of its own
  /// runtimes, profiles or components (kube-schemas/ in it). An apiVersion+kind
  /// the bundle already has is refused (a --jpath bundle adds kinds, it does
  /// not replace Kubernetes'). Returns false and sets *err on any problem.
  bool AddBundle(const std::string& dir, std::string* err);

  ~KubeSchemas();
  KubeSchemas(const KubeSchemas&) = delete;
  KubeSchemas& operator=(const KubeSchemas&) = delete;

  /// Validates one emitted object. `file` is the output path used in
  /// diagnostics. Appends errors with code "output.schema", e.g.
  ///   out/.../pytorchjob-x.yaml: error: PyTorchJob x: spec.pytorchReplicaSpecs
  ///   .Worker.template.spec.containers[0].resources.limits: <description>
  /// An object whose apiVersion+kind is not in the bundle (or that has no
  /// apiVersion/kind) gets "output.unknown-kind"; a schema file that cannot be
  /// loaded gets "output.schema-bundle". `kind: List` (v1) is validated item by
  /// item. At most ~10 messages are reported per document (plus a note saying
  /// how many were left out). Returns true when nothing was appended.
  bool Validate(const nlohmann::json& object, const std::string& file,
                Diagnostics* diags);

  /// Scope from index.json: true for "Namespaced", false for "Cluster",
  /// std::nullopt when apiVersion+kind is not in the bundle.
  std::optional<bool> IsNamespaced(const std::string& api_version,
                                   const std::string& kind) const;

  /// Path of the schema file for apiVersion+kind ("" when not in the bundle),
  /// for build stamps.
  std::string SchemaFile(const std::string& api_version, const std::string& kind) const;

  /// The bundle directory given to Open().
  const std::string& dir() const;

  /// Number of schema files parsed so far (successfully or not). For tests.
  size_t loaded_count() const;

 private:
  struct Impl;
  explicit KubeSchemas(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Where the bundle is looked for when the caller gives none:
/// $NEMOC_KUBE_SCHEMAS if set, else "".
std::string DefaultKubeSchemasDir();

}  // namespace nemoc

#endif  // NEMOC_KUBE_SCHEMAS_H_
