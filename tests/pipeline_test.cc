// The whole pipeline on every profile, read from the committed golden tree of
// examples/llama31-8b-pipeline.yaml (GoldenTest keeps it equal to what nemoc
// builds): every stage directory is there, and the stages agree with each
// other on what they hand over (dataset prefix, .nemo, HuggingFace directory,
// engine) and with the spec (config.pbtxt parsed back).
#include <filesystem>
#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "diagnostic.h"
#include "pbtxt_test_parser.h"
#include "spec_loader.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace nemoc::testing {
namespace {

using nlohmann::json;

const char* const kTargets[] = {"onprem", "eks", "gke"};
const char* const kStageDirs[] = {"00-base",     "05-monitoring", "10-nccl-test",    "20-data-prep",
                                  "30-train",    "40-evaluate",   "50-convert",      "60-tensorrt-llm",
                                  "70-serve"};

std::string Root(const std::string& target) { return SourceDir() + "/out/llama31-8b/" + target; }

json Load(const std::string& path) {
  Document doc;
  Diagnostics diags;
  const std::string text = ReadFile(path);
  EXPECT_FALSE(text.empty()) << "missing " << path;
  if (!LoadSpecText(path, text, &doc, &diags)) {
    ADD_FAILURE() << RenderText(diags, {});
    return json();
  }
  return doc.root;
}

// Every object of a stage directory: file name -> object.
std::map<std::string, json> Stage(const std::string& target, const std::string& dir) {
  std::map<std::string, json> objects;
  for (const auto& entry : fs::directory_iterator(Root(target) + "/" + dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "kustomization.yaml") objects[name] = Load(entry.path().string());
  }
  return objects;
}

json Find(const std::map<std::string, json>& objects, const std::string& kind) {
  for (const auto& [_, o] : objects) {
    if (o.value("kind", "") == kind) return o;
  }
  ADD_FAILURE() << "no " << kind;
  return json::object();
}

// The workload of a single-pod stage: a Job, or on a Flux-delivered Kueue target the
// JobSet wrapping it (libsonnet/job.libsonnet stageJob, field review C4).
json FindStageJob(const std::map<std::string, json>& objects) {
  for (const auto& [_, o] : objects) {
    const std::string kind = o.value("kind", "");
    if (kind == "Job" || kind == "JobSet") return o;
  }
  ADD_FAILURE() << "no Job or JobSet";
  return json::object();
}

// The first container of the pod template inside any workload object.
const json* FirstContainer(const json& node) {
  if (node.is_object()) {
    if (node.contains("containers") && node["containers"].is_array() && !node["containers"].empty()) {
      return &node["containers"][0];
    }
    for (const auto& [_, v] : node.items()) {
      if (const json* c = FirstContainer(v)) return c;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (const json* c = FirstContainer(v)) return c;
    }
  }
  return nullptr;
}

std::string Arg(const json& container, const std::string& prefix) {
  for (const auto& list : {container.value("command", json::array()), container.value("args", json::array())}) {
    for (const auto& a : list) {
      const std::string s = a.get<std::string>();
      if (s.rfind(prefix, 0) == 0) return s.substr(prefix.size());
    }
  }
  ADD_FAILURE() << "no argument " << prefix;
  return "";
}

// Visits every container (and init container) of every object.
void ForEachContainer(const json& node, const std::function<void(const json&)>& visit) {
  if (node.is_object()) {
    for (const char* key : {"containers", "initContainers"}) {
      if (node.contains(key) && node[key].is_array()) {
        for (const auto& c : node[key]) {
          if (c.contains("image")) visit(c);
        }
      }
    }
    for (const auto& [_, v] : node.items()) ForEachContainer(v, visit);
  } else if (node.is_array()) {
    for (const auto& v : node) ForEachContainer(v, visit);
  }
}

TEST(PipelineTest, EveryStageOnEveryProfile) {
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    const json root = Load(Root(target) + "/kustomization.yaml");
    json want = json::array();
    for (const char* dir : kStageDirs) want.push_back(dir);
    EXPECT_EQ(want, root["resources"]);
    for (const char* dir : kStageDirs) {
      EXPECT_TRUE(fs::is_regular_file(Root(target) + "/" + dir + "/kustomization.yaml")) << dir;
    }
  }
}

TEST(PipelineTest, NcclPreflightRunsWithTheTrainingPlacement) {
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    auto train = Stage(target, "30-train");
    auto nccl = Stage(target, "10-nccl-test");
    for (const auto& [file, object] : train) {
      if (object["kind"] == "Service") continue;  // the runtime's headless Service, if any
      const json* t = FirstContainer(object);
      ASSERT_NE(nullptr, t) << file;
      // The same workload kind, the same env, devices, mounts and security.
      const json n_object = Find(nccl, object["kind"]);
      const json* n = FirstContainer(n_object);
      ASSERT_NE(nullptr, n);
      EXPECT_EQ((*t)["env"], (*n)["env"]);
      EXPECT_EQ((*t)["resources"], (*n)["resources"]);
      EXPECT_EQ((*t)["securityContext"], (*n)["securityContext"]);
      EXPECT_EQ((*t)["image"], (*n)["image"]);
      EXPECT_NE(object["metadata"]["name"], n_object["metadata"]["name"]);
      const std::string args = (*n)["args"].dump();
      EXPECT_NE(std::string::npos, args.find("/nemoc/all_reduce_perf.py")) << args;
      EXPECT_NE(std::string::npos, args.find("--min-busbw-gbps=100")) << args;
    }
  }
}

