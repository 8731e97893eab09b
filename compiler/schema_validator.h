// Validates a loaded spec against schemas/project.schema.json (draft-07,
// valijson) and maps every error back to the spec's file:line:column.
#ifndef NEMOC_SCHEMA_VALIDATOR_H_
#define NEMOC_SCHEMA_VALIDATOR_H_

#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

class InputSchema {
 public:
  /// Parses and compiles the schema file. Returns nullptr and sets *err on failure.
  static std::unique_ptr<InputSchema> Load(const std::string& path, std::string* err);
  ~InputSchema();

  /// Validates `doc`. Unknown keys get a "did you mean"; YAML 1.1 booleans
  /// (pointers in `yaml11_bools`) get a hint. Returns false on any error.
  bool Validate(const Document& doc, const std::set<std::string>& yaml11_bools,
                Diagnostics* diags) const;

  /// Fills every missing property that has a `default` in the schema, below
  /// objects that exist. Call after a successful Validate.
  void FillDefaults(nlohmann::json* instance) const;

  /// The (resolved) sub-schema describing the value at `pointer`, or nullptr.
  const nlohmann::json* SchemaAt(const std::string& pointer) const;

  const nlohmann::json& json() const { return schema_; }

 private:
  InputSchema() = default;
  const nlohmann::json& Resolve(const nlohmann::json& node) const;
  void WalkKeys(const nlohmann::json& instance, const nlohmann::json& schema,
                const std::string& pointer, const Document& doc,
                const std::set<std::string>& yaml11_bools, Diagnostics* diags,
                std::set<std::string>* reported) const;
  void FillDefaultsAt(nlohmann::json* instance, const nlohmann::json& schema) const;

  nlohmann::json schema_;
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

/// A short, single-line rendering of a JSON value for messages.
std::string Excerpt(const nlohmann::json& value);

}  // namespace nemoc

#endif  // NEMOC_SCHEMA_VALIDATOR_H_
