#include "plan.h"

#include <cmath>
#include <cstdio>

#include "cost.h"
#include "facts.h"
#include "metrics.h"
#include "normalizer.h"
#include "summary.h"

namespace nemoc {

namespace {

double OneDecimal(double v) { return std::round(v * 10) / 10; }

std::string S(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", v.get<double>());
    return buffer;
  }
  return v.dump();
}

// Markdown emphasis off, for the terminal.
std::string Plain(std::string text) {
  for (size_t at = text.find("**"); at != std::string::npos; at = text.find("**", at)) text.erase(at, 2);
  return text;
}

// Pads by characters, not bytes ("nodes × GPUs").
std::string Row(const std::string& key, const std::string& value) {
  size_t width = 0;
  for (unsigned char c : key) width += (c & 0xC0) != 0x80;
  return "    " + key + std::string(width < 18 ? 18 - width : 1, ' ') + value + "\n";
}

}  // namespace

nlohmann::json MemoryFacts(const MemoryEstimate& e, double capacity_gb) {
  return {{"text", DescribeFit(e, capacity_gb)},
          {"totalGB", OneDecimal(e.total_gb)},
          {"capacityGB", OneDecimal(capacity_gb)},
          {"percent", std::round(100 * e.total_gb / capacity_gb)},
          {"weightsGB", OneDecimal(e.weights_gb)},
          {"gradientsGB", OneDecimal(e.gradients_gb)},
          {"optimizerGB", OneDecimal(e.optimizer_gb)},
          {"activationsGB", OneDecimal(e.activations_gb)},
          {"overheadGB", OneDecimal(e.overhead_gb)}};
}

nlohmann::json PlanTarget(const nlohmann::json& normalized, const TypedSpec& typed, const nlohmann::json& target,
                          const TargetFacts& facts,
                          const std::map<std::string, nlohmann::json>& files,
                          const std::string& dir) {
  const auto& spec = normalized["spec"];
  nlohmann::json plan = {{"name", target["name"]}, {"profile", target["profile"]}, {"dir", dir}};
  // An environment names what the target takes from spec.environments, and
  // the namespace it keeps apart from the others on its cluster.
  if (target.contains("environment") && target["environment"].is_string()) {
    plan["environment"] = target["environment"];
    plan["namespace"] = spec["namespace"];
  }
  if (!facts.accelerator.empty()) plan["accelerator"] = facts.accelerator;
  if (!facts.gpu_model.empty()) plan["gpuModel"] = facts.gpu_model;
  if (facts.library.train.present) {
    plan["runtime"] = facts.library.train.runtime;
    plan["fabric"] = facts.library.train.fabric;
  }
  // Each stage of the training chain (pretrain, then train) under its own key.
  for (const std::string& key : typed.TrainingKeys()) {
    const TrainingStage& train = *typed.Training(key);
    const TrainSizes s = ComputeTrainSizes(train);
    const int64_t micro = train.batch.micro;
    const int64_t global = train.batch.global;
    nlohmann::json parallelism = {{"tensor", s.tensor},     {"pipeline", s.pipeline},
                                  {"context", s.context},   {"data", s.data_parallel},
                                  {"expert", s.expert},
                                  {"sequenceParallel", train.parallelism.sequence_parallel}};
    if (s.virtual_pipeline > 0) parallelism["virtualPipeline"] = s.virtual_pipeline;
    nlohmann::json batch = {{"micro", micro}, {"global", global}};
    if (s.data_parallel > 0 && micro * s.data_parallel > 0) {
      batch["microBatchesPerStep"] = global / (micro * s.data_parallel);
    }
    plan[key] = {{"mode", train.mode},
                 {"framework", train.framework},
                 {"precision", train.precision},
                 {"nodes", s.nodes},
                 {"gpusPerNode", s.gpus_per_node},
                 {"gpus", s.world_size},
                 {"seqLength", train.seq_length},
                 {"maxSteps", train.max_steps},
                 {"modelFlopsPerSample", ModelFlopsPerSample(spec["model"]["architecture"], train.seq_length)},
                 {"parallelism", parallelism},
                 {"batch", batch}};
  }
  auto memory = facts.memory.find("train");
  if (memory != facts.memory.end()) plan["memory"] = MemoryFacts(memory->second, facts.capacity_gb);
  plan["stages"] = StageDirs(files);
  // Issue #46 item 3: what the target costs -- GPUs per stage, and per
  // training stage the estimated step and wall time and GPU-hours (cost.h).
  std::map<std::string, int64_t> training_gpus;
  for (const std::string& key : TrainingStages(spec["stages"])) {
    if (!plan.contains(key)) continue;
    for (const auto& [stage, stage_dir] : facts.library.stage_dirs) {
      if (stage == key) training_gpus[stage_dir] = plan[key]["gpus"].get<int64_t>();
    }
    if (plan.contains("accelerator")) {
      const std::string precision = plan[key]["precision"].get<std::string>();
      auto peak = facts.peak_tflops.find(precision);
      auto prior = facts.priors.find(key);
      auto none = facts.no_prior.find(key);
      plan[key]["cost"] = TrainingCost(
          plan[key], peak == facts.peak_tflops.end() ? 0 : peak->second,
          prior == facts.priors.end() ? MfuPrior{} : prior->second,
          peak == facts.peak_tflops.end() ? "no " + precision + " peak for this GPU in nemoc's table"
                                          : none == facts.no_prior.end() ? std::string("no prior") : none->second);
      plan[key]["cost"]["priorKey"] = PriorKey(spec["model"], facts.accelerator, precision);
    }
  }
  plan["gpusByStage"] = GpusByStage(files, "nvidia.com/gpu", training_gpus);
  nlohmann::json by_kind = nlohmann::json::object();
  for (const auto& [path, object] : files) {
    const std::string kind = object.value("kind", "");
    by_kind[kind] = by_kind.value(kind, 0) + 1;
  }
  plan["objects"] = {{"total", files.size()}, {"byKind", by_kind}};
  // The cluster bundle's choice per component (issue #43): what it installs,
  // what the cluster already runs (targets[].clusterHas over the profile's
  // defaults).
  const auto& cluster = facts.library.gitops.cluster;
  if (facts.library.gitops.present && cluster.is_object()) {
    plan["platform"] = {{"cluster", cluster.value("name", "")},
                        {"installs", facts.library.gitops.platform},
                        {"clusterHas", cluster.value("has", "")}};
  }
  return plan;
}

