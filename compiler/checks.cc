#include "checks.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "check_registry.h"
#include "edit_distance.h"
#include "fit_check.h"
#include "framework_check.h"
#include "normalizer.h"

namespace nemoc {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// A Go duration the schema admits (#/definitions/duration: 30m, 1h30m,
// 1.5h) in seconds.
double GoDurationSeconds(const std::string& d) {
  static const std::map<std::string, double> kUnit = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},
                                                      {"s", 1},     {"m", 60},    {"h", 3600}};
  double total = 0;
  size_t i = 0;
  while (i < d.size()) {
    size_t j = i;
    while (j < d.size() && (std::isdigit(static_cast<unsigned char>(d[j])) || d[j] == '.')) ++j;
    size_t k = j;
    while (k < d.size() && !std::isdigit(static_cast<unsigned char>(d[k])) && d[k] != '.') ++k;
    const auto unit = kUnit.find(d.substr(j, k - j));
    if (j == i || unit == kUnit.end()) return 0;
    total += std::stod(d.substr(i, j - i)) * unit->second;
    i = k;
  }
  return total;
}

// Field review C18, decision F17: kustomize-controller v1.9.4 waits for a
// Kustomization's health checks inside the reconcile, holding one of its 4
// workers (main.go:113; internal/controller/kustomization_controller.go:
// 1059-1064) for up to spec.timeout. Stage Kustomizations poll instead
// (libsonnet/gitops.libsonnet): their timeout is gitops.defaultTimeout, at
// most 10 minutes; what bounds a stage's run is its workload's deadline.
void CheckFluxPolls(const Document& doc, const nlohmann::json& gitops, Diagnostics* diags) {
  // value(): CheckSpec also runs on a spec whose normalization failed (compiler.cc).
  const std::string timeout = gitops.value("defaultTimeout", std::string("1m"));
  if (GoDurationSeconds(timeout) <= 600) return;
  diags->Error("spec.flux-timeout",
               "spec.gitops.defaultTimeout " + timeout +
                   " is longer than 10m: kustomize-controller holds one of its 4 workers for the whole "
                   "health-check wait of every stage still running, so four waiting stages stop every "
                   "Kustomization on the cluster (kustomize-controller v1.9.4 main.go:113, "
                   "kustomization_controller.go:1059-1064)",
               doc.map.Locate("/spec/gitops/defaultTimeout"),
               "set it to 10m or less (default 1m): a stage still running is checked again after "
               "gitops.flux.retryInterval; bound a training's run with spec.stages.train.timeout");
}

// Stages that exist in the spec format but whose generators have not landed
// yet: refused loudly, never ignored.
// Points at the key for a whole section ("evaluate:"), at the value for a
// choice ("profile: eks-efa").
void NotSupportedYet(Diagnostics* diags, const Document& doc, const std::string& pointer,
                     const std::string& what, bool at_key = true) {
  diags->Error("spec.not-supported-yet", what + " is not supported yet",
               doc.map.Locate(pointer, at_key),
               "this part of the spec format is reserved; its generator has not landed in "
               "this version of nemoc");
}

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The path the kernel resolves (field review E25, decision F21): `/./etc`,
// `/usr//bin` and `/usr/./bin` are /etc and /usr/bin; rules compare this.
std::string NormalPath(const std::string& path) {
  return WithoutTrailingSlash(std::filesystem::path(path).lexically_normal().generic_string());
}

// True when `path` is `dir` or lies below it.
bool Within(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" || path.rfind(dir + "/", 0) == 0;
}

// A resolved storage's two volumes, by key.
std::array<std::pair<const char*, const ResolvedVolume*>, 2> Volumes(const ResolvedStorage& storage) {
  return {{{"results", &storage.results}, {"data", &storage.data}}};
}

// Mount paths that would hide what the pods need: nemoc's own mounts, the
// image's system directories and NeMo itself.
void CheckMountPaths(const Document& doc, const ResolvedStorage& storage,
                     const std::string& storage_base, std::set<std::string>* reported,
                     Diagnostics* diags) {
  static const char* const kKernel[] = {"/proc", "/sys", "/dev"};
  // Directories of the image a mount inside would mask (its tools and
  // libraries: /usr/bin, /usr/local/cuda) and the service-account token the
  // kubelet projects (E25).
  static const char* const kSystem[] = {"/bin", "/sbin", "/lib", "/lib64", "/usr", "/etc",
                                        "/var/run/secrets", "/run/secrets"};
  static const char* const kNeeded[] = {"/dev/shm", "/config", "/etc/nccl", "/usr/local/gib",
                                        "/opt/NeMo", "/bin", "/etc", "/lib", "/lib64", "/sbin",
                                        "/usr"};
  std::map<std::string, std::string> mounts;  // volume -> normalized mountPath
  for (const auto& [volume, resolved] : Volumes(storage)) {
    if (std::string(volume) == "data" && !storage.separate_data) continue;
    const std::string pointer = storage_base + "/" + volume + "/mountPath";
    const std::string path = NormalPath(resolved->mount_path);
    mounts[volume] = path;
    std::string problem;
    for (const char* dir : kKernel) {
      if (Within(path, dir)) problem = std::string("lies in ") + dir;
    }
    for (const char* dir : kSystem) {
      if (problem.empty() && Within(path, dir)) {
        problem = std::string("lies in ") + dir +
                  (std::string(dir).find("secrets") != std::string::npos ? " (the service-account token)"
                                                                         : " (the image's programs and libraries)");
      }
    }
    for (const char* dir : kNeeded) {
      if (problem.empty() && Within(dir, path)) problem = std::string("would hide ") + dir;
    }
    if (!problem.empty() && reported->insert(pointer).second) {
      diags->Error("spec.mount-path", PointerToDotted(storage_base) + "." + volume +
                                          ".mountPath: " + path + " " + problem,
                   doc.map.Locate(pointer), "mount shared storage at its own directory, e.g. /results");
    }
    if (resolved->host_path) {
      const std::string host = NormalPath(resolved->host_path->path);
      const std::string host_pointer = storage_base + "/" + volume + "/hostPath/path";
      // The node's system and the container runtimes' sockets and state (E25):
      // /run/containerd/containerd.sock or /var/lib/docker in a pod is the node.
      for (const char* dir : {"/", "/etc", "/proc", "/sys", "/dev", "/boot", "/root", "/var/lib/kubelet", "/var/run",
                              "/run", "/var/lib/docker", "/var/lib/containerd", "/var/lib/crio", "/usr", "/bin", "/sbin",
                              "/lib", "/lib64"}) {
        const bool bad = std::string(dir) == "/" ? host == "/" : Within(host, dir);
        if (bad && reported->insert(host_pointer).second) {
          diags->Error("spec.host-path", PointerToDotted(storage_base) + "." + volume +
                                             ".hostPath.path: " + host + " exposes the node's " +
                                             (host == "/" ? std::string("root filesystem") : dir),
                       doc.map.Locate(host_pointer));
        }
      }
    }
  }
  if (mounts.size() == 2 && (Within(mounts["results"], mounts["data"]) || Within(mounts["data"], mounts["results"]))) {
    // Point at a mountPath the user wrote (the other one may be a default).
    const std::string data_path = storage_base + "/data/mountPath";
    const std::string results_path = storage_base + "/results/mountPath";
    const std::string pointer = doc.map.Has(data_path)      ? data_path
                                : doc.map.Has(results_path) ? results_path
                                                            : storage_base + "/data";
    if (reported->insert(pointer).second) {
      diags->Error("spec.mount-path",
                   PointerToDotted(storage_base) + ": the results (" + mounts["results"] +
                       ") and data (" + mounts["data"] + ") mounts overlap",
                   doc.map.Locate(pointer), "give each volume its own directory");
    }
  }
}

