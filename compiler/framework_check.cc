#include "framework_check.h"

#include <regex>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "nemo_releases.h"
#include "normalizer.h"

namespace nemoc {

namespace {

std::string Release(int release) {
  const int month = release % 100;
  return std::to_string(release / 100) + "." + (month < 10 ? "0" : "") + std::to_string(month);
}

// The pointer of the image tag the stage uses: its own image, else spec.image.
std::string ImageTagPointer(const Document& doc, const std::string& key) {
  const std::string own = "/spec/stages/" + key + "/image/tag";
  return doc.map.Has(own) ? own : std::string("/spec/image/tag");
}

// Points at framework when the user wrote it, else at what else decides.
std::string FrameworkOr(const Document& doc, const std::string& key, const std::string& fallback) {
  const std::string framework = "/spec/stages/" + key + "/framework";
  return doc.map.Has(framework) ? framework : fallback;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

void CheckNemo2(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed, const std::string& key,
                int release, const std::string& tag, Diagnostics* diags) {
  if (typed.Training(key) == nullptr || !typed.model) return;
  const TrainingStage& train = *typed.Training(key);
  const Model& model = *typed.model;
  const std::string mode = train.mode;
  const std::string base = "/spec/stages/" + key;

  if (!model.nemo2) {
    const bool preset = model.preset.has_value();
    diags->Error("spec.no-nemo2-recipe",
                 preset ? "model " + *model.preset +
                              " has no NeMo 2 recipe (framework: nemo2)"
                        : "framework nemo2 starts from a NeMo 2 recipe, and a model given by its "
                          "architecture has none",
                 doc.map.Locate(preset ? "/spec/model/preset" : "/spec/model", !preset),
                 "use framework: nemo1, or a preset with a NeMo 2 recipe (the models with a "
                 "\"nemo2\" entry in libsonnet/models.json)");
  } else if (release > 0) {
    const int since = ReleaseNumber(model.nemo2->since);
    if (release < since) {
      diags->Error("spec.framework-image",
                   "NeMo 2 recipe " + model.nemo2->recipe +
                       " needs a NeMo " + Release(since) + " or later container; image tag " + tag +
                       " is NeMo " + Release(release),
                   doc.map.Locate(ImageTagPointer(doc, key)),
                   "use a newer image, or framework: nemo1");
    }
  }

  // spec.model.source feeds the chain's first training stage (fine-tuning,
  // or continued pretraining through AutoResume's restore_config).
  const ModelSource source = model.source.value_or(ModelSource{});
  const bool first = key != "train" || !spec["stages"].contains("pretrain");
  if (first && source.nemo) {
    const std::string& path = *source.nemo;
    if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".nemo") == 0) {
      diags->Error("spec.framework-source",
                   "framework nemo2 restores a NeMo 2 checkpoint directory, not the NeMo 1 file " +
                       path,
                   doc.map.Locate("/spec/model/source/nemo"),
                   "convert it with NeMo's scripts/checkpoint_converters/convert_nemo1_to_nemo2.py "
                   "(or import HuggingFace weights with llm.import_ckpt) and give the directory");
    }
  }
  // NeMo 2 fine-tuning from model.source.huggingface: the import stage runs
  // llm.import_ckpt into a checkpoint directory the recipe restores
  // (libsonnet/stages/import-model.libsonnet, field-review.md A17).

