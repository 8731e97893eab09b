// Validates a loaded spec against schemas/project.schema.json (draft-07,
// valijson) and maps every error back to the spec's file:line:column.
#ifndef NEMOC_SCHEMA_VALIDATOR_H_
#define NEMOC_SCHEMA_VALIDATOR_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

class FileReader;  // file_reader.h

class InputSchema {
 public:
  /// Reads (through `reader`, nullptr = the file system), parses and compiles
  /// the schema file. Returns nullptr and sets *err on failure.
  static std::unique_ptr<InputSchema> Load(const std::string& path, std::string* err,
                                           FileReader* reader = nullptr);
  /// The same for a schema in memory (`name` for messages): Load's file with
  /// the options of a --jpath profile composed in (ComposeProfileOptions).
  static std::unique_ptr<InputSchema> FromJson(nlohmann::json schema, const std::string& name,
                                               std::string* err);
  ~InputSchema();

  /// Validates `doc`. Unknown keys get a "did you mean"; YAML 1.1 booleans
  /// (pointers in `yaml11_bools`) get a hint. Returns false on any error.
  bool Validate(const Document& doc, const std::set<std::string>& yaml11_bools,
                Diagnostics* diags) const;

  /// Fills every missing property that has a `default` in the schema, below
  /// objects that exist. Call after a successful Validate.
  void FillDefaults(nlohmann::json* instance) const;

  /// The (resolved) sub-schema describing the value at `pointer`, or nullptr.
  /// With `root` (the document), an option two profiles declare with
  /// schemas of their own is looked up in the schema of the profile of the
  /// target that holds it.
  const nlohmann::json* SchemaAt(const std::string& pointer, const nlohmann::json* root = nullptr) const;
  /// D9: a value the schema at `pointer` accepts that stands in for a missing
  /// required field (its default, else a plain string, the minimum number,
  /// an empty object); null when the schema has no simple one.
  nlohmann::json PlaceholderAt(const std::string& pointer) const;

  const nlohmann::json& json() const { return schema_; }

  /// The profiles whose target options this schema holds: the built-in ones
  /// (the profile field's x-nemoc-builtin-profiles, written by
  /// scripts/update-schema-catalogue) and any composed in. Validate refuses
  /// an option on a target of one of them that does not read it
  /// (spec.wrong-profile); a target of another profile is left to the
  /// unknown-profile check.
  const std::set<std::string>& profiles() const { return profiles_; }

 private:
  InputSchema() = default;
  const nlohmann::json& Resolve(const nlohmann::json& node) const;
  void WalkKeys(const nlohmann::json& instance, const nlohmann::json& schema,
                const std::string& pointer, const Document& doc,
                const std::set<std::string>& yaml11_bools, Diagnostics* diags,
                std::set<std::string>* reported,
                const nlohmann::json* parent_instance = nullptr,
                const nlohmann::json* parent_schema = nullptr) const;
  // Mistake 7 of the review: a field written one level off (dedented under
  // its parent's sibling, or indented into a sibling). The hint that says
  // where it belongs, or "" when no neighbouring object takes `key`.
  std::string IndentationHint(const std::string& key, const nlohmann::json& instance,
                              const nlohmann::json& schema, const std::string& pointer,
                              const Document& doc, const nlohmann::json* parent_instance,
                              const nlohmann::json* parent_schema) const;
  void FillDefaultsAt(nlohmann::json* instance, const nlohmann::json& schema) const;
  void CheckProfileOptions(const Document& doc, Diagnostics* diags,
                           std::set<std::string>* reported) const;

  nlohmann::json schema_;
  std::set<std::string> profiles_;
  // Target option -> the profiles that read it (its x-nemoc-profiles).
  std::map<std::string, std::vector<std::string>> option_readers_;
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

/// Adds profile `profile`'s target options (its `options`: field -> JSON
/// Schema) to `schema` as scripts/update-schema-catalogue adds the built-in
/// profiles': each field a property of definitions.target whose
/// x-nemoc-profiles names the profiles that read it, and the profile in the
/// profile field's x-nemoc-builtin-profiles. An option another profile
/// already declares must have the same schema (a profile extending a built-in
/// one inherits its options). False with *err (naming the field) when an
/// option is a field every target has, differs from another profile's, or
/// is not a schema with a description.
bool ComposeProfileOptions(const std::string& profile, const nlohmann::json& options,
                           nlohmann::json* schema, std::string* err);

/// A short, single-line rendering of a JSON value for messages.
std::string Excerpt(const nlohmann::json& value);

/// valijson's error context ["<root>", "[spec]", "[targets]", "[0]"] as a JSON
/// pointer ("/spec/targets/0"; "" for the root), each token escaped.
std::string ContextToPointer(const std::vector<std::string>& context);

/// A plug-in's description file of a --jpath directory (a stage's
/// <key>.stage.json, an engine's <name>.json): loaded like a spec, so that
/// each of its fields is located, and validated against its contract
/// (nullptr: not validated). False when either reported an error.
bool LoadDescription(const std::string& file, const InputSchema* contract, Document* doc, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_SCHEMA_VALIDATOR_H_
