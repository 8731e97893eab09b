// Runs the Jsonnet libraries on a normalized spec: ONE evaluation for all of
// a spec's targets, imports confined to the library roots, Jsonnet errors
// mapped back to library file:line:column and the target they came from.
#ifndef NEMOC_JSONNET_EXPANDER_H_
#define NEMOC_JSONNET_EXPANDER_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

struct JsonnetVm;  // libjsonnet.h

namespace nemoc {

/// What the libraries produced for one target.
struct TargetExpansion {
  /// "30-train/pytorchjob-x.yaml" -> the object.
  std::map<std::string, nlohmann::json> files;
  /// Facts for SUMMARY.md that only the libraries know (fabric, storage...).
  nlohmann::json summary = nlohmann::json::object();
};

struct ImportedFile {
  std::string path;     // absolute, canonical
  std::string content;  // exactly what Jsonnet saw
};

class JsonnetExpander {
 public:
  /// `library_roots` are searched in order (user --jpath directories first,
  /// then the built-in libsonnet/ and profiles/). Each must be a directory.
  explicit JsonnetExpander(std::vector<std::string> library_roots);
  ~JsonnetExpander();
  JsonnetExpander(const JsonnetExpander&) = delete;
  JsonnetExpander& operator=(const JsonnetExpander&) = delete;

  /// Evaluates libsonnet's entry point once for every target of `normalized`.
  /// Diagnostics returned by profiles (by JSON pointer) are located in `doc`.
  bool Expand(const nlohmann::json& normalized, const Document& doc,
              std::map<std::string, TargetExpansion>* out, Diagnostics* diags);

  /// Every file imported by the last Expand, in first-import order.
  const std::vector<ImportedFile>& imported() const { return imported_; }
  /// Library sources by display path, to quote lines in diagnostics.
  SourceTexts LibrarySources() const;

  /// Resolves `rel` imported from directory `base` inside the roots; on
  /// failure returns false with a message (exposed for tests).
  bool ResolveImport(const std::string& base, const std::string& rel,
                     std::string* found, std::string* content, std::string* err);

 private:
  bool Evaluate(const std::string& params_json, const std::string& only_target,
                nlohmann::json* result, std::string* error);
  void ReportJsonnetError(const std::string& error, const std::string& target,
                          Diagnostics* diags) const;

  std::vector<std::string> roots_;  // canonical, with trailing '/'
  std::vector<ImportedFile> imported_;
  ::JsonnetVm* vm_ = nullptr;
};

/// Display form of a library path (relative to the working directory when
/// that is shorter).
std::string DisplayPath(const std::string& path);

}  // namespace nemoc

#endif  // NEMOC_JSONNET_EXPANDER_H_
