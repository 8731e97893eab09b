#include "fit_check.h"
#include "file_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "checks.h"
#include "normalizer.h"

namespace nemoc {

namespace {

constexpr double kGB = 1e9;
constexpr double kWarnFraction = 0.9;
// CUDA context, NCCL communicators and allocator fragmentation.
constexpr double kOverheadGB = 6.0;

std::string Fixed(double v, int digits = 1) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

}  // namespace

bool AcceleratorTable::Load(const std::string& path, AcceleratorTable* table, std::string* err,
                            FileReader* reader) {
  std::string text, read_err;
  if (!(reader != nullptr ? *reader : RealFiles()).Read(path, kMaxTableBytes, &text, &read_err)) {
    *err = "cannot read accelerator table: " + read_err;
    return false;
  }
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.contains("accelerators")) {
    *err = "accelerator table " + path + " is not valid (expected {\"accelerators\": {...}})";
    return false;
  }
  table->accelerators_ = std::move(parsed["accelerators"]);
  return true;
}

const nlohmann::json* AcceleratorTable::Find(const std::string& name) const {
  auto it = accelerators_.find(name);
  return it == accelerators_.end() ? nullptr : &*it;
}

ParameterCount CountParameters(const nlohmann::json& architecture) {
  return CountParameters(ModelArchitecture::FromJson(architecture));
}

ParameterCount CountParameters(const ModelArchitecture& a) {
  const double h = a.hidden_size;
  const double layers = a.num_layers;
  const double ffn = a.ffn_hidden_size;
  const double experts = a.num_experts;
  const double kv = h * a.num_query_groups / a.num_attention_heads;
  const double attention = h * (h + 2 * kv) + h * h;
  const double mlp = (a.gated_mlp ? 3 : 2) * h * ffn;
  const double norms = 2 * h;
  ParameterCount count;
  const double embeddings = a.vocab_size * h * (a.share_embeddings ? 1 : 2);
  if (experts > 0) {
    count.expert = layers * experts * mlp;
    count.total = embeddings + layers * (attention + norms + h * experts) + count.expert + h;
  } else {
    count.total = embeddings + layers * (attention + mlp + norms) + h;
  }
  return count;
}

MemoryEstimate EstimateMemory(const TrainingStage& train, const ModelArchitecture& architecture) {
  const TrainSizes s = ComputeTrainSizes(train);
  const ParameterCount params = CountParameters(architecture);
  const double dense = params.total - params.expert;
  const double per_gpu = dense / (s.tensor * s.pipeline) +
                         params.expert / (s.tensor * s.pipeline * std::max<int64_t>(1, s.expert));
  const bool lora = train.mode == "lora";
  // The distributed optimizer shards fp32 master weights and both Adam
  // moments over the data-parallel ranks (with context parallelism folded in).
  const double shard = static_cast<double>(std::max<int64_t>(1, s.data_parallel) * s.context);
  // Expert parameters shard over the expert-data-parallel group only:
  // DP x CP / EP ranks (Megatron's expert DP group; field review A16).
  const double expert_shard = std::max(1.0, shard / std::max<int64_t>(1, s.expert));
  const double dense_per_gpu = dense / (s.tensor * s.pipeline);
  const double expert_per_gpu = per_gpu - dense_per_gpu;
  // Gradients: NeMo 2's bf16_mixed plugin sets grad_reduce_in_fp32=True, so
  // Megatron's DDP keeps fp32 main gradients (4 bytes per parameter; NVIDIA/NeMo
  // v2.2.1 nemo/lightning/pytorch/plugins/mixed_precision.py, A16); NeMo 1
  // (megatron_amp_O2 with bf16 gradients) 2 bytes.
  const double gradient_bytes = train.framework == "nemo2" ? 4 : 2;
  MemoryEstimate e;
  e.parameters_per_gpu = per_gpu;
  e.weights_gb = 2 * per_gpu / kGB;
  e.gradients_gb = lora ? 0 : gradient_bytes * per_gpu / kGB;
  e.optimizer_gb = lora ? 0 : 12 * (dense_per_gpu / shard + expert_per_gpu / expert_shard) / kGB;

  // Activations per layer and micro-batch, flash attention, no recomputation
  // (Korthikanti et al. 2022): 34·s·b·h/t with sequence parallelism,
  // s·b·h·(10 + 24/t) without; the sequence is split by context parallelism.
  const double seq = static_cast<double>(train.seq_length) / static_cast<double>(s.context);
  const double micro = static_cast<double>(train.batch.micro);
  const double h = architecture.hidden_size;
  const bool sp = train.parallelism.sequence_parallel;
  const double per_layer = sp ? 34 * seq * micro * h / s.tensor
                              : seq * micro * h * (10 + 24.0 / s.tensor);
  // 1F1B: the first stage holds min(PP, micro-batches) in flight for its
  // L/PP layers; interleaving adds (PP-1)/(PP·VPP).
  const double layers = architecture.num_layers;
  const double global = static_cast<double>(train.batch.global);
  const double micro_batches = s.data_parallel > 0 ? global / (micro * s.data_parallel) : 1;
  const double in_flight = std::min<double>(s.pipeline, micro_batches);
  const double interleave =
      s.virtual_pipeline > 1 ? 1 + (s.pipeline - 1.0) / (s.pipeline * s.virtual_pipeline) : 1;
  const double logits = 4 * seq * micro * architecture.vocab_size / s.tensor;
  e.activations_gb = (per_layer * layers / s.pipeline * in_flight * interleave + logits) / kGB;
  e.overhead_gb = kOverheadGB;
  e.total_gb = e.weights_gb + e.gradients_gb + e.optimizer_gb + e.activations_gb + e.overhead_gb;
  return e;
}