void CheckTargets(const Document& doc, const TypedSpec& typed, Diagnostics* diags) {
  std::set<std::string> names;
  std::set<std::string> reported_storage;
  for (size_t i = 0; i < typed.targets.size(); ++i) {
    if (!typed.targets[i]) continue;  // a spec Prepare repaired: reported
    const Target& target = *typed.targets[i];
    const std::string base = "/spec/targets/" + std::to_string(i);
    const std::string& name = target.name;
    if (!names.insert(name).second) {
      diags->Error("spec.duplicate-target", "target name '" + name + "' is used twice",
                   doc.map.Locate(base + "/name"),
                   "every target writes its own directory out/<project>/<target>/");
    }
    // A profile's options on a target of another profile: InputSchema::Validate
    // (spec.wrong-profile, from the options' x-nemoc-profiles).
    const std::string storage_base =
        doc.map.Has(base + "/storage") ? base + "/storage" : std::string("/spec/storage");
    CheckMountPaths(doc, target.storage, storage_base, &reported_storage, diags);
    for (const auto& [volume, resolved] : Volumes(target.storage)) {
      const int backends = resolved->nfs.has_value() + resolved->pvc.has_value() + resolved->host_path.has_value() +
                           resolved->fsx_lustre.has_value() + resolved->s3.has_value() + resolved->gcs.has_value();
      // Targets sharing spec.storage report its problem once.
      if (backends != 1 && doc.map.Has(storage_base + "/" + volume) &&
          reported_storage.insert(storage_base + "/" + volume).second) {
        diags->Error("spec.storage-backend",
                     PointerToDotted(storage_base) + "." + volume +
                         ": set exactly one backend (nfs, pvc, hostPath, fsxLustre, s3 or gcs)",
                     doc.map.Locate(storage_base + "/" + volume, /*prefer_key=*/true));
      }
    }
  }
}

// libsonnet/models.json lists the checkpoint converters per model family.
bool HasConverter(const TypedSpec& typed, const char* direction) {
  if (!typed.model) return false;
  const Converters& converters = typed.model->converters;
  return std::string(direction) == "toHuggingface" ? converters.to_huggingface.has_value()
                                                   : converters.from_huggingface.has_value();
}

std::string FamilyText(const nlohmann::json& spec) {
  const std::string family = spec["model"].value("family", "");
  return family.empty() ? std::string("a model without a preset") : "the " + family + " family";
}

// Field review A23. A NeMo 2 run's readers take its newest *-last
// checkpoint directory. NeMo's ModelCheckpoint writes one at every
// every_n_train_steps save and, at the end of training, only when
// save_last and max_steps is not a multiple of an int val_check_interval
// (on_train_end, NVIDIA/NeMo nemo/lightning/pytorch/callbacks/model_checkpoint.py
// v2.1.0:281-292, v2.2.1/v2.3.0/v2.4.0:380-391). A maxSteps that is not a
// multiple of checkpoint.every then leaves the last steps out of every
// artifact (1100 steps, every 1000: the export holds step 1000). nemoc sets
// val_check_interval only when the spec does (the recipe's own otherwise),
// so it relies on the end save only for a valCheckInterval the spec sets.
// NeMo 1 needs no rule: its readers load the .nemo saved from the final
// weights (save_best_model: false, libsonnet/nemo/hydra.libsonnet).
void CheckFinalStepSaved(const Document& doc, const TrainingStage& stage, const std::string& key,
                         const std::string& readers, Diagnostics* diags) {
  if (stage.framework != "nemo2" || !stage.checkpoint.enabled || !stage.checkpoint.save_last) return;
  const int64_t steps = stage.max_steps, every = stage.checkpoint.every;
  if (every <= 0 || steps % every == 0) return;
  const int64_t validation = stage.val_check_interval.value_or(0);
  if (validation > 0 && steps % validation != 0) return;
  int64_t divisor = 1;
  for (int64_t d = std::min(every, steps); d >= 1; --d) {
    if (steps % d == 0) {
      divisor = d;
      break;
    }
  }
  const std::string base = "/spec/stages/" + key;
  const std::string pointer = doc.map.Has(base + "/checkpoint/every") ? base + "/checkpoint/every"
                              : doc.map.Has(base + "/maxSteps")       ? base + "/maxSteps"
                                                                      : base;
  diags->Error("spec.final-step-unsaved",
               "spec.stages." + key + ".maxSteps " + std::to_string(steps) + " is not a multiple of checkpoint.every " +
                   std::to_string(every) + ": NeMo 2 saves no checkpoint at step " + std::to_string(steps) +
                   (validation > 0 ? " (valCheckInterval " + std::to_string(validation) + " divides it)" : "") +
                   ", so " + readers + " would read step " + std::to_string(steps / every * every),
               doc.map.Locate(pointer, /*prefer_key=*/pointer == base),
               "set checkpoint.every to a divisor of maxSteps (e.g. " + std::to_string(divisor) +
                   ") or maxSteps to a multiple of it (e.g. " + std::to_string((steps / every + 1) * every) + ")");
}