TEST(PipelineTest, StagesAgreeOnSharedPaths) {
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    const json base_config = [&] {
      for (const auto& [file, o] : Stage(target, "00-base")) {
        if (file.find("train-config") != std::string::npos) return o;
      }
      return json();
    }();
    Document hydra;
    Diagnostics diags;
    ASSERT_TRUE(LoadSpecText("config.yaml", base_config["data"]["config.yaml"].get<std::string>(), &hydra, &diags));
    const json& config = hydra.root;

    // dataPrep's output prefix + _text_document is what training blends.
    const json prep_job = FindStageJob(Stage(target, "20-data-prep"));
    const json* prep = FirstContainer(prep_job);
    ASSERT_NE(nullptr, prep);
    EXPECT_EQ(json({1.0, Arg(*prep, "--output-prefix=") + "_text_document"}), config["model"]["data"]["data_prefix"]);

    // Evaluation and conversion read the .nemo exp_manager saves at the end.
    const json& exp = config["exp_manager"];
    EXPECT_TRUE(exp["checkpoint_callback_params"]["save_nemo_on_train_end"].get<bool>());
    const std::string nemo = exp["explicit_log_dir"].get<std::string>() + "/checkpoints/" + exp["name"].get<std::string>() + ".nemo";
    // Objects held in locals: FirstContainer points into them.
    const json evaluate_job = FindStageJob(Stage(target, "40-evaluate"));
    const json convert_job = FindStageJob(Stage(target, "50-convert"));
    const json build_job = FindStageJob(Stage(target, "60-tensorrt-llm"));
    const json* evaluate = FirstContainer(evaluate_job);
    const json* convert = FirstContainer(convert_job);
    const json* build = FirstContainer(build_job);
    ASSERT_TRUE(evaluate && convert && build);
    EXPECT_EQ(nemo, Arg(*evaluate, "--nemo_model="));
    EXPECT_EQ("nemo-llama", Arg(*evaluate, "--model="));  // the harness adapter of the llama family
    EXPECT_EQ("hellaswag,winogrande,lambada", Arg(*evaluate, "--tasks="));
    EXPECT_EQ(nemo, Arg(*convert, "--input_name_or_path="));
    // The HuggingFace directory conversion writes is what the engine build reads.
    EXPECT_EQ(Arg(*convert, "--hf_output_path="), Arg(*build, "--checkpoint="));
    EXPECT_EQ("fp8", Arg(*build, "--quantization="));
    EXPECT_EQ("64", Arg(*build, "--max-batch-size="));

    // Triton's config.pbtxt, parsed back, points at the engine and follows the spec.
    const json model_map = Find(Stage(target, "70-serve"), "ConfigMap");
    json pbtxt;
    std::string err;
    ASSERT_TRUE(ParsePbtxtForTest(model_map["data"]["tensorrt_llm.config.pbtxt"].get<std::string>(), &pbtxt, &err)) << err;
    EXPECT_EQ("tensorrt_llm", pbtxt["name"]);
    EXPECT_EQ("tensorrtllm", pbtxt["backend"]);
    EXPECT_EQ(64, pbtxt["max_batch_size"]);
    std::map<std::string, std::string> parameters;
    for (const auto& p : pbtxt["parameters"]) parameters[p["key"]] = p["value"]["string_value"];
    EXPECT_EQ(Arg(*build, "--engine-dir="), parameters["gpt_model_path"]);
    EXPECT_EQ("inflight_fused_batching", parameters["gpt_model_type"]);
    // tensorrtllm_backend v0.11.0's template inputs (serve.triton_templates checks them all).
    std::map<std::string, json> inputs;
    for (const auto& i : pbtxt["input"]) inputs[i["name"]] = i;
    EXPECT_EQ("input_ids", pbtxt["input"][0]["name"]);
    EXPECT_EQ(json({{"$enum", "TYPE_INT32"}}), pbtxt["input"][0]["data_type"]);
    ASSERT_EQ(1u, inputs.count("end_id"));
    EXPECT_EQ(true, inputs["end_id"]["optional"]);
    // The text front: preprocessing and postprocessing read the tokenizer of the checkpoint the
    // engine was built from; the ensemble wires them around the engine.
    json pre;
    ASSERT_TRUE(ParsePbtxtForTest(model_map["data"]["preprocessing.config.pbtxt"].get<std::string>(), &pre, &err)) << err;
    std::map<std::string, std::string> pre_parameters;
    for (const auto& p : pre["parameters"]) pre_parameters[p["key"]] = p["value"]["string_value"];
    EXPECT_EQ(Arg(*build, "--checkpoint="), pre_parameters["tokenizer_dir"]);
    // modelName (llama31-8b) is the ensemble: the model a client calls with text.
    json ensemble;
    ASSERT_TRUE(ParsePbtxtForTest(model_map["data"]["llama31-8b.config.pbtxt"].get<std::string>(), &ensemble, &err)) << err;
    EXPECT_EQ("llama31-8b", ensemble["name"]);
    EXPECT_EQ("ensemble", ensemble["platform"]);
    std::set<std::string> ensemble_inputs;
    for (const auto& i : ensemble["input"]) ensemble_inputs.insert(i["name"].get<std::string>());
    EXPECT_EQ(1u, ensemble_inputs.count("text_input"));
    EXPECT_EQ(1u, ensemble_inputs.count("max_tokens"));
    EXPECT_EQ(0u, model_map["data"].count("ensemble.config.pbtxt"));
    EXPECT_EQ(json({{"$enum", "KIND_CPU"}}), pbtxt["instance_group"][0]["kind"]);
  }
}

