// Runs the Jsonnet libraries on a normalized spec: ONE evaluation for all of
// a spec's targets (or for several specs: ExpandBatch), imports confined to
// the library roots, Jsonnet errors mapped back to library
// file:line:column and the target they came from.
#ifndef NEMOC_JSONNET_EXPANDER_H_
#define NEMOC_JSONNET_EXPANDER_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

struct JsonnetVm;  // libjsonnet.h

namespace nemoc {
class Contracts;   // contracts.h
class FileReader;  // file_reader.h
}  // namespace nemoc

namespace nemoc {

/// What the libraries produced for one target.
struct TargetExpansion {
  /// "30-train/pytorchjob-x.yaml" -> the object.
  std::map<std::string, nlohmann::json> files;
  /// Facts for SUMMARY.md that only the libraries know (fabric, storage...).
  nlohmann::json summary = nlohmann::json::object();
  /// Kustomize roots with no objects of their own ("gitops/argocd/pipeline"
  /// -> ["../../../00-base", ...]), written as <dir>/kustomization.yaml.
  std::map<std::string, std::vector<std::string>> kustomizations;
  /// "30-train/pytorchjob-x.yaml" -> the characters the controllers append to
  /// the object's name in pod hostnames, as its runtime declares
  /// (runtime.libsonnet podNameSuffix); output_verifier.cc checks the fit.
  std::map<std::string, int> pod_name_suffixes;
};

struct ImportedFile {
  std::string path;     // absolute, canonical
  std::string content;  // exactly what Jsonnet saw
};

/// One resolved `import` as Jsonnet asked for it: from directory `base`
/// ("" for the entry snippet), the string `rel`, found at `found`.
struct ImportCall {
  std::string base;
  std::string rel;
  std::string found;
};

class JsonnetExpander {
 public:
  /// `library_roots` are searched in order (user --jpath directories first,
  /// then the built-in libsonnet/ and profiles/). Each must be a directory.
  /// The first `user_roots` are the --jpath ones: the runtimes/ directories
  /// of the others hold the built-in runtimes, which every evaluation gets
  /// (a --jpath runtime only when a target names it, or a target without one
  /// has a --jpath profile that runs it by default: ProfileDefaultRuntime).
  /// Library files are read through `reader` (nullptr: the file system; see
  /// file_reader.h).
  explicit JsonnetExpander(std::vector<std::string> library_roots, size_t user_roots = 0,
                           FileReader* reader = nullptr);
  ~JsonnetExpander();
  JsonnetExpander(const JsonnetExpander&) = delete;
  JsonnetExpander& operator=(const JsonnetExpander&) = delete;

  /// When `dir` is not empty, each evaluation also writes its entry snippet
  /// and top-level argument there (bench/ times the jsonnet CLI on them).
  void DumpEntriesTo(std::string dir) { dump_dir_ = std::move(dir); }
  /// With `contracts` (contracts.h), every expansion checks the normalized
  /// spec it is given and the result the libraries return against the
  /// written contracts: a violation is an "internal.contract" error.
  void CheckContracts(const Contracts* contracts) { contracts_ = contracts; }
  const Contracts* contracts() const { return contracts_; }
  /// The targets --target names (empty: all): the others' diagnostics and
  /// objects are dropped when the expansion is collected.
  /// The stage table's text (stages.h StageTableSource) the compiler read
  /// once for the run; without it the expander reads the descriptions itself.
  void UseStageTable(std::string source) { stages_source_ = std::move(source); }
  void SelectTargets(std::vector<std::string> names) { selected_ = std::move(names); }
  /// The runtime a --jpath profile runs by default ("" when not known): a
  /// target without a runtime of its own then brings that runtime into the
  /// evaluation when it is a --jpath one. Compiler answers from the
  /// descriptions Resolve made.
  void ProfileDefaultRuntime(std::function<std::string(const std::string& profile)> lookup) {
    default_runtime_ = std::move(lookup);
  }

