// Turns a validated spec into the normalized spec the Jsonnet layer receives:
// defaults filled from the schema, the model preset resolved from the
// catalog, storage resolved per target, and derived sizes computed.
#ifndef NEMOC_NORMALIZER_H_
#define NEMOC_NORMALIZER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec_types.h"

#include "diagnostic.h"
#include "schema_validator.h"
#include "source_map.h"

namespace nemoc {

class FileReader;  // file_reader.h

/// libsonnet/models.json: architecture numbers per preset.
class ModelCatalog {
 public:
  /// Reads the catalog through `reader` (nullptr = the file system).
  static bool Load(const std::string& path, ModelCatalog* catalog, std::string* err,
                   FileReader* reader = nullptr);
  const nlohmann::json* Find(const std::string& preset) const;
  std::vector<std::string> Names() const;
  /// The checkpoint converters of a model family ({toHuggingface,
  /// fromHuggingface} script paths), or an empty object.
  nlohmann::json Converters(const std::string& family) const;

 private:
  nlohmann::json models_ = nlohmann::json::object();
  nlohmann::json converters_ = nlohmann::json::object();
};

/// Sizes derived from the training stage (all integers).
struct TrainSizes {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  int64_t world_size = 0;
  int64_t tensor = 1, pipeline = 1, context = 1, expert = 1;
  int64_t virtual_pipeline = 0;  // 0 = not interleaved
  int64_t model_parallel = 1;    // tensor × pipeline × context
  int64_t data_parallel = 0;     // world / model_parallel when it divides, else 0
};
TrainSizes ComputeTrainSizes(const nlohmann::json& train);
/// The same of a normalized training stage (spec_types.h), no default of its own.
TrainSizes ComputeTrainSizes(const TrainingStage& train);

/// A normalized spec's stages and model read once through the types generated
/// from its contract (spec_types.h): what the checks, the fit, the plan and
/// SUMMARY.md compute on (Prepare reads it, CheckInput and PreparedSpec carry
/// it). A part that does not read is absent -- a spec Prepare repaired to go
/// on breaks the contract where its errors are; then a check that needs that
/// part has nothing to say -- and `error` names the first field that broke it
/// at its JSON pointer ("" when everything read). Prepare reports a spec it
/// did not repair that still breaks it as internal.contract.
struct TypedSpec {
  std::optional<Stages> stages;
  std::optional<Model> model;
  /// pretrain and train, each read on its own: a training stage still checks
  /// when another stage broke the contract (D9, every problem in one run).
  std::map<std::string, TrainingStage> training;
  /// spec.targets by index, each read on its own (without the profiles'
  /// options: spec_types.h); nullopt where one breaks the contract. As
  /// normalized: Prepare's later --target selection narrows the JSON's list,
  /// not this one (the checks that read it run before).
  std::vector<std::optional<Target>> targets;
  std::optional<Monitoring> monitoring;
  std::string error;

  /// The training stage `key` when the spec has it and it read, else nullptr.
  const TrainingStage* Training(const std::string& key) const;
  /// The training stages that read, in chain order (pretrain, then train).
  std::vector<std::string> TrainingKeys() const;
};
TypedSpec ReadTypedSpec(const nlohmann::json& spec);

/// The training chain's stages present in spec.stages, in chain order:
/// "pretrain" (optional), then "train", which restores pretrain's final
/// checkpoint (libsonnet/stages/chain.libsonnet). Each has the shape of
/// spec.stages.train; every rule about training holds for each.
std::vector<std::string> TrainingStages(const nlohmann::json& stages);

/// Fills `normalized` from the validated `doc`. Reports unknown presets and
/// incomplete architectures as located errors.
bool Normalize(const Document& doc, const InputSchema& schema,
               const ModelCatalog& catalog, nlohmann::json* normalized,
               Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_NORMALIZER_H_