std::string DescribeFit(const MemoryEstimate& e, double capacity_gb) {
  return "~" + Fixed(e.total_gb) + " GB of " + Fixed(capacity_gb, 0) + " GB (" +
         Fixed(100 * e.total_gb / capacity_gb, 0) + "%): weights " + Fixed(e.weights_gb) +
         ", gradients " + Fixed(e.gradients_gb) + ", optimizer " + Fixed(e.optimizer_gb) +
         ", activations " + Fixed(e.activations_gb) + ", overhead " + Fixed(e.overhead_gb);
}

void CheckFit(const Document& doc, const TrainingStage& train,
              const ModelArchitecture& architecture, const std::string& target_name,
              const std::string& accelerator, double capacity_gb, Diagnostics* diags,
              const std::string& key) {
  const TrainSizes s = ComputeTrainSizes(train);
  if (s.data_parallel == 0 || architecture.hidden_size <= 0) return;  // reported elsewhere
  const MemoryEstimate e = EstimateMemory(train, architecture);
  const Location where = doc.map.Locate("/spec/stages/" + key + "/parallelism", /*prefer_key=*/true);
  const std::string text = "target " + target_name + ": " + (key == "train" ? "" : "spec.stages." + key + ": ") +
                           "estimated memory per GPU " +
                           DescribeFit(e, capacity_gb) + " on " + accelerator;
  const std::string hint =
      "raise tensor or pipeline parallelism, lower the micro batch, or use GPUs with more memory";
  if (e.total_gb > capacity_gb) {
    diags->Error("train.memory", text + ": does not fit", where, hint);
  } else if (e.total_gb > kWarnFraction * capacity_gb) {
    diags->Warning("train.memory", text + ": close to capacity", where, hint);
  }
}

