#include "starter.h"

#include <algorithm>
#include <cstdio>

#include "edit_distance.h"
#include "output_verifier.h"

namespace nemoc {

namespace {

// What a starter needs per profile: storage and target lines, and the GPU the
// layout is sized for (eks-efa: the instance type's GPU, see the profile's
// `instances` table; gke-a4: B200).
struct Template {
  const char* profile;
  const char* target_name;
  const char* accelerator;
  const char* storage;  // lines below `results:`, indented 8
  const char* target;   // lines below `profile:`, indented 6
  // The fabric a multi-node run needs, after `target`; commented out for one
  // node (NCCL stays inside the node).
  const char* fabric;
  bool needs_queue;     // target lines hold {QUEUE}: the cluster's ClusterQueue
};

const Template kTemplates[] = {
    {"vanilla-k8s", "onprem", "h100-80gb",
     "        nfs: {server: nfs.example.internal, path: /export/nemo}   # or pvc: {claimName: ...}\n",
     "      gpu: h100-80gb                 # a100-40gb | a100-80gb | h100-80gb | h200-141gb | b200-180gb\n",
     "      # GPUDirect RDMA through the NVIDIA Network Operator; without it NCCL falls back to TCP.\n"
     "      rdma: {resourceName: nvidia.com/hostdev, count: 8, networks: [ib-sriov-net]}\n",
     false},
    {"eks-efa", "eks", "h100-80gb",
     "        fsxLustre: {storageClassName: fsx-sc, size: 1200Gi}   # or s3, pvc, nfs\n",
     "      instanceType: p5.48xlarge      # 8 × H100 80GB, 32 EFA devices\n"
     "      # NCCL over EFA needs libfabric + aws-ofi-nccl, which NGC images lack: build FROM spec.image\n"
     "      # with the EFA installer and aws-ofi-nccl (aws-samples/awsome-distributed-training\n"
     "      # 3.test_cases/megatron/nemo/kubernetes/Dockerfile), push it, and name it here.\n"
     "      efa: {image: {repository: 123456789012.dkr.ecr.us-east-1.amazonaws.com/nemo-efa, tag: nemo25.02-efa}, awsOfiNccl: 1.13.2}\n"
     "      # iamRoleArn: arn:aws:iam::123456789012:role/nemo-training   # IRSA for S3\n",
     "", false},
    {"gke-a4", "gke-a4", "b200-180gb",
     "        gcs: {bucket: my-training-bucket}   # Cloud Storage FUSE; or pvc, nfs\n",
     "      # Kueue gang admission with topology-aware placement on the cluster's ClusterQueue\n"
     "      # (nemoc init --cluster-queue, from `kubectl get clusterqueues`); covers: what it covers\n"
     "      # (Cluster Toolkit queues: GPUs only).\n"
     "      kueue: {clusterQueue: {QUEUE}, covers: [nvidia.com/gpu], topology: block}\n"
     "      # gcpServiceAccount: nemo-training@my-project.iam.gserviceaccount.com   # Workload Identity\n",
     "", true},
};

constexpr int64_t kGpusPerNode = 8;
constexpr double kTargetFill = 0.8;  // leave room: the estimate is approximate

struct Layout {
  int64_t nodes = 0, tensor = 1, pipeline = 1, global = 0;
  double memory_gb = 0;
};

nlohmann::json TrainFor(const Layout& l, int64_t seq_length) {
  return {{"mode", "pretrain"},
          {"nodes", l.nodes},
          {"gpusPerNode", kGpusPerNode},
          {"parallelism", {{"tensor", l.tensor}, {"pipeline", l.pipeline}, {"context", 1},
                           {"expert", 1}, {"sequenceParallel", l.tensor > 1}}},
          {"batch", {{"micro", 1}, {"global", l.global}}},
          {"seqLength", seq_length}};
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
        l.memory_gb = EstimateMemory(TrainFor(l, seq_length), arch).total_gb;
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

std::vector<std::string> StarterProfiles() {
  std::vector<std::string> names;
  for (const auto& t : kTemplates) names.push_back(t.profile);
  return names;
}

bool StarterSpec(const StarterOptions& o, const ModelCatalog& catalog,
                 const AcceleratorTable& accelerators, std::string* yaml, std::string* err) {
  // metadata.name's rule (schema definition projectName): the file is NAME.yaml.
  // 63: the name is the value of label app.kubernetes.io/part-of (B18).
  bool name_ok = !o.name.empty() && o.name.size() <= 63 && o.name.front() >= 'a' &&
                 o.name.front() <= 'z' && o.name.back() != '-';
  for (char c : o.name) name_ok = name_ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!name_ok) {
    *err = "project name '" + o.name + "' must be a DNS-1123 label of at most 63 characters "
           "starting with a letter (lowercase letters, digits, '-'): it is the value of label "
           "app.kubernetes.io/part-of, at most 63 characters";
    return false;
  }
  const Template* tmpl = nullptr;
  for (const auto& t : kTemplates) {
    if (o.profile == t.profile) tmpl = &t;
  }
  if (tmpl == nullptr) {
    const std::string suggestion = SuggestClosest(o.profile, StarterProfiles());
    *err = "no starter for profile '" + o.profile + "'" +
           (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
           "; starters exist for vanilla-k8s, eks-efa and gke-a4";
    return false;
  }
  if (tmpl->needs_queue && o.cluster_queue.empty()) {
    *err = "the " + o.profile + " starter admits through the cluster's Kueue ClusterQueue, whose name nemoc "
           "cannot guess (Cluster Toolkit clusters have used both a4-high and a4): pass --cluster-queue NAME, "
           "a name from `kubectl get clusterqueues`";
    return false;
  }
  if (!o.cluster_queue.empty() && !tmpl->needs_queue) {
    *err = "--cluster-queue is for the gke-a4 starter, which uses the cluster's queue; the " + o.profile +
           " starter uses no Kueue (add spec.targets[].kueue by hand: nemoc explain spec.targets)";
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
  const nlohmann::json* gpu = accelerators.Find(tmpl->accelerator);
  if (gpu == nullptr) {
    *err = std::string("accelerator ") + tmpl->accelerator + " missing from accelerators.json";
    return false;
  }
  const nlohmann::json& arch = (*model)["architecture"];
  const int64_t seq_length = model->value("seqLength", 4096);
  const double capacity = (*gpu)["memoryGB"].get<double>();
  Layout l;
  if (!ChooseLayout(arch, seq_length, capacity, &l)) {
    *err = "no layout up to 64 nodes fits " + o.model + " on " + tmpl->accelerator +
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
  y += "#   nemoc build " + o.name + ".yaml       # writes out/" + o.name + "/" + tmpl->target_name + "/\n";
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
  y += "  storage:\n";
  y += "    results:                         # logs and checkpoints, mounted by every pod\n";
  y += tmpl->storage;
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
  y += "      data: {mock: true}             # synthetic tokens; replace with your dataset\n";
  y += "  targets:\n";
  y += "    - name: " + std::string(tmpl->target_name) + "\n";
  y += "      profile: " + o.profile + "\n";
  std::string target = tmpl->target;
  if (tmpl->needs_queue) target.replace(target.find("{QUEUE}"), 7, o.cluster_queue);
  y += target;
  if (*tmpl->fabric != '\0' && l.nodes == 1) {
    y += "      # One node: NCCL stays inside it, no fabric needed. For several nodes:\n";
    std::string fabric = tmpl->fabric;
    for (size_t at = 0; at < fabric.size(); at = fabric.find('\n', at) + 1) {
      if (fabric.compare(at, 8, "      # ") != 0) fabric.insert(at + 6, "# ");
    }
    y += fabric;
  } else {
    y += tmpl->fabric;
  }
  *yaml = std::move(y);
  return true;
}

}  // namespace nemoc