// The training chain (libsonnet/stages/chain.libsonnet): spec.stages.pretrain
// runs pretraining and saves a .nemo at its end; spec.stages.train restores
// it. NeMo 1 only: megatron_gpt_pretraining.py restores a .nemo
// (model.restore_from_path, NVIDIA/NeMo r2.0.0rc1..v2.4.0
// examples/nlp/language_modeling/megatron_gpt_pretraining.py:44-55) and the
// SFT script restores any .nemo; a NeMo 2 recipe would need the pretraining's
// checkpoint directory, which nemoc does not name yet.
void CheckTrainingChain(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed,
                        Diagnostics* diags) {
  const auto& stages = spec["stages"];
  if (typed.Training("pretrain") == nullptr) return;
  const TrainingStage& pretrain = *typed.Training("pretrain");
  if (pretrain.mode != "pretrain") {
    diags->Error("spec.chain-mode",
                 "spec.stages.pretrain runs pretraining, but its mode is " + pretrain.mode,
                 doc.map.Locate("/spec/stages/pretrain/mode"),
                 "set mode: pretrain here and fine-tune in spec.stages.train");
  }
  if (!stages.contains("train")) {
    diags->Error("spec.missing-stage",
                 "spec.stages.pretrain is the first stage of a training chain and hands its checkpoint to "
                 "spec.stages.train, which is missing",
                 doc.map.Locate("/spec/stages/pretrain", /*prefer_key=*/true),
                 "rename it to train for a lone pretraining, or add spec.stages.train");
    return;
  }
  // Each framework restores its own checkpoint format: NeMo 1 the .nemo file
  // the pretraining saves at the end (model.restore_from_path), NeMo 2 the
  // pretraining's last checkpoint directory (AutoResume's restore_config,
  // libsonnet/nemo/nemo2.libsonnet upstreamCheckpoint). Neither reads the
  // other's; NeMo converts between them only offline
  // (scripts/checkpoint_converters/convert_nemo1_to_nemo2.py).
  if (typed.Training("train") == nullptr) return;
  const TrainingStage& train = *typed.Training("train");
  const std::string& pretrain_framework = pretrain.framework;
  const std::string& train_framework = train.framework;
  const bool nemo2_chain = pretrain_framework == "nemo2";
  if (pretrain_framework != train_framework) {
    const std::string pointer = doc.map.Has("/spec/stages/train/framework") ? "/spec/stages/train/framework"
                                                                            : "/spec/stages/train";
    diags->Error("spec.chain-framework",
                 "spec.stages.train (framework " + train_framework + ") restores the checkpoint of "
                     "spec.stages.pretrain (framework " + pretrain_framework + "), which it cannot read: " +
                     (nemo2_chain ? "NeMo 2 saves checkpoint directories, NeMo 1 restores a .nemo file"
                                  : "NeMo 1 saves a .nemo file, NeMo 2 restores checkpoint directories"),
                 doc.map.Locate(pointer, /*prefer_key=*/pointer == "/spec/stages/train"),
                 "set framework: " + pretrain_framework + " on both training stages");
  }
  // Learned absolute position embeddings have seqLength rows in the
  // pretraining's config (libsonnet/nemo/hydra.libsonnet architecture:
  // max_position_embeddings = seqLength). More pretraining builds its table
  // from its own seqLength, and restoring a table of another size fails;
  // fine-tuning clamps longer records to the table ("Set dataset
  // max_seq_length to max_position_embeddings", NVIDIA/NeMo v2.1.0
  // nemo/collections/nlp/models/language_modeling/megatron_gpt_sft_model.py:252-260).
  const auto& arch = spec["model"].value("architecture", nlohmann::json::object());
  const int64_t positions = pretrain.seq_length, wanted = train.seq_length;
  if (arch.value("positionEmbedding", "") == "learned_absolute" && wanted != positions) {
    const std::string pointer = doc.map.Has("/spec/stages/train/seqLength") ? "/spec/stages/train/seqLength"
                                                                            : "/spec/stages/train";
    const std::string text = "the model's learned position embeddings have " + Str(positions) +
                             " positions (spec.stages.pretrain.seqLength), and spec.stages.train.seqLength is " +
                             Str(wanted);
    if (train.mode == "pretrain") {
      diags->Error("spec.chain-seq-length", text + ": more pretraining rebuilds the table at its own length "
                   "and cannot restore the pretraining's", doc.map.Locate(pointer, pointer == "/spec/stages/train"),
                   "set spec.stages.train.seqLength: " + Str(positions));
    } else if (wanted > positions) {
      diags->Warning("spec.chain-seq-length", text + ": NeMo cuts the fine-tuning records to " + Str(positions) +
                     " tokens", doc.map.Locate(pointer, pointer == "/spec/stages/train"),
                     "set spec.stages.train.seqLength to at most " + Str(positions) +
                     ", or pretrain with a longer seqLength");
    }
  }
  const TrainingStage::Checkpoint& pretrain_checkpoint = pretrain.checkpoint;
  if (!pretrain_checkpoint.enabled) {
    diags->Error("spec.missing-source",
                 std::string("spec.stages.train restores ") +
                     (nemo2_chain ? "the last checkpoint" : "the .nemo") +
                     " spec.stages.pretrain saves at the end, but spec.stages.pretrain.checkpoint.enabled is false",
                 doc.map.Locate("/spec/stages/pretrain/checkpoint/enabled"),
                 "remove checkpoint.enabled: false from spec.stages.pretrain");
  } else if (nemo2_chain && !pretrain_checkpoint.save_last) {
    // AutoResume._find_trainer_ckpt_path reads only *last (and *end)
    // directories (NVIDIA/NeMo nemo/lightning/resume.py v2.1.0:195-230).
    diags->Error("spec.missing-source",
                 "spec.stages.train restores the last checkpoint (*-last) spec.stages.pretrain saves, but "
                 "spec.stages.pretrain.checkpoint.saveLast is false",
                 doc.map.Locate("/spec/stages/pretrain/checkpoint/saveLast"),
                 "remove checkpoint.saveLast: false from spec.stages.pretrain");
  }
  CheckFinalStepSaved(doc, pretrain, "pretrain", "spec.stages.train", diags);
}

// On the JSON, not the typed stage (spec_types.h): these rules report what
// the normalized contract rules out -- peft without lora, no data, JSONL for
// pretraining -- so a spec breaking them cannot be read typed.
void CheckTrainMode(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed, const std::string& key,
                    Diagnostics* diags) {
  const auto& train = spec["stages"][key];
  const std::string mode = train["mode"].get<std::string>();
  const std::string base = "/spec/stages/" + key;
  const std::string dotted = "spec.stages." + key;
  const bool fine_tuning = mode == "sft" || mode == "lora";
  const auto& source = spec["model"].value("source", nlohmann::json::object());
  // spec.model.source feeds the chain's first stage; the next restores its predecessor.
  const bool first = key != "train" || !spec["stages"].contains("pretrain");
  const bool has_source = source.contains("nemo") || source.contains("huggingface");
  if (first && fine_tuning && !has_source) {
    diags->Error("spec.missing-source",
                 "mode " + mode + " fine-tunes existing weights: set spec.model.source.nemo "
                 "(a .nemo checkpoint) or spec.model.source.huggingface",
                 doc.map.Locate(base + "/mode"),
                 key == "train" ? "or pretrain first: add spec.stages.pretrain" : "");
  }
  // NeMo 2 imports with llm.import_ckpt and the recipe's model (the import
  // stage); NeMo 1 needs the family's converter script.
  if (first && source.contains("huggingface") && train.value("framework", "nemo1") == "nemo1" &&
      !HasConverter(typed, "fromHuggingface")) {
    // libsonnet/models.json lists NeMo's importer per family; NVIDIA/NeMo
    // r2.0.0rc1..v2.4.0 scripts/checkpoint_converters ship none for Nemotron.
    diags->Error("spec.no-converter",
                 "importing HuggingFace weights of " + FamilyText(spec) + ": no NeMo release nemoc "
                 "accepts (24.07 to 25.07) ships a Hugging Face -> NeMo converter for it",
                 doc.map.Locate("/spec/model/source/huggingface", /*prefer_key=*/true),
                 "start from a .nemo checkpoint: spec.model.source.nemo");
  }
  if (first && source.contains("nemo") && source.contains("huggingface")) {
    diags->Error("spec.ambiguous-source", "spec.model.source: set nemo or huggingface, not both",
                 doc.map.Locate("/spec/model/source", /*prefer_key=*/true));
  }
  if (train.contains("peft") && mode != "lora") {
    diags->Error("spec.peft-without-lora",
                 dotted + ".peft is set but mode is " + mode,
                 doc.map.Locate(base + "/peft", /*prefer_key=*/true), "set mode: lora");
  }
  if (!train.contains("data")) {
    diags->Error("spec.missing-field",
                 dotted + ": missing required field 'data'",
                 doc.map.Locate(base, /*prefer_key=*/true),
                 fine_tuning ? "fine-tuning reads JSONL: data: {jsonl: {train: squad/train.jsonl}}"
                             : "set data: {mock: true}, {prefixes: [...]} or {fromDataPrep: true}");
  } else {
    const auto& data = train["data"];
    if (fine_tuning && !data.contains("jsonl")) {
      diags->Error("spec.wrong-data",
                   "mode " + mode + " reads JSONL records: set " + dotted + ".data.jsonl",
                   doc.map.Locate(base + "/data", /*prefer_key=*/true));
    }
    if (!fine_tuning && data.contains("jsonl")) {
      diags->Error("spec.wrong-data",
                   "pretraining reads Megatron indexed datasets (prefixes), mock data or the "
                   "dataPrep output, not JSONL",
                   doc.map.Locate(base + "/data/jsonl", /*prefer_key=*/true),
                   "add a dataPrep stage and use data: {fromDataPrep: true}");
    }
    if (data.contains("fromDataPrep") && !spec["stages"].contains("dataPrep")) {
      diags->Error("spec.missing-stage",
                   dotted + ".data.fromDataPrep needs a dataPrep stage",
                   doc.map.Locate(base + "/data/fromDataPrep", /*prefer_key=*/true));
    }
  }
}