  {
    const TrainData& data = train.data;
    // Pretraining on Megatron indexed data (data.prefixes, data.fromDataPrep):
    // llm.PreTrainingDataModule gets the model's tokenizer, which
    // libsonnet/nemo/nemo2.libsonnet (tokenizers) writes for the Hugging Face
    // and SentencePiece libraries only.
    // (Without a tokenizer at all the normalizer has said what to write.)
    const bool prepared = (data.prefixes || data.from_data_prep) && model.tokenizer;
    const Tokenizer tokenizer = model.tokenizer.value_or(Tokenizer{});
    const std::string& library = tokenizer.library;
    const std::string tokenizer_pointer =
        doc.map.Has("/spec/model/tokenizer") ? "/spec/model/tokenizer" : "/spec/model";
    if (prepared && library != "huggingface" && library != "sentencepiece") {
      diags->Error("spec.not-supported-yet",
                   "framework nemo2 pretraining on prepared data with tokenizer library '" + library +
                       "' is not supported yet",
                   doc.map.Locate(tokenizer_pointer, /*prefer_key=*/true),
                   "use the model's Hugging Face tokenizer (library huggingface, type <model id or "
                   "directory>) or a SentencePiece model (library sentencepiece, model <file>), "
                   "as the data was prepared with; or framework: nemo1");
    } else if (prepared && !(library == "huggingface" ? tokenizer.type : tokenizer.model)) {
      diags->Error("spec.framework-data",
                   "framework nemo2 pretraining on prepared data needs the tokenizer's " +
                       std::string(library == "huggingface" ? "type (model id or directory)" : "model file"),
                   doc.map.Locate(tokenizer_pointer, /*prefer_key=*/true));
    }
    if (data.jsonl) {
      // llm.FineTuningDataModule reads <dataset_root>/training.jsonl and validation.jsonl.
      const TrainData::Jsonl& jsonl = *data.jsonl;
      const std::string train_file = jsonl.train;
      if (Basename(train_file) != "training.jsonl") {
        diags->Error("spec.framework-data",
                     "framework nemo2 reads fine-tuning data from <dir>/training.jsonl, not " +
                         train_file,
                     doc.map.Locate(base + "/data/jsonl/train"),
                     "name the file training.jsonl (and the validation file validation.jsonl) in "
                     "one directory");
      }
      if (jsonl.validation) {
        const std::string validation = *jsonl.validation;
        if (Basename(validation) != "validation.jsonl" || Dirname(validation) != Dirname(train_file)) {
          diags->Error("spec.framework-data",
                       "framework nemo2 reads validation data from " +
                           (Dirname(train_file).empty() ? std::string() : Dirname(train_file) + "/") +
                           "validation.jsonl (beside training.jsonl), not " + validation,
                       doc.map.Locate(base + "/data/jsonl/validation"));
        }
      } else if (train.val_check_interval) {
        diags->Error("spec.framework-data",
                     "validation every " + std::to_string(*train.val_check_interval) +
                         " steps needs data.jsonl.validation",
                     doc.map.Locate(base + "/valCheckInterval", /*prefer_key=*/true));
      }
    }
  }

  const std::vector<std::string>& overrides = train.overrides;
  for (size_t i = 0; i < overrides.size(); ++i) {
    const std::string& o = overrides[i];
    if (!o.empty() && (o[0] == '+' || o[0] == '~')) {
      diags->Error("spec.framework-override",
                   "override '" + o + "' uses Hydra syntax; framework nemo2 takes NeMo-Run "
                   "overrides key=value (e.g. trainer.log_every_n_steps=1)",
                   doc.map.Locate(base + "/overrides/" + std::to_string(i)));
    }
  }
}

}  // namespace

int NemoRelease(const std::string& repository, const std::string& tag) {
  static const std::regex embedded("nemo(\\d{2})\\.(\\d{2})(?![0-9])");
  static const std::regex ngc("^(\\d{2})\\.(\\d{2})(?![0-9]).*");
  std::smatch m;
  const size_t slash = repository.rfind('/');
  const std::string name = slash == std::string::npos ? repository : repository.substr(slash + 1);
  if (name == "nemo" && std::regex_match(tag, m, ngc)) return std::stoi(m[1]) * 100 + std::stoi(m[2]);
  if (std::regex_search(tag, m, embedded)) return std::stoi(m[1]) * 100 + std::stoi(m[2]);
  return 0;
}

int RecipeCountedSplitLayers(const TypedSpec& typed, const std::string& key) {
  const TrainingStage* stage = typed.Training(key);
  if (stage == nullptr || !typed.model) return 0;
  const TrainingStage& train = *stage;
  const Model& model = *typed.model;
  if (train.framework != "nemo2" || train.mode != "pretrain" || !model.nemo2 ||
      !model.nemo2->account_for_embedding_and_loss_since) {
    return 0;
  }
  const int release = NemoRelease(train.image.repository, train.image.tag);
  const int since = ReleaseNumber(*model.nemo2->account_for_embedding_and_loss_since);
  // An image whose release is unknown counts as newest (versions.libsonnet atLeast).
  return release == 0 || release >= since ? 2 : 0;
}

