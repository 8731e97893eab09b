// The whole pipeline for one spec, in stages; nothing here touches the output
// directory (tree_writer.h does, for cmd_build.cc). Data flow, and where each
// check runs (in this order; every check of a stage runs, so one run reports
// every problem the stage can see):
//
//   Init     (I/O, once)  the data directory's tables and the library roots: the
//                         input schema, models.json, accelerators.json, the
//                         output schemas, which profiles and runtimes exist,
//                         jpath.shadows-builtin.
//   Load     (I/O)        reads the spec through the FileReader (file_reader.h):
//                         input.* and yaml.* (spec_loader.h), spec.stale-schema.
//   Resolve  (Jsonnet)    what each --jpath profile the spec's targets name says
//                         about itself (profile.libsonnet), once per run; a
//                         profile no spec names is never evaluated.
//   Prepare  (pure)       1. spec.secret (secret_scanner.h)  2. --set (set_override.h)
//                         3. schema.* and spec.wrong-profile (schema_validator.h;
//                            a --jpath profile's options composed in)
//                         4. normalization (normalizer.h)  5. CheckSpec (checks.h:
//                            the semantic and admission rules)  6. --target
//                         7. spec.unknown-profile (checks.h)  8. each target's
//                            overrides through 3-5 again (target_overrides.h)
//                         9. each target's GPU node, its profile's gpuNode data
//                            (gpu_node.h): gpusPerNode and CheckTargetOnAccelerator
//                            (fit_check.h: FP8 and releases the GPU runs, every
//                            stage's fit) -- CheckTargetNodes.
//   Expand   (Jsonnet)    the libraries (jsonnet_expander.h): library.*, the
//                         profiles' own checks (profile.libsonnet `checks`).
//   Finish   (pure)       per target: 1. embedded documents  2. output.*
//                         (output_verifier.h: the output schemas and what the
//                         clusters admit)  3. the tree (SUMMARY.md and the plan
//                         from one TargetFacts, facts.h)  4. output.secret.
//   Stamp    (reads)      incremental-build stamps (build_stamp.h).
// Cluster bundles are checked across specs afterwards (cluster_bundle.h).
//
// Prepare and Finish read no file and run no Jsonnet: the fuzz target
// fuzz_validate calls the same Prepare as `nemoc build`.
#ifndef NEMOC_COMPILER_H_
#define NEMOC_COMPILER_H_

#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include "data_dir.h"
#include "fit_check.h"
#include "gpu_node.h"
#include "diagnostic.h"
#include "engines.h"
#include "kube_schemas.h"
#include "nemo_releases.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "stages.h"
#include "tree_writer.h"

