// Semantic rules a schema cannot express: parallelism arithmetic, batch
// divisibility, mode/data/source consistency, and what is not supported yet.
#ifndef NEMOC_CHECKS_H_
#define NEMOC_CHECKS_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "diagnostic.h"
#include "normalizer.h"
#include "source_map.h"
#include "spec_types.h"

namespace nemoc {

struct CheckTables;  // check_registry.h

/// Checks the normalized spec: every check registered with
/// NEMOC_REGISTER_CHECK (check_registry.h) -- this file's, the stage
/// descriptions' `needs` (stages.cc) -- in the registry's order, a stage's
/// only when the spec has the stage. Locations come from the original
/// document. Returns false when any error was reported (warnings do not count).
/// `typed`: the normalized spec read through its types (ReadTypedSpec), once
/// for every check; the overload without it reads it.
bool CheckSpec(const Document& doc, const nlohmann::json& normalized, const TypedSpec& typed,
               const CheckTables& tables, Diagnostics* diags);
bool CheckSpec(const Document& doc, const nlohmann::json& normalized, const CheckTables& tables,
               Diagnostics* diags);

/// Training-arithmetic rules alone (exposed for unit tests): parallelism
/// versus world size, batch versus data parallelism, heads/layers/query
/// groups versus tensor/pipeline parallelism, context and expert parallelism.
/// counted_layers: layers the NeMo 2 recipe adds to the pipeline split
/// (RecipeCountedSplitLayers); a split Megatron accepts either way passes.
/// key: the training stage (spec.stages.<key>) the errors point into.
void CheckTrainArithmetic(const Document& doc, const TrainingStage& train,
                          const nlohmann::json& architecture, Diagnostics* diags,
                          int counted_layers = 0, const std::string& key = "train");

/// Whether the pipeline merges a LoRA adapter (the implied 35-merge-lora
/// stage, libsonnet/stages/merge-lora.libsonnet enabled()): a NeMo 1 LoRA
/// train stage whose checkpoint evaluate or convert reads (no `checkpoint`
/// of their own). `stages` is the normalized spec.stages.
bool ImpliesLoraMerge(const nlohmann::json& stages, const TypedSpec& typed);

/// Whether the convert stage exports a NeMo 2 training run with
/// llm.export_ckpt (libsonnet/stages/convert.libsonnet nemo2(); the model
/// loads on the CPU, with one GPU for Transformer Engine):
/// a framework nemo2 train stage whose checkpoint convert reads (no
/// `checkpoint` of its own). `stages` is the normalized spec.stages.
bool ExportsNemo2(const nlohmann::json& stages, const TypedSpec& typed);

/// Every target's profile is one of `known` (the profile files of nemoc's
/// profiles/ and the --jpath directories): "spec.unknown-profile", located at
/// the target's profile field, with a "did you mean" or the known names.
bool CheckProfilesKnown(const Document& doc, const nlohmann::json& normalized,
                        const std::vector<std::string>& known, Diagnostics* diags);

/// Finish's checks of one target on the accelerator its profile names (`gpu`:
/// its accelerators.json row): FP8 and container releases the GPU model runs
/// (framework_check.h, field review A14, A18), the stages that load the
/// model whole (CheckStageFit, A12), then the memory fit of every stage of
/// the training chain (CheckFit). False when any error was reported.
bool CheckTargetOnAccelerator(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed,
                              const std::string& target,
                              const std::string& accelerator, const nlohmann::json& gpu,
                              Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_CHECKS_H_