namespace {

// "8.9" -> 89; 0 when absent or malformed.
int ComputeCapability(const nlohmann::json& gpu) {
  static const std::regex pattern("^(\\d+)\\.(\\d)$");
  std::smatch m;
  const std::string cc = gpu.value("computeCapability", "");
  return std::regex_match(cc, m, pattern) ? std::stoi(m[1]) * 10 + std::stoi(m[2]) : 0;
}

}  // namespace

int TritonRelease(const std::string& repository, const std::string& tag) {
  static const std::regex ngc("^(\\d{2})\\.(\\d{2})(?![0-9]).*");
  std::smatch m;
  if (Basename(repository) != "tritonserver" || !std::regex_match(tag, m, ngc)) return 0;
  return std::stoi(m[1]) * 100 + std::stoi(m[2]);
}

void CheckAcceleratorSupport(const Document& doc, const TypedSpec& typed,
                             const std::string& target_name, const std::string& accelerator,
                             const nlohmann::json& gpu, Diagnostics* diags) {
  if (!typed.stages) return;  // a spec Prepare repaired: reported
  const Stages& stages = *typed.stages;
  const std::string target = "target " + target_name + ": ";
  const std::string gpu_name = accelerator + " (" + gpu.value("model", accelerator) + ", compute capability " +
                               gpu.value("computeCapability", "unknown") + ")";
  // FP8 (Transformer Engine training, TensorRT-LLM fp8 quantization) needs
  // compute capability 8.9 or higher: Ada, Hopper, Blackwell; A100 is 8.0.
  constexpr int kFp8ComputeCapability = 89;
  const int cc = ComputeCapability(gpu);
  if (cc > 0 && cc < kFp8ComputeCapability) {
    for (const std::string& key : typed.TrainingKeys()) {
      if (typed.Training(key)->precision != "fp8") continue;
      diags->Error("target.fp8", target + "fp8 precision needs compute capability 8.9 or higher; " +
                                     gpu_name + " has no FP8",
                   doc.map.Locate("/spec/stages/" + key + "/precision"),
                   "use precision: bf16 on this target, or a target with Hopper or Blackwell GPUs");
    }
    if (stages.tensorrt_llm && stages.tensorrt_llm->quantization == "fp8") {
      diags->Error("target.fp8", target + "fp8 quantization needs compute capability 8.9 or higher; " +
                                     gpu_name + " has no FP8",
                   doc.map.Locate("/spec/stages/tensorrtLLM/quantization"),
                   "use quantization: int8 or none on this target, or a target with Hopper or "
                   "Blackwell GPUs");
    }
  }
  // Containers built before the accelerator's CUDA support.
  const auto& minimum = gpu.value("minimumRelease", nlohmann::json::object());
  std::set<std::string> reported;
  if (minimum.contains("nemo")) {
    const int since = ReleaseNumber(minimum["nemo"].get<std::string>());
    const std::pair<const char*, const Image*> images[] = {
        {"ncclTest", stages.nccl_test ? &stages.nccl_test->image : nullptr},
        {"pretrain", stages.pretrain ? &stages.pretrain->image : nullptr},
        {"train", stages.train ? &stages.train->image : nullptr},
        {"evaluate", stages.evaluate ? &stages.evaluate->image : nullptr},
        {"convert", stages.convert ? &stages.convert->image : nullptr}};
    for (const auto& [name, image] : images) {
      if (image == nullptr) continue;
      const std::string& tag = image->tag;
      const int release = NemoRelease(image->repository, tag);
      const std::string own = std::string("/spec/stages/") + name + "/image/tag";
      const std::string pointer = doc.map.Has(own) ? own : std::string("/spec/image/tag");
      if (release > 0 && release < since && reported.insert(pointer).second) {
        diags->Error("target.image", target + accelerator + " needs a NeMo " + Release(since) +
                                         " or later container; image tag " + tag + " is NeMo " +
                                         Release(release),
                     doc.map.Locate(pointer),
                     "use a NeMo " + Release(since) + " or later image (built with CUDA for this GPU)");
      }
    }
  }
  if (minimum.contains("tritonserver")) {
    const int since = ReleaseNumber(minimum["tritonserver"].get<std::string>());
    const std::tuple<const char*, std::string, const Image*> triton[] = {
        {"tensorrtLLM", "/spec/stages/tensorrtLLM", stages.tensorrt_llm ? &stages.tensorrt_llm->image : nullptr},
        {"serve", "/spec/stages/serve/triton", stages.serve ? &stages.serve->triton.image : nullptr}};
    for (const auto& [name, base, image] : triton) {
      if (image == nullptr) continue;
      const std::string& tag = image->tag;
      const int release = TritonRelease(image->repository, tag);
      if (release == 0 || release >= since) continue;
      const bool written = doc.map.Has(base + "/image/tag");
      diags->Error("target.image", target + accelerator + " needs a Triton " + Release(since) +
                                       " or later container; " + (written ? "" : "the default ") +
                                       "image tag " + tag + " is Triton " + Release(release),
                   doc.map.Locate(written ? base + "/image/tag" : std::string("/spec/stages/") + name,
                                  /*prefer_key=*/!written),
                   std::string("set ") + PointerToDotted(base) + ".image to an nvcr.io/nvidia/tritonserver:" +
                       Release(since) + "-trtllm-python-py3 or later image");
    }
  }
}