namespace nemoc {

struct CompileOptions {
  std::vector<std::string> jpaths;        // user library roots, searched first
  std::vector<std::string> sets;          // --set path=value
  std::vector<std::string> only_targets;  // --target; empty = all
  std::string kube_schemas_dir;           // "" = no output schema validation
  std::string out_dir = "out";
  std::string dump_entry_dir;  // bench/: write each Jsonnet entry + spec TLA here
};

struct CompiledTarget {
  std::string name;
  std::string dir;  // <out>/<project>/<target>
  FileTree tree;    // relative path -> bytes
  std::map<std::string, nlohmann::json> objects;  // Finish -> Stamp: the expansion's objects
  nlohmann::json plan;  // what the target will run: see plan.h (SUMMARY.md's facts)
  std::string stamp;        // marker stamp lines ("" = always rebuild)
  bool up_to_date = false;  // skipped: its tree is current (tree left empty)
  Location cluster_location;  // targets[i].cluster (or the target), for cluster_bundle.cc
};

struct CompiledSpec {
  std::string path;
  std::string project;
  std::string project_dir;  // <out>/<project>
  bool all_targets = true;  // false when --target filtered some out
  std::vector<CompiledTarget> targets;
  /// cost.h: the spec's pin file, and its new text when this build found
  /// priors it had not pinned yet ("" = nothing to write). Only `build`
  /// writes it, after the trees.
  std::string pin_path;
  std::string pin_write;
};

class Contracts;
class FileReader;
class JsonnetExpander;
class StampCalculator;
struct TargetExpansion;

/// A spec after everything that needs no Jsonnet (load, secret scan, --set,
/// validation, normalization, checks, profile names): what the expansion and
/// the rest of the pipeline read. Made by Compiler::Prepare.
struct PreparedSpec {
  std::string path;
  Document doc;
  /// The normalized spec. A target with overrides (target_overrides.h)
  /// compiles from its own merged spec, normalized["targetSpecs"][name]
  /// (nemoc.libsonnet's build() picks it), located in target_docs[name].
  nlohmann::json normalized;
  std::map<std::string, Document> target_docs;
  /// normalized["spec"] read through its types once (normalizer.h
  /// TypedSpec), and each merged target spec's (target_typed[name]).
  TypedSpec typed;
  std::map<std::string, TypedSpec> target_typed;
  size_t diagnostics_before = 0;  // a spec that adds any diagnostic is not stamped
  bool clean = false;  // Finish: no diagnostic at all (then Stamp stamps it)
  /// D9, every problem in one run: Prepare reported errors but could go on
  /// (credentials masked, schema errors repaired as their hints say, checks
  /// failed on a valid shape), so the later checks -- the libraries', the fit
  /// check -- report theirs in the same run. Such a spec never produces
  /// output: Finish returns false after its checks.
  bool blocked = false;
  /// Each selected target's GPU node, when its profile names one
  /// (CheckTargetNodes; gpu_node.h): Finish's facts read it.
  std::map<std::string, GpuNode> nodes;
  /// Each selected target's node fabric, when its profile declares one
  /// (CheckTargetNodes; node_fabric.h).
  std::map<std::string, std::string> fabrics;
  /// Spec subtrees whose values Prepare removed or masked to go on: later
  /// diagnostics located inside them would be about a value the user did not
  /// write, and are dropped.
  std::vector<std::string> repaired;
  /// cost.h: the spec's pinned MFU priors (key -> {mfu, source}) and the pin
  /// file's text as read ("" = none).
  nlohmann::json pins = nlohmann::json::object();
  std::string pins_text;

  /// The normalized spec target `name` compiles from, and its document.
  const nlohmann::json& SpecFor(const std::string& name) const;
  const Document& DocFor(const std::string& name) const;
  const TypedSpec& TypedFor(const std::string& name) const;
};

/// D9: of the diagnostics from index `from` on, those a blocked spec's
/// earlier errors caused -- an evaluation error of the libraries on a spec
/// that failed its checks, anything located inside a value Prepare masked or
/// removed -- are dropped. Nothing for a spec that is not blocked.
void DropWhatBlockingCaused(const PreparedSpec& prepared, size_t from, Diagnostics* diags);

/// A spec file as Compiler::Load read it (UpToDate loads it too, so that a
/// spec that must be compiled is not parsed twice).
struct LoadedSpec {
  bool attempted = false;
  bool ok = false;
  Document doc;
  Diagnostics diags;
  std::set<std::string> yaml11_bools;
  /// cost.h: the pin file beside the spec as read with it ("" = none), or
  /// why it could not be read.
  std::string pins_text;
  std::string pins_error;
};

class Compiler {
 public:
  /// Inputs are read through `reader` (nullptr: the file system).
  Compiler(DataDir data, CompileOptions options, FileReader* reader = nullptr);
  ~Compiler();

  /// Reads the input schema, the model catalog, the accelerator table, (if
  /// configured) the output schema bundle, and what the library roots hold
  /// (profiles, --jpath runtimes, each --jpath profile's description).
  /// Internal errors are reported as diagnostics.
  bool Init(Diagnostics* diags);

  /// Compiles one spec file. On failure `out` is incomplete and must not be written.
  bool CompileFile(const std::string& path, CompiledSpec* out, Diagnostics* diags);

  /// The same, safe to call from several threads at once: each thread brings
  /// its own Jsonnet VM (MakeExpander) and collects quoted sources in `sources`.
  bool CompileFile(const std::string& path, CompiledSpec* out, Diagnostics* diags,
                   SourceTexts* sources, JsonnetExpander* expander,
                   LoadedSpec* preloaded = nullptr) const;

