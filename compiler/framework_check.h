// The training stage's framework choice (spec.stages.train.framework):
// nemo1 runs a NeMo 1 Hydra script with a generated config.yaml, nemo2 a
// generated NeMo 2 recipe module. These rules refuse a choice that cannot
// run with the stage's image, model or mode, each at the field to change.
#ifndef NEMOC_FRAMEWORK_CHECK_H_
#define NEMOC_FRAMEWORK_CHECK_H_

#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"
#include "normalizer.h"
#include "source_map.h"

namespace nemoc {

struct NemoReleases;  // nemo_releases.h

/// NeMo release a container image carries, as YY*100+MM (2507 for 25.07),
/// or 0 when the image does not say: NGC's nvcr.io/nvidia/nemo:YY.MM[...]
/// tags, and tags that embed "nemoYY.MM" (gpu-recipes' A4 images,
/// "nemo25.02-gib1.0.5-A4").
int NemoRelease(const std::string& repository, const std::string& tag);

/// Release YY*100+MM of a tritonserver image ("24.07-trtllm-python-py3":
/// 2407), which names the TensorRT-LLM release it ships; 0 for any other
/// image or tag.
int TritonRelease(const std::string& repository, const std::string& tag);

/// Layers Megatron adds to the model's in its even pipeline split because
/// the NeMo 2 recipe sets account_for_embedding_in_pipeline_split and
/// account_for_loss_in_pipeline_split (2: llama31_405b.pretrain_recipe from
/// NeMo 25.02, models.json accountForEmbeddingAndLossSince), else 0. The
/// generated recipe keeps them only when Megatron accepts layers + 2 with the
/// spec's PP and VPP (libsonnet/nemo/nemo2.libsonnet pipelineSplit).
int RecipeCountedSplitLayers(const TypedSpec& typed, const std::string& key = "train");

/// What the target's GPU model cannot run (libsonnet/accelerators.json):
/// fp8 training precision or fp8 engine quantization below compute
/// capability 8.9 (A18), and NeMo / Triton containers older than the
/// accelerator's minimumRelease (A14). Each error names the target and is
/// located at the field to change.
void CheckAcceleratorSupport(const Document& doc, const TypedSpec& typed,
                             const std::string& target_name, const std::string& accelerator,
                             const nlohmann::json& gpu, Diagnostics* diags);

/// Checks spec.stages.<key>.framework (key: a training stage, "pretrain" or
/// "train") against the image, the model catalog's NeMo 2 recipe, the mode's
/// checkpoint source, the data and the overrides; what NeMo 1 runs on from
/// `releases` (libsonnet/nemo/versions.json nemo1).
void CheckTrainFramework(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed,
                         const std::string& key, const NemoReleases& releases, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_FRAMEWORK_CHECK_H_