  /// Evaluates libsonnet's entry point once for every target of `normalized`.
  /// Diagnostics returned by profiles (by JSON pointer) are located in `doc`.
  /// A target with overrides compiles from normalized["targetSpecs"][name]
  /// and its diagnostics are located in (*target_docs)[name].
  bool Expand(const nlohmann::json& normalized, const Document& doc,
              std::map<std::string, TargetExpansion>* out, Diagnostics* diags,
              const std::map<std::string, Document>* target_docs = nullptr);

  /// A normalized spec and the document it came from (for locations).
  struct BatchSpec {
    const nlohmann::json* normalized;
    const Document* doc;
    const std::map<std::string, Document>* target_docs = nullptr;
  };
  /// Expand for several specs in ONE evaluation: libjsonnet 0.18 parses its
  /// standard library and nemoc's bundled libraries again for every
  /// evaluation (~50-100 ms), more than a target's own expansion. Each
  /// spec's result and profile diagnostics are exactly what Expand gives it
  /// (the libraries are pure functions of one spec). False when the batch
  /// could not be evaluated at all (a Jsonnet error in any spec): nothing is
  /// reported then, and the caller expands the specs one by one with Expand,
  /// which locates the error. `ok[i]` is false when spec i's profile raised
  /// an error. Imports are not recorded per spec: call RecordImports.
  bool ExpandBatch(const std::vector<BatchSpec>& specs,
                   std::vector<std::map<std::string, TargetExpansion>>* outs,
                   std::vector<Diagnostics>* diags, std::vector<bool>* ok);
  /// Records the imports (and library sources) a bundled Expand of
  /// `normalized` records, without evaluating anything: what a spec
  /// expanded in a batch stamps. False when the libraries cannot be bundled.
  bool RecordImports(const nlohmann::json& normalized);

  /// What profile `name` says about itself, without a spec: its name,
  /// description, options, starter and default runtime, from
  /// `import '<name>.libsonnet'` in the library roots (libsonnet/profile.libsonnet
  /// documents the members). The file must extend profile.libsonnet, whose
  /// assert names any required member it lacks. On failure the Jsonnet error
  /// is reported located in the library, prefixed "profile NAME: ". With
  /// `is_profile`, a file that does not extend profile.libsonnet (a helper
  /// library) sets it false and is not reported.
  bool DescribeProfile(const std::string& name, nlohmann::json* out, Diagnostics* diags,
                       bool* is_profile = nullptr);

  /// The workload kinds ("group/Kind") GitOps engines judge: gitops.libsonnet's
  /// core ones and every runtime's (runtimes/<name>.libsonnet of every library
  /// root, --jpath ones included). For `nemoc diff`, which flags a change
  /// that replaces a workload.
  bool WorkloadKinds(std::vector<std::string>* kinds, Diagnostics* diags);

  /// Every file imported by the last Expand, in first-import order.
  const std::vector<ImportedFile>& imported() const { return imported_; }
  /// Every import Jsonnet resolved during the last Expand, in call order
  /// (incremental builds replay them to see whether anything changed).
  const std::vector<ImportCall>& import_calls() const { return import_calls_; }
  /// Whether the last Expand evaluated the libraries as one program (the
  /// fast path; see Bundle in jsonnet_expander.cc).
  bool bundled() const { return bundled_; }
  /// What the watchdog names if an evaluation of this expander with no
  /// EvalWatch of its caller's runs too long (eval_watchdog.h; E18).
  void set_watch_label(std::string label) { watch_label_ = std::move(label); }
  /// Forgets what was imported (before replaying a stamp's imports).
  void ClearImports() {
    imported_.clear();
    import_calls_.clear();
  }
  /// Library sources by shown path (ShownPath), to quote lines in diagnostics.
  SourceTexts LibrarySources() const;
  /// How a diagnostic names a library file: the one rule for paths nemoc
  /// prints (README "How paths are shown"). A file inside a library root is
  /// its root as the caller named it (the --jpath argument, nemoc's absolute
  /// data directory) joined with its path below that root, whatever the
  /// working directory and wherever symlinks point; any other path is
  /// printed as it is.
  std::string ShownPath(const std::string& path) const;