  /// CompileFile in steps (see the top of this file), so that build_driver.cc
  /// can expand several prepared specs in one Jsonnet evaluation
  /// (JsonnetExpander::ExpandBatch): Load, Prepare, then either
  /// CompilePrepared (expand this spec alone, Finish, Stamp) or Finish and
  /// Stamp with the spec's share of a batch, after the expander recorded this
  /// spec's imports (RecordImports).
  ///
  /// Load reads the spec (and a modeline's schema copy) through the reader.
  bool Load(const std::string& path, LoadedSpec* loaded) const;
  /// Resolve describes the --jpath profiles the loaded spec's targets name
  /// (after --set), each once per run, so that Prepare evaluates nothing.
  void Resolve(const LoadedSpec& loaded) const;
  /// Prepare takes the loaded, resolved spec (moved from `loaded`); it reads
  /// nothing.
  bool Prepare(LoadedSpec* loaded, CompiledSpec* out, PreparedSpec* prepared, Diagnostics* diags,
               SourceTexts* sources) const;
  bool CompilePrepared(PreparedSpec* prepared, CompiledSpec* out, Diagnostics* diags,
                       SourceTexts* sources, JsonnetExpander* expander) const;
  /// Finish reads nothing: the expansion is checked and made into trees.
  bool Finish(PreparedSpec* prepared, std::map<std::string, TargetExpansion>* expansions,
              CompiledSpec* out, Diagnostics* diags) const;
  /// Sets each finished target's incremental-build stamp (none when Finish
  /// reported anything: skipping the spec next time would hide it).
  void Stamp(const PreparedSpec& prepared, CompiledSpec* out, JsonnetExpander* expander) const;

  /// The input schema with everything the --jpath directories bring composed
  /// in -- every profile of theirs (options, GPU node), runtime, platform
  /// component, stage and GitOps engine -- as a build composes what a spec
  /// names: what
  /// `nemoc schema --jpath` prints and `nemoc explain --jpath` reads. The
  /// built-in schema without --jpath.
  bool ComposedInputSchema(nlohmann::json* out, Diagnostics* diags) const;

  /// A Jsonnet expander over this compiler's library roots (one per thread).
  std::unique_ptr<JsonnetExpander> MakeExpander() const;

  /// Incremental builds: true when every selected target of the spec at
  /// `path` already holds exactly what a build would write (see
  /// build_stamp.h); then `out` lists them with up_to_date set. Thread-safe
  /// like CompileFile. False means "compile it" (nothing is reported).
  /// `loaded` keeps the parsed spec for CompileFile.
  bool UpToDate(const std::string& path, CompiledSpec* out, JsonnetExpander* expander,
                LoadedSpec* loaded) const;

  /// Source texts seen so far (specs and libraries), for quoting in messages.
  const SourceTexts& sources() const { return sources_; }
  /// The GitOps engines, built-in and of --jpath (engines.h); loaded by Init.
  const EngineTable& engines() const { return engine_table_; }
  SourceTexts* mutable_sources() { return &sources_; }
  bool kube_schemas_loaded() const { return kube_schemas_ != nullptr; }

