#include "summary.h"

#include "cost.h"

#include "cluster_bundle.h"
#include "compiler.h"

#include <cctype>
#include <set>
#include <sstream>
#include <tuple>

#include "data_dir.h"
#include "facts.h"
#include "fit_check.h"
#include "normalizer.h"

namespace nemoc {

namespace {

std::string S(int64_t v) { return std::to_string(v); }
std::string S(const nlohmann::json& v) { return std::to_string(v.get<int64_t>()); }

std::string Row(const std::string& key, const std::string& value) {
  return "| " + key + " | " + value + " |\n";
}

std::string ImageRef(const nlohmann::json& image) {
  std::string ref = image["repository"].get<std::string>() + ":" + image["tag"].get<std::string>();
  if (image.contains("digest")) ref += "@" + image["digest"].get<std::string>();
  return ref;
}

// A value in a table cell: a code span that neither ends early nor splits the row.
std::string Cell(std::string text) {
  constexpr size_t kMax = 80;
  if (text.size() > kMax) {
    size_t cut = kMax - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
    text = text.substr(0, cut) + "...";
  }
  std::string out = "`";
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c == '`' ? '\'' : c;
    }
  }
  return out + "`";
}

// What makes this tree differ from a build of the spec file alone: this
// build's --set flags (Git never sees them) and the target's overrides.
std::string RenderProvenance(const SummaryProvenance& provenance, const std::string& spec_name) {
  std::string out;
  if (!provenance.sets.empty()) {
    out += "**Built with `--set`**, which the spec does not record: `nemoc build " + spec_name +
           "` alone makes a different tree, and `nemoc check` reports this one as drift.\n\n";
    for (const auto& set : provenance.sets) out += "- " + Cell("--set " + set) + "\n";
    out += "\n";
  }
  if (!provenance.overrides.empty()) {
    out += "## Overrides for this target\n\n";
    if (provenance.environment.empty()) {
      out += "This target compiles from the spec with `" + provenance.target +
             ".overrides` merged in (a JSON merge patch: null removes).\n\n";
    } else {
      out += "This target compiles from the spec with environment `" + provenance.environment +
             "` (`spec.environments." + provenance.environment + "`), then `" + provenance.target +
             ".overrides`, merged in (JSON merge patches: null removes).\n\n";
    }
    out += "| Field | This target | Spec |\n|---|---|---|\n";
    for (const auto& o : provenance.overrides) {
      out += "| `" + o.path + "` | " + (o.value == "null" ? std::string("removed") : Cell(o.value)) +
             (o.environment.empty() ? std::string() : " (environment " + o.environment + ")") + " | " +
             (o.shared.empty() ? std::string("not set (default)") : Cell(o.shared)) + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

// One scheduling block (schemas/project.schema.json scheduling): field ->
// its values as code spans.
std::vector<std::pair<std::string, std::string>> DescribeScheduling(const nlohmann::json& s) {
  std::vector<std::pair<std::string, std::string>> rows;
  auto list = [](const std::vector<std::string>& items) {
    std::string text;
    for (const auto& i : items) text += (text.empty() ? "" : ", ") + Cell(i);
    return text;
  };
  auto pairs = [&](const nlohmann::json& map) {
    std::vector<std::string> items;
    for (const auto& [k, v] : map.items()) items.push_back(k + "=" + v.get<std::string>());
    return list(items);
  };
  if (s.contains("priorityClassName")) rows.emplace_back("priorityClassName", Cell(s["priorityClassName"].get<std::string>()));
  if (s.contains("tolerations")) {
    std::vector<std::string> items;
    for (const auto& t : s["tolerations"]) {
      std::string one = t.value("key", std::string("*"));
      if (t.value("operator", std::string("Equal")) == "Equal") one += "=" + t.value("value", std::string());
      if (t.contains("effect")) one += ":" + t["effect"].get<std::string>();
      if (t.contains("tolerationSeconds")) one += " for " + std::to_string(t["tolerationSeconds"].get<int64_t>()) + "s";
      items.push_back(one);
    }
    rows.emplace_back("tolerations", list(items));
  }
  if (s.contains("nodeSelector")) rows.emplace_back("nodeSelector", pairs(s["nodeSelector"]));
  if (s.contains("affinity")) {
    std::vector<std::string> items;
    for (const auto& [k, v] : s["affinity"].items()) items.push_back(k);
    rows.emplace_back("affinity", list(items));
  }
  if (s.contains("labels")) rows.emplace_back("pod labels", pairs(s["labels"]));
  if (s.contains("annotations")) rows.emplace_back("pod annotations", pairs(s["annotations"]));
  return rows;
}

std::string RenderSchedulingAndPatches(const nlohmann::json& spec, const TargetFacts& facts) {
  std::vector<std::tuple<std::string, std::string, std::string>> rows;  // pods of, field, added
  auto add = [&](const std::string& where, const nlohmann::json& s) {
    for (auto& [field, text] : DescribeScheduling(s)) rows.emplace_back(where, field, text);
  };
  if (spec.contains("scheduling")) add("every stage", spec["scheduling"]);
  for (const auto& [key, dir] : facts.library.stage_dirs) {
    if (spec["stages"].contains(key) && spec["stages"][key].is_object() && spec["stages"][key].contains("scheduling")) {
      add("`" + dir + "`", spec["stages"][key]["scheduling"]);
    }
  }
  if (rows.empty() && facts.patches.empty()) return "";
  std::string out =
      "## Scheduling and patches\n\n"
      "What the spec adds to the pods nemoc builds (`scheduling`) and changes in its objects (`patches`). A change "
      "here replaces the workload objects it reaches (their names hash everything in them) and resumes in the same "
      "state directories.\n\n";
  if (!rows.empty()) {
    out += "| Pods of | Field | Added |\n|---|---|---|\n";
    for (const auto& [where, field, what] : rows) out += "| " + where + " | " + field + " | " + what + " |\n";
    out += "\n";
  }
  if (!facts.patches.empty()) {
    out += "| Patch | Selects | Change | Files changed |\n|---|---|---|---|\n";
    for (const auto& p : facts.patches) {
      std::string changed;
      for (const auto& f : p.files) changed += (changed.empty() ? "`" : ", `") + f + "`";
      std::string security;
      for (const auto& s : p.security) security += (security.empty() ? "" : ", ") + Cell(s);
      out += "| `" + p.name + "` | " + p.selects + " | " + p.what +
             (security.empty() ? std::string() : "; **changes what its pods may do:** " + security) + " | " +
             (changed.empty() ? std::string("none (already as patched)") : changed) + " |\n";
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> StageDirs(const std::map<std::string, nlohmann::json>& files) {
  std::set<std::string> dirs;
  for (const auto& [path, _] : files) {
    const std::string dir = path.substr(0, path.find('/'));
    if (dir != kGitopsDir) dirs.insert(dir);  // delivered by the engines, not a stage
  }
  return {dirs.begin(), dirs.end()};
}

namespace {

// The command an operator runs to see that the cluster has `name` (a
// Provides cell of "The cluster must already have"; issue #43): a CRD by its
// exact name, an extended resource in the nodes' allocatable, a CSI driver,
// a StorageClass, a claim, a network, the Prometheus / metrics API.
std::string CheckFor(const std::string& name, const std::string& ns) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const size_t slash = name.find('/');
  if (slash != std::string::npos) {
    const std::string left = name.substr(0, slash), right = name.substr(slash + 1);
    if (left == "PersistentVolumeClaim") return "kubectl get pvc " + right + " -n " + ns;
    // A Multus network; a profile whose clusters name networks otherwise
    // says how to check them (platform row `checks`: gke-a4's GKE networks).
    if (left == "network") return "kubectl get network-attachment-definitions " + right + " -n " + ns;
    if (left == "custom.metrics.k8s.io") {
      return "kubectl get --raw /apis/custom.metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods/*/" + right;
    }
    if (!right.empty() && std::isupper(static_cast<unsigned char>(right[0])) && left.find('.') != std::string::npos) {
      std::string plural = lower(right);
      if (plural.back() == 'y') {
        plural = plural.substr(0, plural.size() - 1) + "ies";
      } else if (plural.back() == 's') {
        plural += "es";
      } else {
        plural += "s";
      }
      return "kubectl get crd " + plural + "." + left;
    }
  }
  if (slash != std::string::npos || name.rfind("hugepages-", 0) == 0) {
    std::string escaped;  // kubectl's JSONPath: dots in a key are escaped
    for (char c : name) escaped += c == '.' ? std::string("\\.") : std::string(1, c);
    return "kubectl get nodes -o custom-columns=NODE:.metadata.name,ALLOCATABLE:.status.allocatable." + escaped;
  }
  if (name == "Prometheus") return "kubectl get prometheuses.monitoring.coreos.com -A";
  if (name.rfind("DCGM_FI_", 0) == 0) return "kubectl get pods -A -l app=nvidia-dcgm-exporter";
  if (name.find(".csi.") != std::string::npos) return "kubectl get csidriver " + name;
  return "kubectl get storageclass " + name;
}

}  // namespace

std::string RenderSummary(const nlohmann::json& normalized, const TypedSpec& typed_spec, const nlohmann::json& target,
                          const TargetFacts& target_facts, const nlohmann::json& plan,
                          const std::map<std::string, nlohmann::json>& files,
                          const std::string& spec_name, const SummaryProvenance& provenance) {
  const LibraryFacts& facts = target_facts.library;
  const auto& spec = normalized["spec"];
  const std::string project = normalized["metadata"]["name"].get<std::string>();
  const std::string target_name = target["name"].get<std::string>();
  std::string out;
  out += "# " + project + " / " + target_name + "\n\n";
  // No version (field review C26): a nemoc upgrade that changes no object
  // changes no file; `nemoc --version` names the release.
  out += "Generated by nemoc from `" + spec_name + "`. Do not edit: change the spec and run `nemoc build`.\n\n";
  out += RenderProvenance(provenance, spec_name);
  out += "| | |\n|---|---|\n";
  out += Row("Profile", "`" + target["profile"].get<std::string>() + "`");
  out += Row("Namespace", "`" + spec["namespace"].get<std::string>() + "`");
  const auto& model = spec["model"];
  const auto& arch = model["architecture"];
  std::string model_text = model.contains("preset") ? "`" + model["preset"].get<std::string>() + "`"
                                                    : std::string("custom");
  if (arch.contains("numLayers")) {
    model_text += " (" + S(arch["numLayers"]) + " layers, hidden " + S(arch["hiddenSize"]) + ", " +
                  S(arch["numAttentionHeads"]) + " heads, " + S(arch["numQueryGroups"]) +
                  " query groups" +
                  (arch.contains("numExperts") ? ", " + S(arch["numExperts"]) + " experts" : "") + ")";
  }
  out += Row("Model", model_text);
  // The training chain's sizes are the plan's (plan.cc), made from the same facts.
  const std::string gpu = target_facts.gpu_model.empty() ? "" : " (" + target_facts.gpu_model + ")";
  auto memory = [&](const char* key) {
    auto it = target_facts.memory.find(key);
    return it == target_facts.memory.end() ? std::string() : DescribeFit(it->second, target_facts.capacity_gb);
  };
  auto parallelism = [](const nlohmann::json& p) {
    return "TP " + S(p["tensor"]) + " · PP " + S(p["pipeline"]) + " · CP " + S(p["context"]) + " · DP " +
           S(p["data"]);
  };
  // A training chain's first stage (its line in the stage table says what it
  // hands on); the rows below it describe spec.stages.train.
  if (plan.contains("pretrain") && plan.contains("train")) {
    const auto& pretrain = plan["pretrain"];
    out += Row("Pretraining (`spec.stages.pretrain`)",
               "`" + pretrain["mode"].get<std::string>() + "`, " + S(pretrain["maxSteps"]) + " steps, " +
                   pretrain["precision"].get<std::string>() + ", " + S(pretrain["nodes"]) + " × " +
                   S(pretrain["gpusPerNode"]) + " = **" + S(pretrain["gpus"]) + " GPUs**" + gpu + ", " +
                   parallelism(pretrain["parallelism"]) + ", sequence length " + S(pretrain["seqLength"]));
    const std::string text = memory("pretrain");
    if (!text.empty()) out += Row("Pretraining memory per GPU (estimate)", text);
    if (pretrain.contains("cost")) {
      out += Row(CostRowName("pretrain"), DescribeCost(pretrain["cost"]));
      const std::string basis = DescribeCostBasis(pretrain["cost"]);
      if (!basis.empty()) out += Row(CostBasisRowName("pretrain"), basis);
    }
  }
  if (plan.contains("train")) {
    const auto& train = plan["train"];
    const auto& p = train["parallelism"];
    const std::string framework =
        train["framework"] == "nemo2"
            ? "NeMo 2 (recipe `" +
                  spec["model"].value("nemo2", nlohmann::json::object()).value("recipe", "") +
                  "`, NeMo-Run CLI)"
            : std::string("NeMo 1 (Hydra)");
    out += Row(plan.contains("pretrain") ? "Training (`spec.stages.train`)" : "Training",
               "`" + train["mode"].get<std::string>() + "` with " + framework + ", " +
                   S(train["maxSteps"]) + " steps, " + train["precision"].get<std::string>());
    // Field review F17: the spec's timeout bounds the run itself, not an
    // engine's wait (tests/gitops/replay scenario F17-train-deadline reads this row).
    const TrainingStage* train_spec = typed_spec.Training("train");
    if (train_spec != nullptr && train_spec->timeout) {
      out += Row("Training deadline",
                 "`" + *train_spec->timeout +
                     "` (`spec.stages.train.timeout`), the workload's own `activeDeadlineSeconds`, counted "
                     "again after a Kueue preemption: past it the run fails (`DeadlineExceeded`) and the "
                     "pipeline halts there");
    }
    out += Row("Nodes × GPUs", S(train["nodes"]) + " × " + S(train["gpusPerNode"]) + " = **" + S(train["gpus"]) +
                                   " GPUs**" + gpu);
    std::string parallel = parallelism(p);
    if (p.contains("virtualPipeline")) parallel += " · VPP " + S(p["virtualPipeline"]);
    if (p["expert"].get<int64_t>() > 1) parallel += " · EP " + S(p["expert"]);
    if (p["sequenceParallel"].get<bool>()) parallel += " · sequence parallel";
    out += Row("Parallelism", parallel);
    const auto& b = train["batch"];
    std::string batch = "micro " + S(b["micro"]) + " · global " + S(b["global"]);
    if (b.contains("microBatchesPerStep")) {
      batch += " (" + S(b["microBatchesPerStep"]) + " micro-batches per data-parallel rank per step)";
    }
    out += Row("Batch", batch);
    out += Row("Sequence length", S(train["seqLength"]));
    // D5: the training values a review asks about are facts, so diff -o
    // markdown lists their changes.
    auto num = [](double v) {
      std::ostringstream s;
      s << v;
      return s.str();
    };
    if (train_spec != nullptr) {
      const auto& o = train_spec->optimizer;
      out += Row("Learning rate", "peak " + num(o.lr) + ", min " + num(o.min_lr) + " (cosine), warm-up " +
                                      std::to_string(o.warmup_steps) + " steps, weight decay " + num(o.weight_decay) +
                                      ", gradient clip " + num(o.gradient_clip));
      const TrainData& d = train_spec->data;
      std::string data;
      if (d.mock.value_or(false)) data = "synthetic tokens (mock)";
      if (d.from_data_prep.value_or(false)) data = "the set `20-data-prep` prepares";
      for (const auto& prefix : d.prefixes.value_or(std::vector<TrainData::PrefixesItem>{})) {
        data += (data.empty() ? "" : ", ") + std::string("`") + prefix.path + "` × " + num(prefix.weight);
      }
      if (d.jsonl) {
        data = "JSONL `" + d.jsonl->train + "`" +
               (d.jsonl->validation ? ", validation `" + *d.jsonl->validation + "`" : std::string());
      }
      if (train_spec->data_version) data += " (version `" + *train_spec->data_version + "`)";
      if (!data.empty()) out += Row("Data", data);
    }
    const std::string text = memory("train");
    if (!text.empty()) out += Row("Memory per GPU (estimate)", text);
    // Issue #46 item 3: what the run costs (cost.h); `nemoc diff -o markdown`
    // shows its change against the committed tree.
    if (train.contains("cost")) {
      out += Row(CostRowName("train"), DescribeCost(train["cost"]));
      const std::string basis = DescribeCostBasis(train["cost"]);
      if (!basis.empty()) out += Row(CostBasisRowName("train"), basis);
    }
    if (plan.contains("gpusByStage")) out += Row("GPUs per stage", DescribeGpusByStage(plan["gpusByStage"]));
    out += Row("Image", "`" + ImageRef(spec["stages"]["train"]["image"]) + "`");
    if (facts.train.present) {
      out += Row("Runtime", facts.train.runtime);
      out += Row("Fabric", facts.train.fabric);
      // Memory request/limit and QoS of the training pods, and their queue (issue #15).
      if (!facts.train.resources.empty()) out += Row("Training pod resources", facts.train.resources);
      if (!facts.train.queue.empty()) out += Row("Queue", facts.train.queue);
      std::string privileges;
      for (const auto& p : facts.train.privileges) privileges += (privileges.empty() ? "" : "; ") + p;
      if (!privileges.empty()) out += Row("Privileges", privileges);
    }
  }
  for (const auto& [name, text] : facts.storage) out += Row("Storage (" + name + ")", text);
  // Decision F13, field review C21: renaming them leaves the old ones.
  if (!facts.storage.empty()) {
    out += Row("Renaming storage or the namespace",
               "creates new claims (and a new Namespace); neither the engines nor nemoc delete the old ones "
               "or their data (`nemoc diff` names them with the `kubectl delete` that would): remove them by "
               "hand once nothing needs them");
  }

  if (facts.gitops.present) {
    const auto& gitops = facts.gitops;
    std::string engines;
    for (const auto& e : gitops.engines) engines += (engines.empty() ? "" : ", ") + e;
    out += Row("GitOps", engines + " from `" + gitops.source + "` (objects in `gitops/`)");
    std::string platform;
    for (const auto& c : gitops.platform) platform += (platform.empty() ? "" : ", ") + c;
    const nlohmann::json& cluster = gitops.cluster;
    if (!platform.empty() && cluster.is_object()) {
      // cluster_bundle.h: one tree per cluster, next to the projects.
      // D10: paths from the repository root, as the bootstrap's; a cluster
      // the target does not name is named by a digest of its API server.
      const std::string name = cluster.value("name", "");
      const bool digest = !cluster.value("explicit", false) && name != "in-cluster";
      out += Row("Platform bundle", platform + " (cluster `" + name + "`" +
                                        (digest ? ", a digest of its API server: `targets[].cluster` names it" : "") +
                                        "; `" + cluster.value("path", "") + "/`, applied once per cluster)");
    }
    std::string bootstrap;
    for (const auto& step : gitops.bootstrap) bootstrap += (bootstrap.empty() ? "" : "; ") + step;
    if (!bootstrap.empty()) out += Row("Apply once", "from the repository root: " + bootstrap);
    // Field review C24: what each engine does with a commit that edits a
    // stage while one runs (nemoc diff says it per replaced training too).
    std::string edit;
    for (const auto& sentence : gitops.edit_while_running) edit += (edit.empty() ? "" : " ") + sentence;
    if (!edit.empty()) {
      out += Row("Edit while a stage runs",
                 edit + " An edit of what determines the stage's output starts a new run in a new state directory "
                        "(State directories below); a scheduling-only edit resumes the old run's checkpoints in "
                        "the same one.");
    }
    std::string remove;
    for (const auto& step : gitops.remove) remove += (remove.empty() ? "" : " ") + step;
    if (!remove.empty()) out += Row("Remove this target", "drop it from the spec, build and commit. " + remove);
  }

  const auto dirs = StageDirs(files);
  out += "\n## Stages\n\nApplied in this order (directory names sort in pipeline order).\n\n";
  out += "```mermaid\nflowchart LR\n";
  for (size_t i = 0; i < dirs.size(); ++i) {
    out += "  s" + S(static_cast<int64_t>(i)) + "[\"" + dirs[i] + "\"]";
    if (i + 1 < dirs.size()) out += " --> s" + S(static_cast<int64_t>(i + 1));
    out += "\n";
  }
  out += "```\n\n";
  // What each stage after training does, from the stage builders.
  if (!facts.stages.empty()) {
    out += "| Stage | What it does |\n|---|---|\n";
    for (const auto& [dir, text] : facts.stages) out += "| `" + dir + "` | " + text + " |\n";
    out += "\n";
  }
  // Where each stage writes (decision F15/F16): named by its state hash, kept
  // when the state changes.
  if (!facts.state_dirs.empty()) {
    out += "## State directories\n\n"
           "Each stage writes into a directory named by its state hash: what determines its output (NeMo config or "
           "arguments, image, the directories it reads, `dataVersion` / `stages.dataPrep.version`). A change to any of "
           "these writes a new directory and re-runs every stage after it; a change that only places or schedules "
           "pods (tolerations, node selectors, priority, queue, resources, timeout) resumes in the same one. "
           "Directories of earlier states stay on the volume: nemoc never deletes data, removing them is up to you. "
           "Every stage but training writes `<directory>.nemoc-complete` beside its directory when it succeeds; its "
           "Job, created again for that state (a revert, a Job deleted by hand), then exits at once, so a revert "
           "serves the earlier engine without rebuilding it. To run such a stage again for the same state, remove "
           "that file; training resumes from its own checkpoints.\n\n"
           "| Stage | Writes |\n|---|---|\n";
    for (const auto& [dir, path] : facts.state_dirs) out += "| `" + dir + "` | `" + path + "` |\n";
    out += "\n";
  }
  // D3: what the spec adds to the pods and changes in the objects.
  out += RenderSchedulingAndPatches(spec, target_facts);
  // What the platform bundle installs and what the cluster must already have
  // (platform.libsonnet summary): every resource, CSI driver, storage class,
  // kind and metric the workloads use is provided by one of the two
  // (tests/platform/cluster_needs.py).
  if (facts.platform.present) {
    // "The cluster must already have" has a third column: a check per name
    // each row provides.
    const std::string ns = spec["namespace"].get<std::string>();
    auto table = [&](const std::vector<LibraryFacts::PlatformRow>& rows, const std::string& heading, bool checked) {
      if (rows.empty()) return;
      out += "| " + heading + (checked ? " | Provides | Check |\n|---|---|---|\n" : " | Provides |\n|---|---|\n");
      for (const auto& row : rows) {
        std::string provides, checks;
        for (const auto& p : row.provides) {
          provides += (provides.empty() ? "`" : ", `") + p + "`";
          if (!checked) continue;
          auto own = std::find_if(row.checks.begin(), row.checks.end(), [&](const auto& c) { return c.first == p; });
          checks += (checks.empty() ? "`" : "; `") + (own != row.checks.end() ? own->second : CheckFor(p, ns)) + "`";
        }
        out += "| " + row.what + " | " + provides + (checked ? " | " + checks : std::string()) + " |\n";
      }
      out += "\n";
    };
    out += "## Platform\n\n";
    table(facts.platform.installs, "Installed by the cluster's platform bundle", false);
    table(facts.platform.cluster_has, "The cluster must already have", true);
  }
  out += "## Objects\n\n| File | Kind | Name |\n|---|---|---|\n";
  for (const auto& [path, object] : files) {
    out += "| `" + path + "` | " + object.value("kind", "") + " | " +
           object["metadata"].value("name", "") + " |\n";
  }
  return out;
}

}  // namespace nemoc