// What each stage reads must come from an earlier stage or from the spec.
void CheckPipeline(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed, Diagnostics* diags) {
  const auto& stages = spec["stages"];
  const bool train = stages.contains("train");
  auto at = [&](const std::string& stage) { return doc.map.Locate("/spec/stages/" + stage, true); };
  // Stages that read the .nemo the train stage saves when they name no checkpoint.
  std::vector<std::string> readers;
  for (const char* stage : {"evaluate", "convert"}) {
    // Without a train stage, the description's `needs` says so (stages.cc CheckStageNeeds).
    if (!stages.contains(stage) || stages[stage].contains("checkpoint")) continue;
    if (train) readers.push_back(stage);
  }
  if (train && !readers.empty() && typed.Training("train") != nullptr) {
    const TrainingStage& t = *typed.Training("train");
    // A NeMo 1 LoRA run's .nemo holds only the adapter: the implied
    // mergeLora stage (libsonnet/stages/merge-lora.libsonnet) merges it into
    // the base model and the readers load the merged .nemo.
    if (t.framework == "nemo2") {
      // NeMo 2 saves checkpoint directories, not a .nemo. The conversion
      // exports, and the evaluation serves, the newest finished *-last one
      // (libsonnet/stages/nemo2-checkpoint.libsonnet): checkpoints must keep
      // a *-last copy.
      const TrainingStage::Checkpoint& checkpoint = t.checkpoint;
      std::string names;
      for (const auto& reader : readers) names += (names.empty() ? "spec.stages." : " and spec.stages.") + reader;
      if (checkpoint.enabled && !checkpoint.save_last) {
        diags->Error("spec.missing-source",
                     names + " read" + (readers.size() == 1 ? "s" : "") + " the NeMo 2 training run's newest "
                     "*-last checkpoint, but checkpoint.saveLast is false",
                     doc.map.Locate("/spec/stages/train/checkpoint/saveLast"),
                     "remove checkpoint.saveLast: false or set a checkpoint on " + names);
      }
      CheckFinalStepSaved(doc, t, "train", names, diags);
      if (ExportsNemo2(stages, typed)) {
        const auto& convert = stages["convert"];
        // merge_lora and export_ckpt build the model on the CPU but with
        // Transformer Engine layers, which assert CUDA (libsonnet/stages/convert.libsonnet).
        if (doc.map.Has("/spec/stages/convert/gpus") && convert.value("gpus", 1) != 1) {
          diags->Error("convert.nemo2-gpus",
                       "the NeMo 2 export loads the checkpoint on the CPU but needs exactly one GPU: "
                       "Transformer Engine's layers refuse to start without CUDA",
                       doc.map.Locate("/spec/stages/convert/gpus"),
                       "remove spec.stages.convert.gpus (the export Job asks for 1) and size "
                       "resources.memory for the whole model");
        }
        // bf16_with_fp8_mixed saves fp8 / fp8_param_gather in the checkpoint's
        // config; merge_lora (all tags) and nemo_load before v2.4.0 load it in
        // fp8, and v2.4.0 nemo_load says "FP8 SFT model export is not supported"
        // (NVIDIA/NeMo nemo/lightning/io/connector.py v2.4.0:238-242).
        if (t.precision == "fp8") {
          diags->Error("convert.nemo2-export",
                       "NeMo 2 does not export an fp8-trained checkpoint to Hugging Face (\"FP8 SFT "
                       "model export is not supported\"; llm.peft.merge_lora and llm.export_ckpt "
                       "before NeMo 25.07 load it in fp8)",
                       doc.map.Locate("/spec/stages/train/precision"),
                       "train with precision: bf16 (the engine build quantizes to fp8 with "
                       "spec.stages.tensorrtLLM.quantization: fp8), or framework: nemo1");
        }
        // The exporters save a Hugging Face tokenizer: a SentencePiece one has
        // no save_pretrained (llama.py v2.1.0:347, nemotron.py v2.4.0:342 crash;
        // llama.py v2.2.1+ catch it and write no tokenizer).
        const auto& tokenizer = spec["model"].value("tokenizer", nlohmann::json::object());
        if (t.mode == "pretrain" && tokenizer.value("library", "") == "sentencepiece") {
          diags->Error("convert.nemo2-export",
                       "the NeMo 2 Hugging Face exporters save a Hugging Face tokenizer; the "
                       "pretraining's SentencePiece tokenizer has none to save",
                       doc.map.Locate("/spec/model/tokenizer/library"),
                       "use the model's Hugging Face tokenizer (library huggingface), or framework: nemo1");
        }
        if (doc.map.Has("/spec/stages/convert/precision")) {
          diags->Warning("spec.unused-field",
                         "spec.stages.convert.precision is not used: llm.export_ckpt takes no "
                         "dtype, and writes the dtype of the checkpoint's model config",
                         doc.map.Locate("/spec/stages/convert/precision", /*prefer_key=*/true),
                         "remove spec.stages.convert.precision");
        }
      }
    }
    if (!t.checkpoint.enabled) {
      diags->Error("spec.missing-source",
                   "spec.stages." + readers[0] + " reads the .nemo training saves at the end, but "
                   "checkpointing is off",
                   doc.map.Locate("/spec/stages/train/checkpoint/enabled"),
                   "remove checkpoint.enabled: false or set spec.stages." + readers[0] + ".checkpoint");
    }
  }
  if (stages.contains("mergeLora") && !ImpliesLoraMerge(stages, typed)) {
    diags->Warning("spec.unused-stage",
                   "spec.stages.mergeLora has nothing to merge: it runs after a NeMo 1 LoRA train stage "
                   "whose checkpoint evaluate or convert reads",
                   at("mergeLora"), "remove spec.stages.mergeLora");
  }
  if (stages.contains("ncclTest") && !train) {
    diags->Error("spec.missing-stage",
                 "spec.stages.ncclTest tests the training nodes and fabric: it needs a train stage",
                 at("ncclTest"));
  }
  const std::vector<std::string> training = TrainingStages(stages);
  const bool prepared_read = std::any_of(training.begin(), training.end(), [&](const std::string& key) {
    return stages[key].value("data", nlohmann::json::object()).contains("fromDataPrep");
  });
  if (stages.contains("dataPrep") && !training.empty() && !prepared_read) {
    diags->Warning("spec.unused-stage",
                   "spec.stages.dataPrep writes a dataset that training does not read",
                   at("dataPrep"), "set spec.stages." + training.front() + ".data: {fromDataPrep: true}");
  }
  if (stages.contains("evaluate")) {
    const auto& evaluate = stages["evaluate"];
    const int64_t gpus = evaluate["tensorParallel"].get<int64_t>() * evaluate["pipelineParallel"].get<int64_t>();
    const int64_t per_node = train ? stages["train"]["gpusPerNode"].get<int64_t>() : 8;
    if (gpus > per_node) {
      const std::string where = doc.map.Has("/spec/stages/evaluate/pipelineParallel")
                                    ? "/spec/stages/evaluate/pipelineParallel"
                                    : "/spec/stages/evaluate";
      diags->Error("spec.evaluate-gpus",
                   "evaluation runs on one node: tensor × pipeline parallelism = " + Str(gpus) +
                       " GPUs exceeds " + Str(per_node) + " GPUs per node",
                   doc.map.Locate(where, where == "/spec/stages/evaluate"),
                   "set spec.stages.evaluate.tensorParallel and pipelineParallel so that their "
                   "product fits one node (NeMo reshards the checkpoint when loading)");
    }
  }
  // A NeMo 2 run is exported by its model's own exporter, present for every
  // model with a NeMo 2 recipe (libsonnet/stages/convert.libsonnet).
  if (stages.contains("convert") && !ExportsNemo2(stages, typed) && !HasConverter(typed, "toHuggingface")) {
    NotSupportedYet(diags, doc, "/spec/stages/convert",
                    "converting " + FamilyText(spec) + " to HuggingFace");
  }
  // A tensorrtLLM stage without a convert stage or a checkpoint, a serve stage
  // without an engine: their descriptions' `needs` (stages.cc CheckStageNeeds).
  if (stages.contains("serve")) {
    const auto& serve = stages["serve"];
    const auto& triton = serve["triton"];
    if (stages.contains("tensorrtLLM")) {
      const auto& engine = stages["tensorrtLLM"];
      if (triton["maxBatchSize"].get<int64_t>() > engine["maxBatchSize"].get<int64_t>()) {
        diags->Error("spec.serve-batch",
                     "spec.stages.serve.triton.maxBatchSize " + Str(triton["maxBatchSize"].get<int64_t>()) +
                         " exceeds the engine's maxBatchSize " + Str(engine["maxBatchSize"].get<int64_t>()),
                     doc.map.Locate("/spec/stages/serve/triton/maxBatchSize"));
      }
      if (triton["tensorParallel"] != engine["tensorParallel"]) {
        diags->Error("spec.serve-gpus",
                     "spec.stages.serve.triton.tensorParallel " + Str(triton["tensorParallel"].get<int64_t>()) +
                         " differs from the engine's tensorParallel " +
                         Str(engine["tensorParallel"].get<int64_t>()),
                     doc.map.Locate("/spec/stages/serve/triton/tensorParallel"),
                     "remove it: Triton runs one rank per engine shard");
      }
      if (triton["inflightBatching"].get<bool>() && !engine["pagedKvCache"].get<bool>()) {
        diags->Error("spec.serve-batching",
                     "in-flight batching needs an engine with a paged KV cache",
                     doc.map.Locate("/spec/stages/tensorrtLLM/pagedKvCache"),
                     "set pagedKvCache: true or spec.stages.serve.triton.inflightBatching: false");
      }
    }
  }
  const bool service_monitor = typed.monitoring && typed.monitoring->service_monitor;
  const bool alerts = typed.monitoring && typed.monitoring->alerts;
  if (service_monitor && !stages.contains("serve")) {
    diags->Error("spec.monitoring",
                 "spec.monitoring.serviceMonitor scrapes Triton, but there is no serve stage (NeMo "
                 "training has no metrics endpoint)",
                 doc.map.Locate("/spec/monitoring/serviceMonitor"),
                 "use spec.monitoring.alerts for training: GPU alerts from the DCGM exporter");
  }
  if (alerts && !train && !stages.contains("serve")) {
    diags->Error("spec.monitoring",
                 "spec.monitoring.alerts watches training and serving, and there is neither",
                 doc.map.Locate("/spec/monitoring/alerts"));
  }
}