 private:
  DataDir data_;
  CompileOptions options_;
  const InputSchema* InputSchemaFor(Diagnostics* diags) const;  // loads once, thread-safe
  // The input schema for `doc`: InputSchemaFor's, with the options of each
  // profile its targets name that the schema does not hold (a profile found
  // through --jpath) composed in. Thread-safe; each set composed once.
  const InputSchema* InputSchemaForSpec(const Document& doc, Diagnostics* diags) const;
  // Init: what the library roots hold (file listings; nothing is evaluated).
  void IndexLibraries();
  // This build's --set assignments applied to `doc`, every one (each problem
  // reported in `diags`); false when any failed.
  // Two --set of one path are an error; with `conflicted`, the sets are
  // still applied (the last wins) and *conflicted is set, so the spec is
  // checked on and never built.
  bool ApplySets(Document* doc, Diagnostics* diags, bool* conflicted = nullptr) const;
  // Whether --target selected target `name` (every target without --target).
  bool Selected(const std::string& name) const;
  // A warning per --jpath file that replaces a built-in library or profile.
  void WarnShadowedLibraries(Diagnostics* diags) const;
  // A warning when the spec's yaml-language-server modeline names a schema
  // file (nemoc init's .nemoc/project.schema.json) that is not this nemoc's.
  void WarnStaleSchemaCopy(const Document& doc, Diagnostics* diags) const;
  // Prepare's last step: the merged spec of each selected target with overrides.
  bool PrepareTargetOverrides(const InputSchema& input_schema,
                              const std::set<std::string>& spec_yaml11_bools,
                              PreparedSpec* prepared, Diagnostics* diags,
                              bool validate_only) const;
  // Prepare's checks that need each target's GPU node (gpu_node.h): the
  // memory fit, FP8 and the release's GPU support, gpusPerNode.
  void CheckTargetNodes(const InputSchema& input_schema, PreparedSpec* prepared, Diagnostics* diags) const;

  mutable std::once_flag input_schema_once_;
  mutable std::unique_ptr<InputSchema> input_schema_;
  mutable std::string input_schema_error_;
  FileReader* reader_;
  std::string schema_text_;  // data_.schema()'s bytes (Init)
  // What the library roots hold (Init): every profile file by name, nemoc's
  // own profiles (the schema holds their options), the runtimes of --jpath
  // directories.
  std::map<std::string, std::string> profile_files_;
  std::set<std::string> builtin_profiles_;
  std::map<std::string, std::string> user_runtime_files_;
  StageTable stage_table_;  // stages.h: the built-in stages and those of --jpath
  EngineTable engine_table_;  // engines.h: the built-in engines and those of --jpath
  std::string stage_table_source_;  // its text for the libraries (every expander's nemoc/stages.libsonnet)
  std::map<std::string, std::string> user_component_files_;  // components/<name>.libsonnet of --jpath
  // What each --jpath profile a spec names says about itself (Resolve); its
  // errors are appended to the diagnostics of every spec that names it.
  struct ProfileDescription {
    bool ok = false;
    bool is_profile = true;  // false: a helper library, not a profile
    nlohmann::json json;
    Diagnostics diags;
    Location gpu_node_at;  // the line of its file that declares gpuNode (or the file)
    Location node_fabric_at;  // ... and nodeFabric
  };
  mutable std::map<std::string, ProfileDescription> profile_descriptions_;
  mutable std::mutex profiles_mu_;  // profile_descriptions_, composed_schemas_
  // Sorted profile names joined by ',' -> the schema with their options.
  mutable std::map<std::string, std::unique_ptr<InputSchema>> composed_schemas_;
  ModelCatalog catalog_;
  NemoReleases releases_;  // libsonnet/nemo/versions.json nemo1 (nemo_releases.h)
  AcceleratorTable accelerators_;
  std::unique_ptr<KubeSchemas> kube_schemas_;
  std::unique_ptr<Contracts> contracts_;  // NEMOC_CHECK_CONTRACTS (contracts.h)
  std::unique_ptr<StampCalculator> stamps_;
  SourceTexts sources_;
};

/// The directory of a target's tree holding the GitOps objects; never listed
/// in the target's root kustomization.yaml.
inline constexpr const char kGitopsDir[] = "gitops";

/// The namespace an emitted file's object must be in: the spec's namespace,
/// except below a directory an engine names for its objects (`namespaces`:
/// directory -> namespace, the libraries' summary gitops.namespaces), the
/// longest one holding the file winning.
std::string ExpectedNamespace(const std::vector<std::pair<std::string, std::string>>& namespaces,
                              const std::string& spec_namespace, const std::string& path);

/// kustomization.yaml for a directory listing `resources`.
std::string KustomizationYaml(const std::vector<std::string>& resources);

}  // namespace nemoc

#endif  // NEMOC_COMPILER_H_
