#include "normalizer.h"
#include "file_reader.h"

#include <type_traits>
#include <fstream>
#include <sstream>

#include "edit_distance.h"
#include "framework_check.h"

namespace nemoc {

namespace {

const char* const kArchitectureRequired[] = {
    "numLayers", "hiddenSize", "ffnHiddenSize", "numAttentionHeads",
    "vocabSize", "maxPositionEmbeddings"};

// A volume with its mount path defaulted.
nlohmann::json ResolveVolume(const nlohmann::json& volume, const char* default_mount) {
  nlohmann::json out = volume;
  if (!out.contains("mountPath")) out["mountPath"] = default_mount;
  return out;
}

// `pointer` is where the storage was written (the target's own or spec.storage),
// so profiles can locate what they cannot mount.
nlohmann::json ResolveStorage(const nlohmann::json& storage, const std::string& pointer) {
  nlohmann::json out;
  out["pointer"] = pointer;
  out["results"] = ResolveVolume(storage["results"], "/results");
  // No data volume: datasets live on the results volume, under /results.
  out["data"] = storage.contains("data") ? ResolveVolume(storage["data"], "/data")
                                         : out["results"];
  out["separateData"] = storage.contains("data");
  return out;
}

std::string ImageName(const nlohmann::json& image) {
  return image.value("repository", "") + ":" + image.value("tag", "");
}

// Two images run one TensorRT-LLM release: NGC tritonserver tags name theirs
// by the container release (YY.MM: 24.07 ships TensorRT-LLM 0.11, 25.01 ships
// 0.17; libsonnet/triton_templates.json tritonReleases), so two such tags of
// one YY.MM agree whatever their suffix; any other image is the same image.
bool SameTensorRtLlmRelease(const nlohmann::json& a, const nlohmann::json& b) {
  const auto ngc_release = [](const nlohmann::json& image) {
    const std::string repository = image.value("repository", "");
    return repository == "nvcr.io/nvidia/tritonserver" ? TritonRelease(repository, image.value("tag", "")) : 0;
  };
  const int ra = ngc_release(a), rb = ngc_release(b);
  if (ra != 0 && rb != 0) return ra == rb;
  return ImageName(a) == ImageName(b);
}

}  // namespace

bool ModelCatalog::Load(const std::string& path, ModelCatalog* catalog, std::string* err,
                        FileReader* reader) {
  std::string text, read_err;
  if (!(reader != nullptr ? *reader : RealFiles()).Read(path, kMaxTableBytes, &text, &read_err)) {
    *err = "cannot read model catalog: " + read_err;
    return false;
  }
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.contains("models") || !parsed["models"].is_object()) {
    *err = "model catalog " + path + " is not valid (expected {\"models\": {...}})";
    return false;
  }
  catalog->models_ = std::move(parsed["models"]);
  if (parsed.contains("converters") && parsed["converters"].is_object()) {
    catalog->converters_ = std::move(parsed["converters"]);
  }
  return true;
}

nlohmann::json ModelCatalog::Converters(const std::string& family) const {
  auto it = converters_.find(family);
  return it != converters_.end() && it->is_object() ? *it : nlohmann::json::object();
}

const nlohmann::json* ModelCatalog::Find(const std::string& preset) const {
  auto it = models_.find(preset);
  return it == models_.end() ? nullptr : &*it;
}

std::vector<std::string> ModelCatalog::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, _] : models_.items()) names.push_back(name);
  return names;
}

std::vector<std::string> TrainingStages(const nlohmann::json& stages) {
  std::vector<std::string> keys;
  if (!stages.is_object()) return keys;
  for (const char* key : {"pretrain", "train"}) {
    if (stages.contains(key) && stages[key].is_object()) keys.emplace_back(key);
  }
  return keys;
}

TrainSizes ComputeTrainSizes(const nlohmann::json& train) {
  TrainSizes s;
  s.nodes = train.value("nodes", 1);
  s.gpus_per_node = train.value("gpusPerNode", 8);
  s.world_size = s.nodes * s.gpus_per_node;
  const nlohmann::json parallelism = train.value("parallelism", nlohmann::json::object());
  s.tensor = parallelism.value("tensor", 1);
  s.pipeline = parallelism.value("pipeline", 1);
  s.context = parallelism.value("context", 1);
  s.expert = parallelism.value("expert", 1);
  s.virtual_pipeline = parallelism.value("virtualPipeline", 0);
  s.model_parallel = s.tensor * s.pipeline * s.context;
  s.data_parallel = s.model_parallel > 0 && s.world_size % s.model_parallel == 0
                        ? s.world_size / s.model_parallel
                        : 0;
  return s;
}