// F20 / D8: NVIDIA publishes its containers (nvcr.io/nvidia/*) under
// release tags YY.MM, optionally .NN (a patch release) and a -suffix (the
// variant: 25.01-py3, 25.02-trtllm-python-py3). A tag in another shape
// (2502, v25.02, 25.2) names no release: the pull fails on every node hours
// into a pipeline, or a differently built image is pulled. The nearest
// release is what the digits say. Users' own images keep their tags.
bool IsNvidiaReleaseTag(const std::string& tag) {
  static const std::regex release("^(\\d{2})\\.(\\d{2})(\\.\\d{2})?(-[A-Za-z0-9][A-Za-z0-9._-]*)?$");
  std::smatch m;
  if (!std::regex_match(tag, m, release)) return false;
  const int month = std::stoi(m[2]);
  return month >= 1 && month <= 12;
}

// "2502", "v25.02", "25.2", "25.02-py3x" -> "25.02..." ("" when the tag has
// no year and month to read).
std::string NearestNvidiaRelease(const std::string& tag) {
  static const std::regex loose("^[vVrR]?(\\d{2})[.]?(\\d{1,2})((?:\\.\\d{1,2})?)(-.*)?$");
  std::smatch m;
  if (!std::regex_match(tag, m, loose)) return "";
  const int month = std::stoi(m[2]);
  if (month < 1 || month > 12) return "";
  std::string out = m[1].str() + "." + (month < 10 ? "0" : "") + std::to_string(month);
  if (m[3].length() > 0) {
    const int patch = std::stoi(m[3].str().substr(1));
    out += std::string(".") + (patch < 10 ? "0" : "") + std::to_string(patch);
  }
  return out + m[4].str();
}

