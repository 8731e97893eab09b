// The whole pipeline for one spec: load -> validate -> normalize -> check ->
// expand -> verify -> emit. Nothing here touches the output directory.
#ifndef NEMOC_COMPILER_H_
#define NEMOC_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "data_dir.h"
#include "fit_check.h"
#include "diagnostic.h"
#include "kube_schemas.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "tree_writer.h"

namespace nemoc {

struct CompileOptions {
  std::vector<std::string> jpaths;        // user library roots, searched first
  std::vector<std::string> sets;          // --set path=value
  std::vector<std::string> only_targets;  // --target; empty = all
  std::string kube_schemas_dir;           // "" = no output schema validation
  std::string out_dir = "out";
};

struct CompiledTarget {
  std::string name;
  std::string dir;  // <out>/<project>/<target>
  FileTree tree;    // relative path -> bytes
  nlohmann::json plan;  // what the target will run: see plan.h (SUMMARY.md's facts)
};

struct CompiledSpec {
  std::string path;
  std::string project;
  std::string project_dir;  // <out>/<project>
  bool all_targets = true;  // false when --target filtered some out
  std::vector<CompiledTarget> targets;
};

class Compiler {
 public:
  Compiler(DataDir data, CompileOptions options);
  ~Compiler();

  /// Loads the input schema, the model catalog and (if configured) the
  /// output schema bundle. Internal errors are reported as diagnostics.
  bool Init(Diagnostics* diags);

  /// Compiles one spec file. On failure `out` is incomplete and must not be written.
  bool CompileFile(const std::string& path, CompiledSpec* out, Diagnostics* diags);

  /// Source texts seen so far (specs and libraries), for quoting in messages.
  const SourceTexts& sources() const { return sources_; }
  bool kube_schemas_loaded() const { return kube_schemas_ != nullptr; }

 private:
  DataDir data_;
  CompileOptions options_;
  std::unique_ptr<InputSchema> input_schema_;
  ModelCatalog catalog_;
  AcceleratorTable accelerators_;
  std::unique_ptr<KubeSchemas> kube_schemas_;
  SourceTexts sources_;
};

/// The directory of a target's tree holding the GitOps objects; never listed
/// in the target's root kustomization.yaml.
inline constexpr const char kGitopsDir[] = "gitops";

/// The namespace an emitted file's object must be in: the spec's namespace,
/// except below gitops/ where a directory named argocd or flux holds objects
/// of that engine's namespace (spec.gitops.<engine>.namespace).
std::string ExpectedNamespace(const nlohmann::json& normalized, const std::string& path);

/// kustomization.yaml for a directory listing `resources`.
std::string KustomizationYaml(const std::vector<std::string>& resources);

}  // namespace nemoc

#endif  // NEMOC_COMPILER_H_