TEST(PipelineTest, TritonServesOnItsPortsWithHealthProbes) {
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    auto serve = Stage(target, "70-serve");
    const json deployment = Find(serve, "Deployment");
    const json* triton = FirstContainer(deployment);
    ASSERT_NE(nullptr, triton);
    EXPECT_EQ("/v2/health/ready", (*triton)["readinessProbe"]["httpGet"]["path"]);
    EXPECT_EQ("/v2/health/ready", (*triton)["startupProbe"]["httpGet"]["path"]);
    EXPECT_EQ("/v2/health/live", (*triton)["livenessProbe"]["httpGet"]["path"]);
    json ports = json::object();
    const json service = Find(serve, "Service");
    for (const auto& p : service["spec"]["ports"]) ports[p["name"].get<std::string>()] = p["port"];
    EXPECT_EQ(json({{"grpc", 8001}, {"http", 8000}, {"metrics", 8002}}), ports);
    EXPECT_TRUE(deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"].get<bool>());
    EXPECT_FALSE(deployment["spec"].contains("replicas")) << "the HPA owns the replica count";
    EXPECT_EQ(4, Find(serve, "HorizontalPodAutoscaler")["spec"]["maxReplicas"]);
    EXPECT_EQ(1, Find(serve, "PodDisruptionBudget")["spec"]["maxUnavailable"]);
    // The ServiceMonitor scrapes the Service's metrics port.
    const json monitor = Find(Stage(target, "05-monitoring"), "ServiceMonitor");
    EXPECT_EQ("metrics", monitor["spec"]["endpoints"][0]["port"]);
    EXPECT_EQ(service["spec"]["selector"], monitor["spec"]["selector"]["matchLabels"]);
    const json rule = Find(Stage(target, "05-monitoring"), "PrometheusRule");
    const std::string rules = rule.dump();
    EXPECT_NE(std::string::npos, rules.find("DCGM_FI_DEV_GPU_UTIL")) << rules;
    EXPECT_NE(std::string::npos, rules.find("< 80")) << rules;
    EXPECT_NE(std::string::npos, rules.find("> 95")) << rules;
  }
}

TEST(PipelineTest, JobsAreGitOpsSafeAndRunUnderKueueOnGke) {
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    for (const char* dir : kStageDirs) {
      for (const auto& [file, object] : Stage(target, dir)) {
        SCOPED_TRACE(std::string(dir) + "/" + file);
        if (object["kind"] == "Job") {
          EXPECT_FALSE(object["spec"].contains("ttlSecondsAfterFinished"));
          const bool kueue = std::string(target) == "gke";
          EXPECT_EQ(kueue, object["spec"].value("suspend", false));
          EXPECT_EQ(kueue, object["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
        }
        ForEachContainer(object, [&](const json& c) {
          const std::string image = c["image"].get<std::string>();
          EXPECT_EQ(std::string::npos, image.find(":latest")) << image;
          EXPECT_NE(std::string::npos, image.find(':')) << image;
          EXPECT_TRUE(c.contains("imagePullPolicy")) << image;
          if (c.contains("resources")) {
            // Extended resources and cpu: requests = limits. Memory is requested and never
            // limited: every stage pod mounts a Memory-medium /dev/shm, which counts against
            // a memory limit (B6, k8s.io/api core/v1 EmptyDirVolumeSource.SizeLimit).
            json requests = c["resources"]["requests"];
            requests.erase("memory");
            EXPECT_EQ(requests, c["resources"].value("limits", json::object())) << image;
          }
        });
      }
    }
  }
}

}  // namespace
}  // namespace nemoc::testing