  /// Machine-independent name of a file or directory inside a library root:
  /// "<root index>:<path below the root>" ("-" for ""). False when `path` is
  /// in no root.
  bool RootKey(const std::string& path, std::string* key) const;
  /// The absolute path a RootKey names; false when the key is malformed.
  bool RootPath(const std::string& key, std::string* path) const;

  /// Resolves `rel` imported from directory `base` inside the roots; on
  /// failure returns false with a message (exposed for tests).
  bool ResolveImport(const std::string& base, const std::string& rel,
                     std::string* found, std::string* content, std::string* err);
  /// The file ResolveImport finds for `rel` imported from `base`, and the
  /// Digest128Hex of its content. Each file is read and hashed once per
  /// expander (one per worker thread and build): a no-op build replays every
  /// target's ~70 imports, and reading and hashing the ~0.8 MB of libraries
  /// per target was a fifth of its time (issue #47). Records no import.
  bool ImportDigest(const std::string& base, const std::string& rel, std::string* found,
                    std::string* digest, std::string* err);
  /// The built-in library a --jpath directory's file at `rel` (relative to
  /// that directory) replaces for nemoc's own imports, by the precedence
  /// ResolveImport and the entry apply (docs/extending.md): nemoc/<path>,
  /// runtimes/<name>.libsonnet and a top-level <profile>.libsonnet; "" when it
  /// replaces nothing.
  std::string BuiltinReplacedBy(const std::string& rel) const;

 private:
  bool Evaluate(const std::string& params_json, const std::string& only_target, bool bundled,
                nlohmann::json* result, std::string* error);
  bool Bundle(const std::string& entry, std::string* program);
  // Evaluates an entry program (kCall) with its top-level arguments: `spec`
  // or `specs` as JSON text (the other null). `text` is the output, or the
  // error when false is returned.
  bool RunEntry(const std::string& program, const std::string* spec, const std::string& only_target,
                const std::string* specs, std::string* text);
  // Evaluates `program` with imports resolved in the roots; `text` is the
  // output, or the error when false is returned.
  // Every evaluation runs under the watchdog (E18): a caller's EvalWatch
  // naming its spec, else one naming watch_label_.
  bool EvaluateSnippet(const std::string& program, std::string* text);
  std::string watch_label_ = "nemoc's Jsonnet libraries (built-in and --jpath)";
  // The evaluated {targets: ...} of one spec -> `out` (objects moved out).
  bool Collect(nlohmann::json* result, const Document& doc,
               const std::map<std::string, Document>* target_docs,
               std::map<std::string, TargetExpansion>* out, Diagnostics* diags) const;
  // How an entry imports a profile or runtime by name (the precedence:
  // docs/extending.md), and the entry itself: the profiles named, every
  // built-in runtime and those named, ending in `call`.
  std::string ProfileImport(const std::string& name) const;
  std::string RuntimeImport(const std::string& name) const;
  // The profiles and runtimes the targets of `normalized` use (a target's
  // runtime, or its --jpath profile's default --jpath runtime).
  void AddProfiles(const nlohmann::json& normalized, std::set<std::string>* profiles,
                   std::set<std::string>* runtimes) const;
  // Where nemoc/<below> is in the built-in roots, in order.
  std::vector<std::string> BuiltinCandidates(const std::string& below) const;
  bool EntrySnippet(const std::set<std::string>& profiles, const std::set<std::string>& runtimes,
                    const std::string& call, std::string* snippet, std::string* error) const;
  // The contracts' check (CheckContracts), before Collect.
  bool KeepsContracts(const nlohmann::json& normalized, const nlohmann::json& result,
                      Diagnostics* diags) const;
  // `prefix` starts the message ("target NAME: ").
  void ReportJsonnetError(const std::string& error, const std::string& prefix,
                          Diagnostics* diags) const;