TrainSizes ComputeTrainSizes(const TrainingStage& train) {
  TrainSizes s;
  s.nodes = train.nodes;
  s.gpus_per_node = train.gpus_per_node;
  s.world_size = s.nodes * s.gpus_per_node;
  s.tensor = train.parallelism.tensor;
  s.pipeline = train.parallelism.pipeline;
  s.context = train.parallelism.context;
  s.expert = train.parallelism.expert;
  s.virtual_pipeline = train.parallelism.virtual_pipeline.value_or(0);
  s.model_parallel = s.tensor * s.pipeline * s.context;
  s.data_parallel = s.model_parallel > 0 && s.world_size % s.model_parallel == 0 ? s.world_size / s.model_parallel : 0;
  return s;
}

TypedSpec ReadTypedSpec(const nlohmann::json& spec) {
  TypedSpec typed;
  if (!spec.is_object()) {
    typed.error = "/spec: expected an object";
    return typed;
  }
  auto note = [&](const std::string& err) {
    if (typed.error.empty()) typed.error = err;
  };
  std::string err;
  // One part of the spec the contract requires, whole (spec_types.h).
  auto read = [&](const char* key, auto* part) {
    const std::string at = std::string("/spec/") + key;
    if (!spec.contains(key)) return note(at + ": expected present (the contract requires it)");
    typename std::remove_reference_t<decltype(*part)>::value_type value;
    if (ReadSpec(spec[key], &value, &err, at)) {
      *part = std::move(value);
    } else {
      note(err);
    }
  };
  read("stages", &typed.stages);
  if (spec.contains("stages")) {
    const nlohmann::json& stages = spec["stages"];
    if (stages.is_object()) {
      for (const char* key : {"pretrain", "train"}) {
        if (!stages.contains(key)) continue;
        if (TrainingStage stage; ReadSpec(stages[key], &stage, &err, "/spec/stages/" + std::string(key))) {
          typed.training.emplace(key, std::move(stage));
        } else {
          note(err);
        }
      }
    }
  }
  if (spec.contains("targets") && spec["targets"].is_array()) {
    const nlohmann::json& targets = spec["targets"];
    for (size_t i = 0; i < targets.size(); ++i) {
      if (Target target; ReadSpec(targets[i], &target, &err, "/spec/targets/" + std::to_string(i))) {
        typed.targets.emplace_back(std::move(target));
      } else {
        typed.targets.emplace_back();
        note(err);
      }
    }
  } else {
    note("/spec/targets: expected an array (the contract requires it)");
  }
  read("monitoring", &typed.monitoring);
  read("model", &typed.model);
  return typed;
}

std::vector<std::string> TypedSpec::TrainingKeys() const {
  std::vector<std::string> keys;
  for (const char* key : {"pretrain", "train"}) {
    if (training.count(key) != 0) keys.push_back(key);
  }
  return keys;
}

const TrainingStage* TypedSpec::Training(const std::string& key) const {
  const auto it = training.find(key);
  return it != training.end() ? &it->second : nullptr;
}