std::string RenderPlanText(const std::string& spec_path, const std::string& project,
                           const nlohmann::json& target_plans) {
  std::string out = project + " (" + spec_path + ")\n";
  for (const auto& t : target_plans) {
    out += "  target " + S(t["name"]) + ": profile " + S(t["profile"]) +
           (t.contains("environment") ? ", environment " + S(t["environment"]) + " (namespace " + S(t["namespace"]) + ")"
                                      : std::string()) +
           ", writes " + S(t["dir"]) + "/\n";
    for (const char* key : {"pretrain", "train"}) {
      if (!t.contains(key)) continue;
      const auto& train = t[key];
      const auto& p = train["parallelism"];
      // A training chain: each stage's rows under its name, indented.
      const bool chain = t.contains("pretrain");
      if (chain) out += "    spec.stages." + std::string(key) + "\n";
      const std::string stage = chain ? "  " : "";
      out += Row(stage + "training", S(train["mode"]) + ", " + S(train["framework"]) + ", " +
                                 S(train["precision"]) + ", " + S(train["maxSteps"]) + " steps");
      out += Row(stage + "nodes × GPUs", S(train["nodes"]) + " × " + S(train["gpusPerNode"]) + " = " +
                                     S(train["gpus"]) + " GPUs" +
                                     (t.contains("gpuModel") ? " (" + S(t["gpuModel"]) + ")" : ""));
      std::string parallel = "TP " + S(p["tensor"]) + " · PP " + S(p["pipeline"]) + " · CP " +
                             S(p["context"]) + " · DP " + S(p["data"]);
      if (p.contains("virtualPipeline")) parallel += " · VPP " + S(p["virtualPipeline"]);
      if (p["expert"].get<int64_t>() > 1) parallel += " · EP " + S(p["expert"]);
      if (p["sequenceParallel"].get<bool>()) parallel += " · sequence parallel";
      out += Row(stage + "parallelism", parallel);
      const auto& b = train["batch"];
      std::string batch = "micro " + S(b["micro"]) + " · global " + S(b["global"]);
      if (b.contains("microBatchesPerStep")) {
        batch += " (" + S(b["microBatchesPerStep"]) + " micro-batches per DP rank per step)";
      }
      out += Row(stage + "batch", batch);
      out += Row(stage + "sequence length", S(train["seqLength"]));
      char flops[64];
      std::snprintf(flops, sizeof flops, "%.4e per sequence (fwd+bwd)",
                    train["modelFlopsPerSample"].get<double>());
      out += Row(stage + "model FLOPs", flops);
      if (train.contains("cost")) {
        const std::string cost = DescribeCost(train["cost"]);
        out += Row(stage + "cost (estimate)", Plain(cost));
        // The delta against the committed tree: its SUMMARY.md's row (cmd_plan.cc).
        if (t.contains("committed") && t["committed"].contains(key) && t["committed"][key].get<std::string>() != cost) {
          const std::string committed = t["committed"][key].get<std::string>();
          const std::string delta = CostDelta(committed, cost);
          out += Row(stage + "  committed", Plain(committed) + (delta.empty() ? "" : "; now " + delta));
        }
        const std::string basis = DescribeCostBasis(train["cost"]);
        if (!basis.empty()) out += Row(stage + "cost basis", basis);
      }
    }
    if (t.contains("memory")) {
      out += Row("memory per GPU", S(t["memory"]["text"]));
    }
    if (t.contains("runtime")) out += Row("runtime", S(t["runtime"]));
    if (t.contains("fabric")) out += Row("fabric", S(t["fabric"]));
    std::string stages;
    for (const auto& stage : t["stages"]) stages += (stages.empty() ? "" : " → ") + S(stage);
    out += Row("stages", stages);
    if (t.contains("gpusByStage")) out += Row("GPUs per stage", DescribeGpusByStage(t["gpusByStage"]));
    std::string kinds;
    for (const auto& [kind, count] : t["objects"]["byKind"].items()) {
      kinds += (kinds.empty() ? "" : ", ") + kind + " " + S(count);
    }
    out += Row("objects", S(t["objects"]["total"]) + " (" + kinds + ")");
    if (t.contains("platform")) {
      const auto& p = t["platform"];
      std::string installs;
      for (const auto& c : p["installs"]) installs += (installs.empty() ? "" : ", ") + S(c);
      const std::string has = S(p["clusterHas"]);
      out += Row("platform", "cluster " + S(p["cluster"]) + ": installs " + (installs.empty() ? "nothing" : installs) +
                                 "; already there: " + (has.empty() ? "nothing" : has));
    }
  }
  return out;
}

}  // namespace nemoc