void CheckTrainFramework(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed,
                         const std::string& key, const NemoReleases& releases, Diagnostics* diags) {
  const int first_llama31 = releases.nemo1_scale_positional_embedding_since;
  const int last_nemo1 = releases.last_nemo1;
  if (typed.Training(key) == nullptr) return;
  const TrainingStage& train = *typed.Training(key);
  const std::string& framework = train.framework;
  const std::string& tag = train.image.tag;
  const int release = NemoRelease(train.image.repository, tag);
  if (framework == "nemo2") {
    CheckNemo2(doc, spec, typed, key, release, tag, diags);
  } else if (release > 0 && release < first_llama31 &&
             spec["model"].value("preset", "").rfind("llama3.1-", 0) == 0) {
    // Llama 3.1 needs its RoPE frequency scaling: NeMo 1 reads
    // model.scale_positional_embedding from NVIDIA/NeMo v2.0.0 (NeMo 24.09)
    // on (megatron_gpt_model.py:182); r2.0.0rc1 (24.07) has no such key and
    // would train with unscaled RoPE (field-review.md A8, decision F9).
    diags->Error("spec.framework-image",
                 "Llama 3.1 needs RoPE scaling (model.scale_positional_embedding), which NeMo 1 reads "
                 "from NeMo " + Release(first_llama31) + " on; image tag " + tag + " is NeMo " +
                     Release(release),
                 doc.map.Locate(ImageTagPointer(doc, key)),
                 "use a NeMo " + Release(first_llama31) +
                     " or later image (25.02 or later on Blackwell GPUs)");
  } else if (release > last_nemo1) {
    diags->Error("spec.framework-image",
                 "framework nemo1 runs NeMo 1 Hydra scripts (megatron_gpt_*.py), whose configuration nemoc "
                 "knows up to NeMo " + Release(last_nemo1) + " (libsonnet/nemo/versions.json nemo1); image tag " +
                     tag + " is NeMo " + Release(release),
                 doc.map.Locate(FrameworkOr(doc, key, ImageTagPointer(doc, key))),
                 "set spec.stages." + key + ".framework: nemo2, or use a NeMo " +
                     Release(last_nemo1) + " or older image");
  }

  // NeMo 1 SFT/LoRA builds the validation dataset on every fit, whatever
  // limit_val_batches says (NVIDIA/NeMo r2.0.0rc1
  // nemo/collections/nlp/models/language_modeling/megatron_gpt_sft_model.py:803,
  // v2.4.0 :1015), and its file_names must be a list of JSONL files (r2.0.0rc1
  // :196, v2.4.0 :256): the base config's `file_names: ???` would fail there.
  const std::string& mode = train.mode;
  if (framework != "nemo2" && mode != "pretrain" && train.data.jsonl && !train.data.jsonl->validation) {
    diags->Error("spec.framework-data",
                 "framework nemo1 " + mode + " needs validation data: NeMo's SFT model builds "
                 "model.data.validation_ds on every run and reads its JSONL files",
                 doc.map.Locate("/spec/stages/" + key + "/data/jsonl", /*prefer_key=*/true),
                 "add data.jsonl.validation (a JSONL file in the training file's format, relative "
                 "to the data mount)");
  }
}

}  // namespace nemoc