void CheckStageFit(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed_spec,
                   const std::string& target_name, const std::string& accelerator,
                   double capacity_gb, Diagnostics* diags) {
  if (!spec.contains("model") || !spec["model"].contains("architecture") ||
      !spec["model"]["architecture"].contains("hiddenSize") || !spec.contains("stages")) {
    return;
  }
  const auto& stages = spec["stages"];
  if (!typed_spec.stages) return;  // a spec Prepare repaired: reported
  const Stages& typed = *typed_spec.stages;
  const double params = CountParameters(spec["model"]["architecture"]).total;
  const std::string target = "target " + target_name + ": ";
  // Weights alone above this share leave no room for activations, the KV
  // cache and the CUDA context.
  auto check = [&](const char* stage, const std::string& field, double weights_gb, int64_t gpus,
                   const std::string& what, const std::string& hint) {
    const double per_gpu = weights_gb / static_cast<double>(gpus);
    if (per_gpu <= kWarnFraction * capacity_gb) return;
    diags->Error(std::string(stage) + ".memory",
                 target + what + ": " + Fixed(per_gpu) + " GB of weights per GPU on " + accelerator +
                     " (" + Fixed(capacity_gb, 0) + " GB)",
                 // The field when the spec sets it, else the stage's key.
                 doc.map.Has("/spec/stages/" + std::string(stage) + "/" + field)
                     ? doc.map.Locate("/spec/stages/" + std::string(stage) + "/" + field, /*prefer_key=*/true)
                     : doc.map.Locate("/spec/stages/" + std::string(stage), /*prefer_key=*/true),
                 hint);
  };
  const double bf16_gb = params * 2 / 1e9;
  if (typed.evaluate) {
    const int64_t tp = typed.evaluate->tensor_parallel, pp = typed.evaluate->pipeline_parallel;
    check("evaluate", "tensorParallel", bf16_gb, std::max<int64_t>(1, tp * pp),
          "evaluation loads the model over tensorParallel x pipelineParallel = " + std::to_string(tp * pp) + " GPUs",
          "raise tensorParallel or pipelineParallel (at most 8 GPUs of one node)");
  }
  // The LoRA merge (NVIDIA/NeMo scripts/nlp_language_modeling/merge_lora_weights/
  // merge.py, trainer.devices=1) restores the whole base model on one GPU unless
  // mergeLora.gpus is 0 (trainer.accelerator=cpu). It is implied by a NeMo 1
  // LoRA run that evaluate or convert reads (libsonnet/stages/merge-lora.libsonnet).
  if (ImpliesLoraMerge(stages, typed_spec) && (!typed.merge_lora || typed.merge_lora->gpus > 0)) {
    const std::string hint = "set spec.stages.mergeLora: {gpus: 0, resources: {memory: ...}} (the merge on "
                             "CPU) with memory of at least four times " + Fixed(bf16_gb) + " GB";
    if (typed.merge_lora) {
      check("mergeLora", "gpus", bf16_gb, 1, "the LoRA merge restores the whole base model on one GPU", hint);
    } else if (bf16_gb > kWarnFraction * capacity_gb) {
      diags->Error("mergeLora.memory",
                   target + "the LoRA merge that evaluate and convert read restores the whole base model on "
                   "one GPU: " + Fixed(bf16_gb) + " GB of weights on " + accelerator + " (" +
                   Fixed(capacity_gb, 0) + " GB)",
                   doc.map.Locate("/spec/stages/train/mode"), hint);
    }
  }
  // A NeMo 2 export loads the model on the CPU; its one GPU is for
  // Transformer Engine (libsonnet/stages/convert.libsonnet).
  if (typed.convert && typed.convert->gpus > 0 && !ExportsNemo2(stages, typed_spec)) {
    // NVIDIA/NeMo scripts/checkpoint_converters/convert_llama_nemo_to_hf.py
    // restores the .nemo on one GPU unless --cpu-only; its docstring asks for
    // --cpu-only for 70B models.
    check("convert", "gpus", bf16_gb, 1, "the converter restores the whole .nemo on one GPU",
          "set gpus: 0 (the converter's --cpu-only) with resources.memory of at least twice " +
              Fixed(bf16_gb) + " GB");
  }
  if (typed.tensorrt_llm) {
    const std::string& quantization = typed.tensorrt_llm->quantization;
    const double bytes = quantization == "fp8" || quantization == "int8" ? 1 : 2;
    const int64_t tp = typed.tensorrt_llm->tensor_parallel;
    check("tensorrtLLM", "tensorParallel", params * bytes / 1e9, std::max<int64_t>(1, tp),
          "the engine (" + quantization + ") splits its weights over tensorParallel = " + std::to_string(tp) + " GPUs",
          "raise tensorParallel (the build and each Triton replica use that many GPUs) or quantize "
          "(fp8 on Hopper and Blackwell, int8)");
  }
  if (typed.serve && !typed.tensorrt_llm) {
    // An engine built elsewhere (serve.engine): its quantization is unknown,
    // so the smallest weights (1 byte) -- only a certain misfit is refused.
    // With a tensorrtLLM stage the engine check above covers serving (checks.cc
    // requires the same tensorParallel).
    const int64_t tp = typed.serve->triton.tensor_parallel;
    check("serve", "triton/tensorParallel", params / 1e9, std::max<int64_t>(1, tp),
          "a Triton replica loads the engine over tensorParallel = " + std::to_string(tp) +
              " GPUs (at least 1 byte per weight)",
          "serve an engine built with more tensor parallelism (serve.triton.tensorParallel)");
  }
}

}  // namespace nemoc
