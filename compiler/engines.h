// The GitOps engines as data (issue #48 item 2): each engine is its library,
// libsonnet/engines/<name>.libsonnet (the contract libsonnet/engine.libsonnet),
// and its description beside it, <name>.json
// (schemas/contracts/engine.schema.json): its title and what people read about
// it, and the schema of its settings, spec.gitops.<name>. A --jpath
// directory's engines/ adds an engine (or replaces the built-in one of its
// name) with the same two files. C++ names no engine: the input schema's
// spec.gitops.engines and spec.gitops.<name> (scripts/update-schema-catalogue
// for the built-in ones, Compiler::InputSchemaForSpec for a --jpath one), the
// libraries' table nemoc/engines.libsonnet (JsonnetExpander), the cluster
// bundle's SUMMARY.md and nemoc diff's notes come from here. The rules nemoc
// checks about one engine's settings before expansion register with
// check_registry.h's kEngine scope; a --jpath engine's own rules are its
// library's diagnostics(ctx). docs/extending.md "A GitOps engine" is the guide.
#ifndef NEMOC_ENGINES_H_
#define NEMOC_ENGINES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

class InputSchema;  // schema_validator.h

struct Engine {
  std::string name;   // spec.gitops.engines' value; the file name
  std::string file;   // the description, <name>.json
  bool builtin = true;
  nlohmann::json about;  // the description as written
  std::string title() const { return about.value("title", name); }
};

class EngineTable {
 public:
  /// Reads <builtin_root>/engines/*.json and each --jpath directory's
  /// engines/*.json (the first --jpath directory that has a name wins, and
  /// replaces the built-in engine of that name with a warning). A --jpath
  /// description is validated against `contract` with located messages and
  /// needs its library beside it; a --jpath engines/<name>.libsonnet without
  /// a description is refused by name. False when any is refused.
  bool Load(const std::string& builtin_root, const std::vector<std::string>& jpaths, const InputSchema* contract,
            Diagnostics* diags);
  /// By name.
  const std::vector<Engine>& engines() const { return engines_; }
  const Engine* Find(const std::string& name) const;
  /// One engine's description; {} when there is none (callers show its name).
  nlohmann::json Description(const std::string& name) const;

  /// The built-in engines of nemoc's data directory (data_dir.h), read once:
  /// for what runs without a Compiler (nemoc diff's notes, the cluster bundle
  /// of a caller that passes no table). Empty when none can be read.
  static const EngineTable& Builtin();

 private:
  std::vector<Engine> engines_;
};

}  // namespace nemoc

#endif  // NEMOC_ENGINES_H_