// Every {repository, tag} object of `node` (spec.image, stages.*.image, a
// profile's efa.image...).
void CheckNvidiaTags(const Document& doc, const nlohmann::json& node, const std::string& pointer,
                     Diagnostics* diags) {
  if (node.is_object()) {
    if (node.contains("repository") && node["repository"].is_string() && node.contains("tag") &&
        node["tag"].is_string()) {
      const std::string repository = node["repository"].get<std::string>();
      const std::string tag = node["tag"].get<std::string>();
      if (repository.rfind("nvcr.io/nvidia/", 0) == 0 && !IsNvidiaReleaseTag(tag)) {
        const std::string nearest = NearestNvidiaRelease(tag);
        diags->Error("spec.image-tag",
                     repository + ":" + tag + " is no NVIDIA release: NGC tags its containers YY.MM (25.02), "
                     "optionally with a patch release and a variant (25.02.01, 25.01-py3)",
                     doc.map.Locate(pointer + "/tag"),
                     nearest.empty() ? "use a release tag listed on catalog.ngc.nvidia.com for " + repository
                                     : "did you mean '" + nearest + "'? (quote it: tag: \"" + nearest + "\")");
      }
    }
    for (const auto& [key, child] : node.items()) {
      if (child.is_structured()) CheckNvidiaTags(doc, child, pointer + "/" + EscapePointerToken(key), diags);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) CheckNvidiaTags(doc, node[i], pointer + "/" + std::to_string(i), diags);
  }
}

// D8: a warm-up as long as the run or longer leaves the learning rate below
// its peak for the whole run (NeMo's WarmupPolicy/CosineAnnealing and
// Megatron's scheduler raise it linearly over warmupSteps): a smoke run of 50
// steps under the default 100-step warm-up trains at half the rate it names.
void CheckWarmup(const Document& doc, const TrainingStage& train, const std::string& key, Diagnostics* diags) {
  const int64_t warmup = train.optimizer.warmup_steps;
  const int64_t steps = train.max_steps;
  if (warmup < steps) return;
  const std::string base = "/spec/stages/" + key;
  // A warm-up the spec writes is taken as meant: benchmark recipes run 15
  // steps under a 2,000-step warm-up (the 405B examples, after
  // AI-Hypercomputer/gpu-recipes). The default one is what nobody chose.
  if (doc.root.contains(nlohmann::json::json_pointer(base + "/optimizer/warmupSteps"))) return;
  const std::string at = base + "/maxSteps";
  const double lr = train.optimizer.lr;
  char text[64];
  std::snprintf(text, sizeof text, "%g (it reaches %g)", lr,
                lr * static_cast<double>(steps) / static_cast<double>(std::max<int64_t>(warmup, 1)));
  const std::string peak = " " + std::string(text);
  diags->Warning("train.warmup",
                 "the default warm-up of " + std::to_string(warmup) + " steps" +
                     " is not shorter than the run of " + std::to_string(steps) + " steps: the learning rate " +
                     (warmup == steps ? std::string("reaches its peak only at the last step") : "never reaches its peak" + peak),
                 doc.map.Locate(at),
                 "set stages." + key + ".optimizer.warmupSteps below maxSteps (a tenth of the run is common)");
}

// Mistake 11 of the review (D9): serve.engine names the directory of a
// TensorRT-LLM engine (rank*.engine and config.json, what the tensorrtLLM
// stage writes; tensorrtllm_backend reads it as engine_dir). A checkpoint
// file there -- a LoRA adapter's .nemo -- starts a Triton that fails to load
// the model; the error used to point at the tokenizer instead.
void CheckServeEngine(const Document& doc, const nlohmann::json& spec, Diagnostics* diags) {
  if (!spec["stages"].contains("serve") || !spec["stages"]["serve"].is_object() ||
      !spec["stages"]["serve"].contains("engine")) {
    return;
  }
  const std::string engine = spec["stages"]["serve"]["engine"].get<std::string>();
  static const char* const kCheckpoints[] = {".nemo", ".ckpt", ".pt", ".pth", ".bin", ".safetensors", ".distcp", ".gguf"};
  for (const char* ext : kCheckpoints) {
    const std::string e = ext;
    if (engine.size() > e.size() && engine.compare(engine.size() - e.size(), e.size(), e) == 0) {
      diags->Error("spec.serve-engine",
                   "spec.stages.serve.engine: " + engine + " is a checkpoint file (" + e +
                       "), not a TensorRT-LLM engine directory (rank0.engine, config.json) that Triton's "
                       "tensorrtllm backend loads",
                   doc.map.Locate("/spec/stages/serve/engine"),
                   spec["stages"].contains("tensorrtLLM")
                       ? "remove serve.engine: serve then loads the engine the tensorrtLLM stage builds"
                       : "add a tensorrtLLM stage (it builds the engine from the checkpoint; for a LoRA adapter "
                         "the merged model) and remove serve.engine");
      return;
    }
  }
}

}  // namespace

