// The pipeline's stages as data (issue #48 item 2): one description per
// stage, libsonnet/stages/<key>.stage.json (schemas/contracts/stage.schema.json),
// or stages/<key>.stage.json of a --jpath directory, which adds a stage or
// replaces the built-in one of that key. C++ reads the table for the order,
// the schema of spec.stages.<key> (a --jpath stage's is composed in,
// Compiler::InputSchemaForSpec) and the `needs` checks; the libraries read the
// same files through the table nemoc generates (JsonnetExpander::StagesSource,
// imported as nemoc/stages.libsonnet). docs/stages.md is the guide.
#ifndef NEMOC_STAGES_H_
#define NEMOC_STAGES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

class InputSchema;  // schema_validator.h

/// One input a stage cannot run without (the description's `needs`).
struct StageNeed {
  std::string what;                 // "engine to serve"
  std::vector<std::string> stages;  // any one of them makes it
  std::string or_field;             // spec.stages.<key>.<or_field> names it instead ("" = none)
  std::string or_note;              // what or_field holds, for the message
};

struct Stage {
  std::string key;   // spec.stages.<key>; the file name
  std::string file;  // the description file
  bool builtin = true;
  std::string description;
  std::string dir;      // "40-evaluate"
  std::string library;  // "evaluate.libsonnet", beside the description
  std::string present;  // always | named | implied
  bool training = false;
  bool summary_line = true;
  bool serving = false;
  std::vector<std::string> reads;
  std::string writes;
  std::vector<StageNeed> needs;
  nlohmann::json schema;  // spec.stages.<key>; null when the spec cannot name it
  std::string digest;     // of the description file's bytes (StageTableSource)
  /// The Jsonnet imports of the description and the library (nemoc/stages/...
  /// for a built-in stage, stages/... for a --jpath one).
  std::string description_import() const;
  std::string library_import() const;
};

/// A stage description's key from its file name ("dataPrep.stage.json" ->
/// "dataPrep"); "" when the name is not <key>.stage.json with a key a spec
/// may use (a letter, then letters and digits).
std::string StageKeyOfFile(const std::string& filename);

/// The description files of `stages_dir` (a library root's stages/): key ->
/// path, sorted by key.
std::vector<std::pair<std::string, std::string>> StageFiles(const std::string& stages_dir);

class StageTable {
 public:
  /// Reads <builtin_root>/stages/*.stage.json and each --jpath directory's
  /// stages/*.stage.json (a --jpath description replaces the built-in one of
  /// its key). Every --jpath description is validated against `contract`
  /// (schemas/contracts/stage.schema.json; the built-in ones by
  /// StagesTest) with located messages, then the table as a whole: two
  /// stages sharing a number, a library that is not beside its description,
  /// `reads` or `needs` naming a stage that is not earlier. False when any
  /// description is refused (each is reported).
  bool Load(const std::string& builtin_root, const std::vector<std::string>& jpaths, const InputSchema* contract,
            Diagnostics* diags);

  /// In pipeline order (by directory).
  const std::vector<Stage>& stages() const { return stages_; }
  const Stage* Find(const std::string& key) const;

 private:
  std::vector<Stage> stages_;
};

/// Reads one description (already validated) into *stage; false with *err
/// for a shape the contract refuses.
bool ParseStage(const nlohmann::json& json, Stage* stage, std::string* err);

/// The table the libraries import as nemoc/stages.libsonnet (order.libsonnet
/// reads it): one row per stage in pipeline order, {key, libraryPath,
/// description: {dir, present, training, summaryLine, serving}, library:
/// import <its library>}. The members the libraries read are written out, not
/// imported (a description's schema is most of its bytes, and Jsonnet would
/// parse it in every evaluation); each row ends with the digest of its
/// description file, so that the text -- which build stamps record -- changes
/// with any byte of it.
std::string StageTableSource(std::vector<Stage> stages);

/// spec.missing-source for every stage of the normalized spec whose `needs`
/// no stage of the spec and no field of its own meets (located at the
/// stage's key). Returns false when it reported an error.
bool CheckStageNeeds(const Document& doc, const nlohmann::json& normalized, const StageTable& table,
                     Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_STAGES_H_