  FileReader* reader_;
  const Contracts* contracts_ = nullptr;
  std::vector<std::string> selected_;
  std::vector<std::string> roots_;  // canonical, with trailing '/'
  // roots_[i] as the caller named it (a --jpath argument, nemoc's data
  // directory), lexically normal, with trailing '/': what ShownPath prints.
  std::vector<std::string> shown_roots_;
  size_t user_roots_ = 0;  // the first roots_ are the --jpath ones
  std::set<std::string> builtin_runtimes_;  // libsonnet/runtimes/<name>.libsonnet
  std::set<std::string> user_runtimes_;     // <--jpath>/runtimes/<name>.libsonnet
  std::function<std::string(const std::string&)> default_runtime_;  // ProfileDefaultRuntime
  std::set<std::string> user_profiles_;     // <--jpath>/<name>.libsonnet (profiles or helpers)
  // The plug-in tables nemoc generates, one per directory whose files are
  // the implementations of a contract: platform components (components/,
  // imported as nemoc/components.libsonnet) and GitOps engines (engines/,
  // nemoc/engines.libsonnet). Each maps a name to how the table imports its
  // file: nemoc/<dir>/<name>.libsonnet, or <dir>/<name>.libsonnet of a --jpath
  // directory, which wins. The table "is" a file at the first root, so that
  // a file of your own is found by root order like any import, and so that
  // build stamps record it (its text changes with the set of files).
  // A table may copy string members of each file's description beside it
  // (<name>.json) into its entry, so that the libraries read them without
  // parsing the description (an engine's title and notes: its description
  // also holds the schema of its settings, which Jsonnet would parse in
  // every evaluation).
  struct PluginEntry {
    std::string import;       // how the table imports the file
    std::string description;  // <dir>/<name>.json beside it, in the root that has the file
    bool user = false;        // of a --jpath directory
  };
  struct PluginTable {
    std::string dir;     // "components"
    std::string header;  // the generated file's comment
    std::vector<std::string> described;  // members copied from each description
    std::map<std::string, PluginEntry> entries;
    std::string import() const { return "nemoc/" + dir + ".libsonnet"; }
  };
  std::vector<PluginTable> plugin_tables_;
  std::string PluginTablePath(const PluginTable& table) const;
  // Generated on first read (it reads the descriptions), then served from
  // plugin_sources_ (dir -> text): the roots do not change during a run.
  const std::string& PluginTableSource(const PluginTable& table) const;
  mutable std::map<std::string, std::string> plugin_sources_;
  // The stage table (stages.h), imported as nemoc/stages.libsonnet: the text
  // UseStageTable handed over, else generated on first use from the
  // description files of libsonnet/stages/ and of each --jpath directory's
  // stages/ (which wins), like PluginTableSource.
  std::string StagesPath() const;
  const std::string& StagesSource() const;
  mutable std::string stages_source_;
  bool profile_root_ = false;               // a built-in root is profiles/ (nemoc/profiles/...)
  // Import candidate -> its canonical path ("" = not a regular file). The
  // library roots do not change during one nemoc run.
  std::map<std::string, std::string> canonical_memo_;
  std::map<std::string, std::string> digest_memo_;  // canonical path -> ImportDigest
  // ResolveImport's search: the canonical path `rel` names, or false with
  // `err` (nothing read).
  bool FindImport(const std::string& base, const std::string& rel, std::string* found,
                  std::string* err);
  // Reads a found library file as an import (size, NUL byte); false with `err`.
  bool ReadImport(const std::string& rel, const std::string& found, std::string* content,
                  std::string* err);
  std::vector<ImportedFile> imported_;
  std::vector<ImportCall> import_calls_;
  ::JsonnetVm* vm_ = nullptr;
  std::string dump_dir_;
  bool bundled_ = false;
};


/// A profile or runtime name nemoc splices into an import: only names the
/// schema's profile field allows (a lowercase letter, then lowercase letters,
/// digits and '-'; at most 63).
bool SafeLibraryName(const std::string& name);

}  // namespace nemoc

#endif  // NEMOC_JSONNET_EXPANDER_H_