void CheckTrainArithmetic(const Document& doc, const TrainingStage& train,
                          const nlohmann::json& architecture, Diagnostics* diags,
                          int counted_layers, const std::string& key) {
  const std::string base = "/spec/stages/" + key;
  const std::string par = base + "/parallelism";
  const TrainSizes s = ComputeTrainSizes(train);
  const std::string world = "the world size " + Str(s.world_size) + " (" + Str(s.nodes) +
                            (s.nodes == 1 ? " node × " : " nodes × ") + Str(s.gpus_per_node) +
                            (s.gpus_per_node == 1 ? " GPU per node)" : " GPUs per node)");
  if (s.world_size % s.model_parallel != 0) {
    diags->Error("train.parallelism",
                 "tensor × pipeline × context parallelism = " + Str(s.tensor) + " × " +
                     Str(s.pipeline) + " × " + Str(s.context) + " = " + Str(s.model_parallel) +
                     " does not divide " + world,
                 doc.map.Locate(par, /*prefer_key=*/true),
                 "change the parallelism or the node count so that the world size is a "
                 "multiple of " + Str(s.model_parallel));
  } else {
    const int64_t micro = train.batch.micro;
    const int64_t global = train.batch.global;
    const int64_t step = micro * s.data_parallel;
    if (global % step != 0) {
      const int64_t lower = global / step * step;
      std::string hint = "nearest valid values: ";
      if (lower > 0) hint += Str(lower) + " or ";
      hint += Str(lower + step);
      diags->Error("train.batch",
                   "global batch " + Str(global) + " is not a multiple of micro batch × "
                   "data-parallel size = " + Str(micro) + " × " + Str(s.data_parallel) + " = " +
                       Str(step),
                   doc.map.Locate(base + "/batch/global"), hint);
    }
    if (s.expert > 1 && s.data_parallel * s.context % s.expert != 0) {
      diags->Error("train.expert-parallel",
                   "expert parallelism " + Str(s.expert) +
                       " does not divide data-parallel × context-parallel size = " +
                       Str(s.data_parallel) + " × " + Str(s.context) + " = " +
                       Str(s.data_parallel * s.context),
                   doc.map.Locate(par + "/expert"));
    }
  }
  if (architecture.contains("numAttentionHeads")) {
    const int64_t heads = architecture["numAttentionHeads"].get<int64_t>();
    if (heads % s.tensor != 0) {
      diags->Error("train.heads",
                   "the model's " + Str(heads) +
                       " attention heads are not divisible by tensor parallelism " + Str(s.tensor),
                   doc.map.Locate(par + "/tensor"));
    }
    const int64_t groups = architecture.value("numQueryGroups", heads);
    if (heads % s.tensor == 0 && groups % s.tensor != 0) {
      diags->Error("train.query-groups",
                   "the model's " + Str(groups) +
                       " query groups are not divisible by tensor parallelism " + Str(s.tensor),
                   doc.map.Locate(par + "/tensor"));
    }
  }
  if (s.virtual_pipeline > 0 && s.pipeline == 1) {
    diags->Error("train.virtual-pipeline",
                 "virtual pipeline parallelism needs pipeline parallelism > 1",
                 doc.map.Locate(par + "/virtualPipeline"));
  }
  if (architecture.contains("numLayers")) {
    // Megatron's even split (NVIDIA/Megatron-LM core_v0.13.0
    // megatron/core/transformer/transformer_config.py:993-1040,
    // transformer_block.py:133-166): (layers + counted) % PP == 0 and the
    // per-stage share % VPP == 0, i.e. (layers + counted) % (PP × VPP) == 0.
    // counted is 2 when the recipe counts embedding and loss and the
    // generated module keeps that, 0 when it sets both False.
    const int64_t layers = architecture["numLayers"].get<int64_t>();
    const int64_t stages = s.pipeline * std::max<int64_t>(1, s.virtual_pipeline);
    if (layers % stages != 0 && (counted_layers == 0 || (layers + counted_layers) % stages != 0)) {
      const std::string product =
          s.virtual_pipeline > 0 ? "pipeline × virtual pipeline = " + Str(s.pipeline) + " × " +
                                       Str(s.virtual_pipeline) + " = " + Str(stages)
                                 : "pipeline parallelism " + Str(s.pipeline);
      const std::string counted =
          counted_layers == 0 ? ""
                              : " (nor are " + Str(layers + counted_layers) +
                                    " with the recipe's embedding and loss counted as layers)";
      diags->Error("train.layers",
                   "the model's " + Str(layers) + " layers are not divisible by " + product + counted,
                   doc.map.Locate(par + (s.virtual_pipeline > 0 ? "/virtualPipeline" : "/pipeline")));
    }
  }
  if (s.context > 1) {
    const int64_t seq = train.seq_length;
    if (seq % (2 * s.context) != 0) {
      diags->Error("train.context-parallel",
                   "sequence length " + Str(seq) + " is not divisible by 2 × context parallelism = " +
                       Str(2 * s.context),
                   doc.map.Locate(par + "/context"),
                   "context parallelism splits each sequence into 2 × CP chunks");
    }
  }
  if (s.expert > 1 && !architecture.contains("numExperts")) {
    diags->Error("train.expert-parallel",
                 "expert parallelism " + Str(s.expert) + " needs a mixture-of-experts model",
                 doc.map.Locate(par + "/expert"));
  } else if (s.expert > 1 && architecture["numExperts"].get<int64_t>() % s.expert != 0) {
    diags->Error("train.expert-parallel",
                 "the model's " + Str(architecture["numExperts"].get<int64_t>()) +
                     " experts are not divisible by expert parallelism " + Str(s.expert),
                 doc.map.Locate(par + "/expert"));
  }
  if (train.parallelism.sequence_parallel && s.tensor == 1) {
    diags->Warning("train.sequence-parallel",
                   "sequence parallelism has no effect with tensor parallelism 1",
                   doc.map.Locate(par + "/sequenceParallel"));
  }
  if (architecture.contains("maxPositionEmbeddings") &&
      train.seq_length > architecture["maxPositionEmbeddings"].get<int64_t>()) {
    diags->Warning("train.seq-length",
                   "sequence length " + Str(train.seq_length) +
                       " exceeds the model's maxPositionEmbeddings " +
                       Str(architecture["maxPositionEmbeddings"].get<int64_t>()),
                   doc.map.Locate(base + "/seqLength"));
  }
}

bool ImpliesLoraMerge(const nlohmann::json& stages, const TypedSpec& typed) {
  if (typed.Training("train") == nullptr) return false;
  const TrainingStage& train = *typed.Training("train");
  auto reads_training = [&](const char* stage) {
    return stages.contains(stage) && !stages[stage].contains("checkpoint");
  };
  return train.mode == "lora" && train.framework == "nemo1" && (reads_training("evaluate") || reads_training("convert"));
}

bool ExportsNemo2(const nlohmann::json& stages, const TypedSpec& typed) {
  return stages.contains("convert") && !stages["convert"].contains("checkpoint") && typed.Training("train") != nullptr &&
         typed.Training("train")->framework == "nemo2";
}