bool Normalize(const Document& doc, const InputSchema& schema,
               const ModelCatalog& catalog, nlohmann::json* normalized,
               Diagnostics* diags) {
  const size_t errors_before = diags->error_count();
  nlohmann::json out = doc.root;
  // Defaults live in the input schema (issue #48 item 4): a field's default,
  // and {} or [] for a sub-object or list whose absence means "none" or
  // "every default" (parallelism, optimizer, checkpoint, monitoring,
  // serviceAccount, each engine's settings, labels, annotations, env...) --
  // FillDefaults creates it and fills what it holds. What follows here is
  // what depends on other values: a mode's learning rate and adapter, the
  // preset, stage images, derived sizes, resolved storage.
  for (const std::string& key : TrainingStages(out["spec"]["stages"])) {
    nlohmann::json& train = out["spec"]["stages"][key];
    if (train.value("mode", "") == "lora" && !train.contains("peft")) {
      train["peft"] = nlohmann::json::object();
    }
    // Fine-tuning starts from a trained model: its learning rate is far below
    // pretraining's (the schema default, 3e-4), and decays to 0. NeMo 2's
    // recipes: full SFT 5e-6, LoRA 1e-4 (NVIDIA/NeMo v2.4.0
    // nemo/collections/llm/recipes/llama31_70b.py:313, :324), min_lr 0
    // (recipes/finetune_default.py:88). field-review.md A19.
    const std::string mode = train.value("mode", "");
    if (mode == "sft" || mode == "lora") {
      if (!train.contains("optimizer")) train["optimizer"] = nlohmann::json::object();
      nlohmann::json& optimizer = train["optimizer"];
      if (optimizer.is_object() && !optimizer.contains("lr")) optimizer["lr"] = mode == "sft" ? 5e-6 : 1e-4;
      if (optimizer.is_object() && !optimizer.contains("minLr")) optimizer["minLr"] = 0.0;
    }
  }
  schema.FillDefaults(&out);
  nlohmann::json& spec = out["spec"];
  const std::string project = out["metadata"]["name"].get<std::string>();
  if (!spec["serviceAccount"].contains("name")) {
    spec["serviceAccount"]["name"] = project + "-workload";
  }

  // Model: preset from the catalog, explicit architecture fields on top.
  nlohmann::json& model = spec["model"];
  nlohmann::json architecture = nlohmann::json::object();
  if (model.contains("preset")) {
    const std::string preset = model["preset"].get<std::string>();
    const nlohmann::json* entry = catalog.Find(preset);
    if (entry == nullptr) {
      std::string suggestion = SuggestClosest(preset, catalog.Names());
      std::string names;
      for (const auto& n : catalog.Names()) names += (names.empty() ? "" : ", ") + n;
      diags->Error("spec.unknown-model", "unknown model preset '" + preset + "'",
                   doc.map.Locate("/spec/model/preset"),
                   suggestion.empty() ? "known presets: " + names
                                      : "did you mean '" + suggestion + "'?");
    } else {
      architecture = (*entry)["architecture"];
      model["family"] = (*entry)["family"];
      model["converters"] = catalog.Converters((*entry)["family"].get<std::string>());
      model["huggingface"] = (*entry)["huggingface"];
      model["defaultSeqLength"] = (*entry)["seqLength"];
      if (entry->contains("nemo2")) model["nemo2"] = (*entry)["nemo2"];
      // The preset's Hugging Face repository is its tokenizer, unless the
      // catalog says where the tokenizer comes from instead (a preset whose
      // repository has no tokenizer Hugging Face can load, field review A28):
      // then there is no default, and a stage that reads the tokenizer is
      // refused below.
      if (!model.contains("tokenizer") && !entry->contains("tokenizer")) {
        model["tokenizer"] = {{"library", "huggingface"}, {"type", (*entry)["huggingface"]}};
      }
    }
  } else if (!model.contains("architecture")) {
    diags->Error("spec.missing-field", "spec.model: set a preset or an architecture",
                 doc.map.Locate("/spec/model", /*prefer_key=*/true),
                 "known presets: see libsonnet/models.json, e.g. llama3.1-8b");
  }
  if (model.contains("architecture")) {
    for (const auto& [key, value] : model["architecture"].items()) architecture[key] = value;
  }
  if (!architecture.empty() || model.contains("architecture")) {
    std::string missing;
    for (const char* field : kArchitectureRequired) {
      if (!architecture.contains(field)) missing += (missing.empty() ? "" : ", ") + std::string(field);
    }
    if (!missing.empty()) {
      diags->Error("spec.missing-field",
                   "spec.model.architecture: missing " + missing +
                       " (no preset provides them)",
                   doc.map.Locate("/spec/model/architecture", /*prefer_key=*/true));
    }
    if (!architecture.contains("numQueryGroups") && architecture.contains("numAttentionHeads")) {
      architecture["numQueryGroups"] = architecture["numAttentionHeads"];
    }
    const nlohmann::json architecture_defaults = {{"normalization", "rmsnorm"},
                                                  {"activation", "fast-swiglu"},
                                                  {"positionEmbedding", "rope"},
                                                  {"rotaryBase", 10000},
                                                  {"shareEmbeddings", false}};
    for (const auto& [key, value] : architecture_defaults.items()) {
      if (!architecture.contains(key)) architecture[key] = value;
    }
  }
  model["architecture"] = architecture;
  if (!model.contains("converters")) model["converters"] = nlohmann::json::object();
  if (!model.contains("tokenizer") && !model.contains("preset")) {
    diags->Error("spec.missing-field",
                 "spec.model: a tokenizer is required when no preset is given",
                 doc.map.Locate("/spec/model", /*prefer_key=*/true),
                 "e.g. tokenizer: {library: huggingface, type: meta-llama/Llama-3.1-8B}");
  }

  // Stages: images default to spec.image (Triton's image is a schema
  // default); train gets its derived sizes.
  nlohmann::json& stages = spec["stages"];
  for (auto& [name, stage] : stages.items()) {
    if (name != "serve" && stage.is_object() && !stage.contains("image")) stage["image"] = spec["image"];
  }
  // The preflight tests the NCCL that training uses: that of the training
  // stage on the most nodes, whose nodes it tests (the first on a tie, as
  // libsonnet/stages/chain.libsonnet widest()).
  const std::vector<std::string> training = TrainingStages(stages);
  if (stages.contains("ncclTest") && !training.empty() &&
      !doc.root["spec"]["stages"]["ncclTest"].contains("image")) {
    std::string widest = training.front();
    for (const std::string& key : training) {
      if (stages[key].value("nodes", 1) > stages[widest].value("nodes", 1)) widest = key;
    }
    stages["ncclTest"]["image"] = stages[widest]["image"];
  }
  // Evaluation loads the checkpoint with the parallelism it was trained with.
  if (stages.contains("evaluate")) {
    nlohmann::json& evaluate = stages["evaluate"];
    const nlohmann::json parallelism = stages.contains("train")
                                           ? stages["train"].value("parallelism", nlohmann::json::object())
                                           : nlohmann::json::object();
    // After NeMo 2 training the model is served in-framework, which fails
    // with pipeline parallelism (libsonnet/stages/evaluate.libsonnet): one
    // pipeline stage by default.
    const bool nemo2 = !evaluate.contains("checkpoint") && stages.contains("train") &&
                       stages["train"].value("framework", "nemo1") == "nemo2";
    if (!evaluate.contains("tensorParallel")) evaluate["tensorParallel"] = parallelism.value("tensor", 1);
    if (!evaluate.contains("pipelineParallel")) evaluate["pipelineParallel"] = nemo2 ? 1 : parallelism.value("pipeline", 1);
    // The Job's harness decides the default task: the launcher's adapter has
    // hellaswag; NeMo 2's Evals Factory has no hellaswag completions config
    // (libsonnet/stages/evaluate.libsonnet launcherTasks, nemo2Tasks).
    if (!evaluate.contains("tasks")) evaluate["tasks"] = nlohmann::json::array({nemo2 ? "mmlu" : "hellaswag"});
  }
  // One TensorRT-LLM release per engine (field-review.md A26, issue #42 item 2):
  // a serialized engine loads only in the TensorRT-LLM release that built it,
  // so the Job that builds it and the Triton that serves it run one release.
  // The one written follows into the other (the schema default, nemoc's newest
  // tested tritonserver release, only when neither is written); both written
  // must agree, or the spec is refused at the server's image.
  if (stages.contains("tensorrtLLM") && stages.contains("serve")) {
    const nlohmann::json& raw = doc.root["spec"]["stages"];
    const bool engine_written = raw["tensorrtLLM"].is_object() && raw["tensorrtLLM"].contains("image");
    const bool serve_written = raw["serve"].is_object() && raw["serve"].value("triton", nlohmann::json::object()).contains("image");
    nlohmann::json& engine_image = stages["tensorrtLLM"]["image"];
    nlohmann::json& serve_image = stages["serve"]["triton"]["image"];
    if (engine_written && !serve_written) {
      serve_image = engine_image;
    } else if (serve_written && !engine_written) {
      engine_image = serve_image;
    } else if (engine_written && serve_written && !SameTensorRtLlmRelease(engine_image, serve_image)) {
      const std::string pointer = "/spec/stages/serve/triton/image";
      diags->Error("spec.engine-release",
                   "spec.stages.serve.triton.image " + ImageName(serve_image) +
                       " is not the TensorRT-LLM release of spec.stages.tensorrtLLM.image " +
                       ImageName(engine_image) + ", which builds the engine: an engine loads only in the "
                       "TensorRT-LLM release that built it",
                   doc.map.Locate(doc.map.Has(pointer + "/tag") ? pointer + "/tag" : pointer),
                   "set one of the two images (the other follows it), or both to one release");
    }
  }
  // Triton serves the engine the tensorrtLLM stage builds, with its limits.
  if (stages.contains("serve")) {
    nlohmann::json& triton = stages["serve"]["triton"];
    const nlohmann::json engine = stages.value("tensorrtLLM", nlohmann::json::object());
    if (!triton.contains("maxBatchSize")) triton["maxBatchSize"] = engine.value("maxBatchSize", 64);
    if (!triton.contains("tensorParallel")) triton["tensorParallel"] = engine.value("tensorParallel", 1);
  }
  for (const std::string& key : TrainingStages(spec["stages"])) {
    nlohmann::json& train = spec["stages"][key];
    if (!train.contains("seqLength")) {
      train["seqLength"] = model.value("defaultSeqLength",
                                       architecture.value("maxPositionEmbeddings", 4096));
    }
    TrainSizes sizes = ComputeTrainSizes(train);
    train["derived"] = {{"worldSize", sizes.world_size},
                        {"modelParallel", sizes.model_parallel},
                        {"dataParallel", sizes.data_parallel}};
  }

  // A preset without a default tokenizer (libsonnet/models.json "tokenizer"):
  // the stages that build one from spec.model.tokenizer need it written. They
  // are data preparation (stages/data-prep.libsonnet), NeMo 1 pretraining
  // (its config's model.tokenizer, nemo/hydra.libsonnet) and NeMo 2
  // pretraining on prepared data (PreTrainingDataModule's tokenizer,
  // nemo/nemo2.libsonnet); fine-tuning restores the checkpoint's own.
  const nlohmann::json* preset_entry =
      model.contains("preset") ? catalog.Find(model["preset"].get<std::string>()) : nullptr;
  if (preset_entry != nullptr && preset_entry->contains("tokenizer") && !model.contains("tokenizer")) {
    std::string reader;
    if (spec["stages"].contains("dataPrep")) reader = "spec.stages.dataPrep tokenizes with it";
    for (const std::string& key : TrainingStages(spec["stages"])) {
      const nlohmann::json& train = spec["stages"][key];
      if (!reader.empty() || train.value("mode", "") != "pretrain") continue;
      const nlohmann::json data = train.value("data", nlohmann::json::object());
      if (train.value("framework", "nemo1") != "nemo2") {
        reader = "spec.stages." + key + " (NeMo 1 pretraining) builds it";
      } else if (data.contains("prefixes") || data.contains("fromDataPrep")) {
        reader = "spec.stages." + key + " (NeMo 2 pretraining on prepared data) builds it";
      }
    }
    if (!reader.empty()) {
      const nlohmann::json& about = (*preset_entry)["tokenizer"];
      diags->Error("spec.no-tokenizer",
                   "preset " + model["preset"].get<std::string>() + " has no tokenizer nemoc can default to (" +
                       about.value("why", std::string("libsonnet/models.json")) + ") and " + reader,
                   doc.map.Locate("/spec/model/preset"),
                   "set spec.model.tokenizer: " + about.value("use", std::string("the model's tokenizer")));
    }
  }

  // Targets: storage and node selection resolved, so profiles read one place.
  for (size_t i = 0; i < spec["targets"].size(); ++i) {
    nlohmann::json& target = spec["targets"][i];
    const bool own = target.contains("storage");
    target["storage"] = ResolveStorage(
        own ? target["storage"] : spec["storage"],
        own ? "/spec/targets/" + std::to_string(i) + "/storage" : std::string("/spec/storage"));
  }
  *normalized = std::move(out);
  return diags->error_count() == errors_before;
}

}  // namespace nemoc
