#include "starter.h"

#include "secret_scanner.h"

#include <algorithm>
#include <cstdio>

#include "edit_distance.h"
#include "output_verifier.h"

namespace nemoc {

namespace {

constexpr int64_t kGpusPerNode = 8;
constexpr double kTargetFill = 0.8;  // leave room: the estimate is approximate

struct Layout {
  int64_t nodes = 0, tensor = 1, pipeline = 1, global = 0;
  double memory_gb = 0;
};

// The training stage the starter writes, as the normalizer would make it for
// the memory estimate: the starter names no framework, so the input schema's
// default (nemo1) applies.
TrainingStage TrainFor(const Layout& l, int64_t seq_length) {
  TrainingStage t;
  t.mode = "pretrain";
  t.framework = "nemo1";
  t.nodes = l.nodes;
  t.gpus_per_node = kGpusPerNode;
  t.parallelism.tensor = l.tensor;
  t.parallelism.pipeline = l.pipeline;
  t.parallelism.context = 1;
  t.parallelism.expert = 1;
  t.parallelism.sequence_parallel = l.tensor > 1;
  t.batch.micro = 1;
  t.batch.global = l.global;
  t.seq_length = seq_length;
  return t;
}

// Fewest nodes first, then the least model parallelism (tensor within a
// node, pipeline over a divisor of the layers), that fits.
bool ChooseLayout(const nlohmann::json& arch, int64_t seq_length, double capacity_gb, Layout* out) {
  const int64_t heads = arch.value("numAttentionHeads", 1);
  const int64_t groups = arch.value("numQueryGroups", heads);
  const int64_t layers = arch.value("numLayers", 1);
  constexpr int64_t kMaxNodes = 64;
  for (int64_t nodes = 1; nodes <= kMaxNodes; ++nodes) {
    const int64_t world = nodes * kGpusPerNode;
    for (int64_t model_parallel = 1; model_parallel <= world; ++model_parallel) {
      for (int64_t tensor : {1, 2, 4, 8}) {
        if (model_parallel % tensor != 0) continue;
        const int64_t pipeline = model_parallel / tensor;
        if (heads % tensor != 0 || groups % tensor != 0 || layers % pipeline != 0 ||
            world % model_parallel != 0) {
          continue;
        }
        Layout l{nodes, tensor, pipeline, 0, 0};
        const int64_t data_parallel = world / model_parallel;
        // At least 256 sequences per step, a multiple of micro × DP.
        l.global = data_parallel * std::max<int64_t>(1, (256 + data_parallel - 1) / data_parallel);
        l.memory_gb = EstimateMemory(TrainFor(l, seq_length), ModelArchitecture::FromJson(arch)).total_gb;
        if (l.memory_gb <= kTargetFill * capacity_gb) {
          *out = l;
          return true;
        }
      }
    }
  }
  return false;
}

std::string Fixed1(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

}  // namespace

const ProfileInfo* ChooseStarterProfile(const std::vector<ProfileInfo>& profiles, const std::string& wanted,
                                        std::string* err) {
  std::vector<std::string> names, with_starter;
  for (const auto& p : profiles) {
    names.push_back(p.name);
    if (p.description.value("starter", nlohmann::json()).is_object()) with_starter.push_back(p.name);
  }
  auto join = [](const std::vector<std::string>& list) {
    std::string out;
    for (const auto& n : list) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (wanted.empty()) {
    // The profile whose starter says it is the default (a fact of the profile
    // file); a built-in one first (a --jpath profile extending it inherits the mark).
    for (const bool builtin : {true, false}) {
      for (const auto& p : profiles) {
        const nlohmann::json starter = p.description.value("starter", nlohmann::json());
        if (p.builtin == builtin && starter.is_object() && starter.value("default", false)) return &p;
      }
    }
    *err = "choose a profile with --profile: " + join(with_starter) + " (nemoc profiles describes them)";
    return nullptr;
  }
  for (const auto& p : profiles) {
    if (p.name != wanted) continue;
    if (!p.description.value("starter", nlohmann::json()).is_object()) {
      *err = "profile '" + wanted + "' has no starter for nemoc init (its starter member is null); starters "
             "exist for " + join(with_starter) + "; or write the target by hand (nemoc explain spec.targets)";
      return nullptr;
    }
    return &p;
  }
  const std::string suggestion = SuggestClosest(wanted, names);
  *err = "unknown profile '" + wanted + "'" + (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
         "; starters exist for " + join(with_starter) + " (nemoc profiles describes them; add your own with --jpath DIR)";
  return nullptr;
}

bool StarterSpec(const StarterOptions& o, const nlohmann::json& starter, const ModelCatalog& catalog,
                 const AcceleratorTable& accelerators, std::string* yaml, std::string* err) {
  // metadata.name's rule (schema definition projectName): the file is NAME.yaml.
  // 63: the name is the value of label app.kubernetes.io/part-of (B18).
  bool name_ok = !o.name.empty() && o.name.size() <= 63 && o.name.front() >= 'a' &&
                 o.name.front() <= 'z' && o.name.back() != '-';
  for (char c : o.name) name_ok = name_ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  // A name is committed to Git in every object's labels: one shaped like a
  // credential (a Slack token is a valid DNS label) is refused, unquoted (E23).
  if (const auto found = FindSecrets(o.name); !found.empty()) {
    *err = "the project name looks like a " + found.front().kind +
           "; names are committed to Git in every object, so it is refused (not shown here)";
    return false;
  }
  if (!name_ok) {
    *err = "project name '" + o.name + "' must be a DNS-1123 label of at most 63 characters "
           "starting with a letter (lowercase letters, digits, '-'): it is the value of label "
           "app.kubernetes.io/part-of, at most 63 characters";
    return false;
  }
  // The profile's starter member (libsonnet/profile.libsonnet documents it).
  for (const char* key : {"target", "accelerator", "storage", "targetLines", "fabric"}) {
    if (!starter.is_object() || !starter.contains(key) || !starter[key].is_string()) {
      *err = "profile " + o.profile + ": its starter has no string " + key +
             " (libsonnet/profile.libsonnet documents the starter)";
      return false;
    }
  }
  const std::string target_name = starter["target"].get<std::string>();
  const std::string accelerator = starter["accelerator"].get<std::string>();
  const bool needs_queue = starter.value("clusterQueue", false);
  if (needs_queue && o.cluster_queue.empty()) {
    *err = "the " + o.profile + " starter admits through the cluster's Kueue ClusterQueue, whose name nemoc "
           "cannot guess (Cluster Toolkit clusters have used both a4-high and a4): pass --cluster-queue NAME, "
           "a name from `kubectl get clusterqueues`";
    return false;
  }
  if (!o.cluster_queue.empty() && !needs_queue) {
    *err = "--cluster-queue names the cluster's Kueue ClusterQueue for a starter that admits through it; the " +
           o.profile + " starter uses no Kueue (add spec.targets[].kueue by hand: nemoc explain spec.targets)";
    return false;
  }
  // A DNS-1123 subdomain, as Kueue's ClusterQueue names (object names) are.
  if (!o.cluster_queue.empty() && !IsDnsSubdomain(o.cluster_queue)) {
    *err = "--cluster-queue '" + o.cluster_queue + "' is not a ClusterQueue name (lowercase letters, digits, "
           "'-' and '.', starting and ending with a letter or digit)";
    return false;
  }
  const nlohmann::json* model = catalog.Find(o.model);
  if (model == nullptr) {
    const std::string suggestion = SuggestClosest(o.model, catalog.Names());
    std::string names;
    for (const auto& n : catalog.Names()) names += (names.empty() ? "" : ", ") + n;
    *err = "unknown model '" + o.model + "'" +
           (suggestion.empty() ? "; the catalog has " + names : " (did you mean '" + suggestion + "'?)");
    return false;
  }
  const nlohmann::json* gpu = accelerators.Find(accelerator);
  if (gpu == nullptr) {
    *err = "profile " + o.profile + ": its starter's accelerator " + accelerator + " is not in accelerators.json";
    return false;
  }
  const nlohmann::json& arch = (*model)["architecture"];
  const int64_t seq_length = model->value("seqLength", 4096);
  const double capacity = (*gpu)["memoryGB"].get<double>();
  Layout l;
  if (!ChooseLayout(arch, seq_length, capacity, &l)) {
    *err = "no layout up to 64 nodes fits " + o.model + " on " + accelerator +
           " without context parallelism; write the layout by hand (nemoc plan shows the memory estimate)";
    return false;
  }
  const std::string S_nodes = std::to_string(l.nodes);
  std::string parallelism = "{tensor: " + std::to_string(l.tensor) + ", pipeline: " +
                            std::to_string(l.pipeline) + (l.tensor > 1 ? ", sequenceParallel: true}" : "}");
  std::string y;
  y += "# yaml-language-server: $schema=" + o.schema_ref + "\n";
  y += "#\n";
  y += "# Starter spec from `nemoc init`: " + o.model + " pretraining on " + o.profile + ".\n";
  y += "# It builds as is. Next steps:\n";
  y += "#   nemoc plan " + o.name + ".yaml        # what would run: GPUs, parallelism, memory per GPU\n";
  y += "#   nemoc build " + o.name + ".yaml       # writes out/" + o.name + "/" + target_name + "/\n";
  y += "#   nemoc explain spec.stages.train   # every field, its default and allowed values\n";
  y += "# Editors complete and check it against " + o.schema_ref + " (`nemoc schema` prints it;\n";
  y += "# refresh the file that way after upgrading nemoc).\n";
  y += "apiVersion: nemoc.dev/v1alpha1\n";
  y += "kind: Project\n";
  y += "metadata:\n";
  y += "  name: " + o.name + "\n";
  y += "spec:\n";
  y += "  namespace: nemo-training           # nemoc creates it (00-base/)\n";
  y += "  image:\n";
  y += "    repository: nvcr.io/nvidia/nemo\n";
  y += "    tag: \"25.02\"                     # pin a tag or a digest; never latest\n";
  y += "  # imagePullSecrets: [ngc-registry]  # Secret names only: nemoc never sees credentials\n";
  y += "  model:\n";
  y += "    preset: " + o.model + "    # the catalog: nemoc explain spec.model.preset\n";
  // Llama and Mixtral tokenizers are gated on the Hugging Face Hub (field review A3).
  if (o.model.rfind("llama", 0) == 0 || o.model.rfind("mixtral", 0) == 0) {
    y += "    # A Secret with key HF_TOKEN (kubectl create secret generic hf-token --from-literal=HF_TOKEN=...):\n";
    y += "    # the tokenizer is a gated Hugging Face repository.\n";
    y += "    source: {hfTokenSecret: hf-token}\n";
  }
  // A preset whose Hub repository has no tokenizer to default to (field
  // review A28): pretraining needs spec.model.tokenizer written, here the
  // catalog's starter value, a file the user puts on the results volume.
  if (model->contains("tokenizer")) {
    const nlohmann::json& about = (*model)["tokenizer"];
    y += "    # No default tokenizer (libsonnet/models.json): " + about.value("why", std::string()) + ".\n";
    y += "    # Put that file at this path on the results volume before the training starts:\n";
    y += "    tokenizer: " + about.value("starter", std::string()) + "\n";
  }
  y += "  storage:\n";
  y += "    results:                         # logs and checkpoints, mounted by every pod\n";
  y += starter["storage"].get<std::string>();
  y += "  stages:\n";
  y += "    train:\n";
  y += "      mode: pretrain                 # pretrain | sft | lora (fine-tuning needs model.source)\n";
  y += "      # Sized by nemoc init so the estimate (~" + Fixed1(l.memory_gb) + " GB) fits " +
       (*gpu)["model"].get<std::string>() + " (" + Fixed1(capacity) + " GB).\n";
  y += "      nodes: " + S_nodes + "\n";
  y += "      gpusPerNode: 8\n";
  y += "      parallelism: " + parallelism + "\n";
  y += "      precision: bf16                # or fp8 on H100, H200 and B200\n";
  y += "      batch: {micro: 1, global: " + std::to_string(l.global) +
       "}   # global: a multiple of micro × data-parallel size\n";
  y += "      seqLength: " + std::to_string(seq_length) + "\n";
  y += "      maxSteps: 100\n";
  y += "      optimizer: {warmupSteps: 10}   # warm-up shorter than the run (the default is 100)\n";
  y += "      data: {mock: true}             # synthetic tokens; replace with your dataset\n";
  y += "  targets:\n";
  y += "    - name: " + target_name + "\n";
  y += "      profile: " + o.profile + "\n";
  std::string target = starter["targetLines"].get<std::string>();
  for (size_t at = target.find("{QUEUE}"); needs_queue && at != std::string::npos; at = target.find("{QUEUE}")) {
    target.replace(at, 7, o.cluster_queue);
  }
  y += target;
  std::string fabric = starter["fabric"].get<std::string>();
  if (!fabric.empty() && l.nodes == 1) {
    y += "      # One node: NCCL stays inside it, no fabric needed. For several nodes:\n";
    // Comment out each line that is not a comment already (the lines are
    // indented 6; a profile's last line may lack its newline).
    std::string commented;
    for (size_t at = 0; at < fabric.size();) {
      size_t end = fabric.find('\n', at);
      end = end == std::string::npos ? fabric.size() : end + 1;
      std::string line = fabric.substr(at, end - at);
      if (line.compare(0, 8, "      # ") != 0 && line.size() >= 6) line.insert(6, "# ");
      commented += line;
      at = end;
    }
    fabric = commented;
  }
  y += fabric;
  if (!y.empty() && y.back() != '\n') y += '\n';
  *yaml = std::move(y);
  return true;
}

}  // namespace nemoc