namespace {

// ---- the checks CheckSpec runs (check_registry.h), in declaration order ----

// Images as the user wrote them (the normalized spec adds defaults, which are
// nemoc's own release tags).
void CheckTagsAsWritten(const CheckInput& in, const std::string&, Diagnostics* diags) {
  if (in.doc.root.contains("spec")) CheckNvidiaTags(in.doc, in.doc.root["spec"], "/spec", diags);
}
NEMOC_REGISTER_CHECK("spec.nvidia-tags", kSpec, "", CheckTagsAsWritten);

void CheckFluxPollsOf(const CheckInput& in, const std::string&, Diagnostics* diags) {
  if (in.spec.contains("gitops")) CheckFluxPolls(in.doc, in.spec["gitops"], diags);
}
NEMOC_REGISTER_CHECK("gitops.flux-polls", kEngine, "flux", CheckFluxPollsOf);

// A cluster for a target that does not exist is a typo, not a no-op.
void CheckClusterTargets(const CheckInput& in, const std::string&, Diagnostics* diags) {
  if (!in.spec.contains("gitops")) return;
  std::set<std::string> target_names;
  for (const auto& t : in.spec["targets"]) target_names.insert(t["name"].get<std::string>());
  const nlohmann::json clusters = in.spec["gitops"].value("clusters", nlohmann::json::object());
  for (const auto& [name, server] : clusters.items()) {
    if (target_names.count(name) == 0) {
      diags->Error("spec.unknown-target", "spec.gitops.clusters." + name + ": no target is named '" + name + "'",
                   in.doc.map.Locate("/spec/gitops/clusters/" + name, true));
    }
  }
}
NEMOC_REGISTER_CHECK("gitops.cluster-targets", kSpec, "", CheckClusterTargets);

// The ApplicationSet creates each target's root Application at once; a root
// in a project that does not exist yet never syncs (argo-cd 37ee009
// controller/appcontroller.go projectErrorToCondition: "Application
// referencing project ... which does not exist"). With the platform bundle
// the roots live in its roots AppProject (gitops.libsonnet rootsProject,
// decision F14), applied before any root; without one, the AppProject
// createProject makes would be one of the objects that root syncs.
void CheckArgocdProject(const CheckInput& in, const std::string&, Diagnostics* diags) {
  if (!in.spec.contains("gitops")) return;
  const nlohmann::json argocd = in.spec["gitops"].value("argocd", nlohmann::json::object());
  if (argocd.value("applicationSet", false) && argocd.value("createProject", true) &&
      !in.spec["gitops"].value("platform", true)) {
    const Document& doc = in.doc;
    diags->Error("spec.gitops-project",
                 "spec.gitops.argocd.createProject: with applicationSet and no platform bundle the "
                 "generated root Applications would name AppProjects that only they create, and "
                 "Argo CD does not sync an Application whose project does not exist",
                 doc.map.Has("/spec/gitops/argocd/createProject") ? doc.map.Locate("/spec/gitops/argocd/createProject")
                                                                   : doc.map.Locate("/spec/gitops/argocd/applicationSet"),
                 "set argocd.createProject: false and name an existing AppProject in argocd.project, "
                 "keep the platform bundle (gitops.platform), or drop applicationSet");
  }
}
NEMOC_REGISTER_CHECK("gitops.argocd-project", kEngine, "argocd", CheckArgocdProject);

void CheckTargetsOf(const CheckInput& in, const std::string&, Diagnostics* diags) { CheckTargets(in.doc, in.typed, diags); }
NEMOC_REGISTER_CHECK("spec.targets", kSpec, "", CheckTargetsOf);

void CheckPipelineOf(const CheckInput& in, const std::string&, Diagnostics* diags) { CheckPipeline(in.doc, in.spec, in.typed, diags); }
NEMOC_REGISTER_CHECK("spec.pipeline", kSpec, "", CheckPipelineOf);

void CheckTrainingChainOf(const CheckInput& in, const std::string&, Diagnostics* diags) {
  CheckTrainingChain(in.doc, in.spec, in.typed, diags);
}
NEMOC_REGISTER_CHECK("training.chain", kSpec, "", CheckTrainingChainOf);

// Each training stage (pretrain, train).
void CheckTrainModeOf(const CheckInput& in, const std::string& key, Diagnostics* diags) {
  // A pretrain stage in another mode is reported once (spec.chain-mode), not
  // again by the rules of the mode it should not have.
  if (key != "pretrain" || in.spec["stages"][key]["mode"] == "pretrain") CheckTrainMode(in.doc, in.spec, in.typed, key, diags);
}
NEMOC_REGISTER_CHECK("train.mode", kTrainingStage, "", CheckTrainModeOf);

void CheckTrainFrameworkOf(const CheckInput& in, const std::string& key, Diagnostics* diags) {
  CheckTrainFramework(in.doc, in.spec, in.typed, key, in.tables.releases, diags);
}
NEMOC_REGISTER_CHECK("train.framework", kTrainingStage, "", CheckTrainFrameworkOf);

void CheckTrainArithmeticOf(const CheckInput& in, const std::string& key, Diagnostics* diags) {
  if (in.typed.Training(key) == nullptr) return;
  CheckTrainArithmetic(in.doc, *in.typed.Training(key), in.spec["model"]["architecture"], diags,
                       RecipeCountedSplitLayers(in.typed, key),
                       key);
}
NEMOC_REGISTER_CHECK("train.arithmetic", kTrainingStage, "", CheckTrainArithmeticOf);

void CheckWarmupOf(const CheckInput& in, const std::string& key, Diagnostics* diags) {
  if (in.typed.Training(key) != nullptr) CheckWarmup(in.doc, *in.typed.Training(key), key, diags);
}
NEMOC_REGISTER_CHECK("train.warmup", kTrainingStage, "", CheckWarmupOf);

void CheckServeEngineOf(const CheckInput& in, const std::string&, Diagnostics* diags) {
  CheckServeEngine(in.doc, in.spec, diags);
}
NEMOC_REGISTER_CHECK("serve.engine", kStage, "serve", CheckServeEngineOf);

}  // namespace

bool CheckSpec(const Document& doc, const nlohmann::json& normalized, const CheckTables& tables,
               Diagnostics* diags) {
  return CheckSpec(doc, normalized, ReadTypedSpec(normalized["spec"]), tables, diags);
}

bool CheckSpec(const Document& doc, const nlohmann::json& normalized, const TypedSpec& typed,
               const CheckTables& tables, Diagnostics* diags) {
  const size_t errors_before = diags->error_count();
  const CheckInput input{doc, normalized, normalized["spec"], typed, tables};
  const nlohmann::json& present = input.spec["stages"];
  const std::vector<const RegisteredCheck*> checks = RegisteredChecks(tables.stages);
  using Scope = RegisteredCheck::Scope;
  for (const RegisteredCheck* check : checks) {
    if (check->scope == Scope::kSpec) check->run(input, "", diags);
  }
  // Each engine the spec names, its settings' rules (a spec whose
  // normalization failed may lack gitops: value()).
  const nlohmann::json engines =
      input.spec.value("gitops", nlohmann::json::object()).value("engines", nlohmann::json::array());
  for (const RegisteredCheck* check : checks) {
    if (check->scope == Scope::kEngine && engines.is_array() &&
        std::find(engines.begin(), engines.end(), check->key) != engines.end()) {
      check->run(input, check->key, diags);
    }
  }
  // Each training stage's rules together, pretrain's before train's.
  for (const std::string& key : TrainingStages(present)) {
    for (const RegisteredCheck* check : checks) {
      if (check->scope == Scope::kTrainingStage) check->run(input, key, diags);
    }
  }
  for (const RegisteredCheck* check : checks) {
    if (check->scope == Scope::kStage && present.is_object() && present.contains(check->key) &&
        present[check->key].is_object()) {
      check->run(input, check->key, diags);
    }
  }
  return diags->error_count() == errors_before;
}

bool CheckProfilesKnown(const Document& doc, const nlohmann::json& normalized,
                        const std::vector<std::string>& known, Diagnostics* diags) {
  bool ok = true;
  const auto& targets = normalized["spec"]["targets"];
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string profile = targets[i]["profile"].get<std::string>();
    if (std::find(known.begin(), known.end(), profile) != known.end()) continue;
    std::string names;
    for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
    const std::string suggestion = SuggestClosest(profile, known);
    diags->Error("spec.unknown-profile", "unknown profile '" + profile + "'",
                 doc.map.Locate("/spec/targets/" + std::to_string(i) + "/profile"),
                 suggestion.empty() ? "known profiles: " + names + " (add your own with --jpath DIR)"
                                    : "did you mean '" + suggestion + "'?");
    ok = false;
  }
  return ok;
}

bool CheckTargetOnAccelerator(const Document& doc, const nlohmann::json& spec, const TypedSpec& typed,
                              const std::string& target,
                              const std::string& accelerator, const nlohmann::json& gpu,
                              Diagnostics* diags) {
  const size_t errors_before = diags->error_count();
  const double capacity = gpu["memoryGB"].get<double>();
  CheckAcceleratorSupport(doc, typed, target, accelerator, gpu, diags);
  // Mistake 5 of the review (D9): the merge and conversion fit errors no
  // longer hide training's own; every stage's fit reports in one run.
  CheckStageFit(doc, spec, typed, target, accelerator, capacity, diags);
  if (!spec["stages"].contains("train")) return diags->error_count() == errors_before;
  const ModelArchitecture architecture = ModelArchitecture::FromJson(spec["model"]["architecture"]);
  for (const std::string& key : typed.TrainingKeys()) {
    CheckFit(doc, *typed.Training(key), architecture, target, accelerator, capacity, diags, key);
  }
  return diags->error_count() == errors_before;
}

}  // namespace nemoc
