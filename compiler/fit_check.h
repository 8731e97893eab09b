// Will the model fit? A per-GPU memory estimate for Megatron-style training
// (weights, gradients and optimizer state under the chosen parallelism, plus
// approximate activations) against the accelerator's memory.
#ifndef NEMOC_FIT_CHECK_H_
#define NEMOC_FIT_CHECK_H_

#include <string>

#include <nlohmann/json.hpp>

#include "architecture.h"
#include "diagnostic.h"
#include "normalizer.h"
#include "source_map.h"
#include "spec_types.h"

namespace nemoc {

class FileReader;  // file_reader.h

/// libsonnet/accelerators.json: memory and peak TFLOPS per GPU model.
class AcceleratorTable {
 public:
  /// Reads the table through `reader` (nullptr = the file system).
  static bool Load(const std::string& path, AcceleratorTable* table, std::string* err,
                   FileReader* reader = nullptr);
  const nlohmann::json* Find(const std::string& name) const;

 private:
  nlohmann::json accelerators_ = nlohmann::json::object();
};

/// Parameters of a decoder-only transformer: embeddings (+ output layer when
/// untied), per layer attention (GQA-aware), MLP (gated for swiglu; times
/// the experts for MoE, plus the router) and norms.
struct ParameterCount {
  double total = 0;
  double expert = 0;  // the part that expert parallelism splits
};
ParameterCount CountParameters(const ModelArchitecture& architecture);
ParameterCount CountParameters(const nlohmann::json& architecture);  // ModelArchitecture::FromJson

/// Bytes per GPU in decimal GB.
struct MemoryEstimate {
  double parameters_per_gpu = 0;
  double weights_gb = 0;      // bf16 weights
  double gradients_gb = 0;    // bf16 gradients (none for frozen LoRA base weights)
  double optimizer_gb = 0;    // fp32 master weights + Adam moments, sharded over DP × CP
  double activations_gb = 0;  // 1F1B in-flight micro-batches, flash attention
  double overhead_gb = 0;     // CUDA context, NCCL buffers, fragmentation
  double total_gb = 0;
};
/// Of a normalized training stage (spec_types.h: every field the contract
/// requires is there, no default of this function's own).
MemoryEstimate EstimateMemory(const TrainingStage& train, const ModelArchitecture& architecture);

/// Error when the estimate exceeds `capacity_gb`, warning above 90 %.
/// Located at spec.stages.<key>.parallelism (key: the training stage,
/// "pretrain" or "train"); names the target.
void CheckFit(const Document& doc, const TrainingStage& train,
              const ModelArchitecture& architecture, const std::string& target_name,
              const std::string& accelerator, double capacity_gb, Diagnostics* diags,
              const std::string& key = "train");

/// Field review A12: the stages that load the trained model whole -- evaluate
/// (tensorParallel x pipelineParallel GPUs), the LoRA merge (one GPU unless
/// mergeLora.gpus: 0), the NeMo -> HF conversion (one GPU
/// unless gpus: 0, the converter's --cpu-only) and the TensorRT-LLM engine
/// (tensorParallel GPUs; fp8/int8 weights 1 byte, else 2) -- each an error
/// at the field to change when the model's weights alone do not fit the GPU.
void CheckStageFit(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed_spec,
                   const std::string& target_name, const std::string& accelerator,
                   double capacity_gb, Diagnostics* diags);

/// "136.2 GB of 180 GB (76%)".
std::string DescribeFit(const MemoryEstimate& estimate, double capacity_gb);

}  // namespace nemoc

#endif  // NEMOC_FIT_CHECK_H_
