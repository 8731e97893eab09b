// The Jsonnet helpers in libsonnet/, evaluated through libjsonnet itself:
// its import path is the library directory and a directory whose nemoc/ is
// that library directory (nemoc's own libraries import each other as
// 'nemoc/<path>', which nemoc resolves in jsonnet_expander.cc; the jsonnet
// CLI needs the same, see bench/run).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "stages.h"

extern "C" {
#include <libjsonnet.h>

#include "test_prerequisite.h"
}

namespace nemoc {
namespace {

// A directory holding only nemoc -> libsonnet/, made once per test process
// and removed when it exits (each ctest run is its own process: one was left
// in /tmp per test before).
// Its nemoc/ holds a link to each entry of libsonnet/ and the tables nemoc
// generates: the stage table (stages.h StageTableSource), as
// nemoc/stages.libsonnet, and the engine table, nemoc/engines.libsonnet.
struct NamespaceDirHolder {
  std::filesystem::path made;
  NamespaceDirHolder() {
    namespace fs = std::filesystem;
    made = fs::temp_directory_path() / ("nemoc-libsonnet-test-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(made, ec);
    fs::create_directories(made / "nemoc", ec);
    for (const auto& entry : fs::directory_iterator(NEMOC_SOURCE_DIR "/libsonnet")) {
      fs::create_symlink(entry.path(), made / "nemoc" / entry.path().filename(), ec);
    }
    nemoc::StageTable table;
    nemoc::Diagnostics diags;
    EXPECT_TRUE(table.Load(NEMOC_SOURCE_DIR "/libsonnet", {}, nullptr, &diags));
    std::ofstream(made / "nemoc" / "stages.libsonnet") << nemoc::StageTableSource(table.stages());
    // And the engine table nemoc generates from libsonnet/engines/ (jsonnet_expander.h
    // PluginTable): each engine with its title and notes from its description.
    std::string engines = "{\n";
    for (const auto& entry : fs::directory_iterator(NEMOC_SOURCE_DIR "/libsonnet/engines")) {
      if (entry.path().extension() != ".libsonnet") continue;
      fs::path described = entry.path();
      described.replace_extension(".json");
      std::ifstream in(described);
      const nlohmann::json about = nlohmann::json::parse(in);
      engines += "  '" + entry.path().stem().string() + "': (import 'nemoc/engines/" +
                 entry.path().filename().string() + "') + {";
      for (const char* member : {"title", "clusterBootstrapNote", "editWhileRunning"}) {
        engines += std::string(" ") + member + ":: " + about[member].dump() + ",";
      }
      engines += " },\n";
    }
    std::ofstream(made / "nemoc" / "engines.libsonnet") << engines << "}\n";
  }
  ~NamespaceDirHolder() {
    std::error_code ec;
    std::filesystem::remove_all(made, ec);  // links and the table, never what the links point to
  }
};

std::string NamespaceDir() {
  static const NamespaceDirHolder holder;
  return holder.made.string();
}

void AddLibraryPaths(JsonnetVm* vm) {
  jsonnet_jpath_add(vm, NEMOC_SOURCE_DIR "/libsonnet");
  jsonnet_jpath_add(vm, NamespaceDir().c_str());
}

nlohmann::json Eval(const std::string& snippet) {
  JsonnetVm* vm = jsonnet_make();
  AddLibraryPaths(vm);
  int failed = 0;
  char* out = jsonnet_evaluate_snippet(vm, "test", snippet.c_str(), &failed);
  std::string text = out;
  jsonnet_realloc(vm, out, 0);
  jsonnet_destroy(vm);
  EXPECT_EQ(0, failed) << text;
  return failed ? nlohmann::json() : nlohmann::json::parse(text);
}

// libjsonnet 0.18 implements these in Jsonnet code, which costs orders of
// magnitude more than the native builtins (bench/RESULTS.md): the library
// uses the native form or its own helper instead.
TEST(LibsonnetTest, LibraryCodeAvoidsStdFunctionsImplementedInJsonnet) {
  const std::vector<std::pair<std::string, std::string>> banned = {
      {"std.format(", "build strings with +"},
      {"std.manifestYaml", "emit data; nemoc's C++ writes YAML ({'$nemoc.yaml': value})"},
      {"std.manifestJson", "'' + value serialises natively"},
      {"std.sort(", "k8s.stringSet, or object fields (sorted natively)"},
      {"std.set(", "k8s.stringSet"},
      {"std.uniq(", "k8s.stringSet"},
      {"std.objectHas(", "std.objectHasEx(o, k, false): std.objectHas wraps it in Jsonnet"},
      {"std.objectHasAll(", "std.objectHasEx(o, k, true)"},
      {"std.rstripChars(", "arithmetic or std.substr (see k8s.decimal)"},
      {"std.lstripChars(", "std.substr"},
      {"std.stripChars(", "std.substr"},
  };
  // '...' % x and "..." % x: string formatting, implemented in Jsonnet.
  // String literals become S (a '%' inside one is text); text blocks
  // (|||) are skipped.
  const std::regex literal(R"('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")");
  const std::regex percent(R"(S\s*%)");
  std::vector<std::string> problems;
  size_t files = 0;
  for (const char* dir : {"/libsonnet", "/profiles"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::string(NEMOC_SOURCE_DIR) + dir)) {
      if (entry.path().extension() != ".libsonnet") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      bool text_block = false;
      for (int number = 1; std::getline(in, line); ++number) {
        if (line.find("|||") != std::string::npos) {
          text_block = !text_block;
          continue;
        }
        if (text_block) continue;
        const std::string code = std::regex_replace(line, literal, "S").substr(
            0, std::regex_replace(line, literal, "S").find("//"));
        const std::string where = entry.path().filename().string() + ":" + std::to_string(number);
        for (const auto& [call, instead] : banned) {
          if (code.find(call) != std::string::npos) problems.push_back(where + ": " + call + " -> " + instead);
        }
        if (std::regex_search(code, percent)) problems.push_back(where + ": '%' formatting -> +");
      }
    }
  }
  EXPECT_GT(files, 20u);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

TEST(LibsonnetTest, StringSetSortsAndDropsDuplicatesLikeStdSet) {
  EXPECT_EQ(Eval("(import 'k8s.libsonnet').stringSet(['b', 'a', 'b', 'C', ''])"),
            nlohmann::json({"", "C", "a", "b"}));
  EXPECT_EQ(Eval("(import 'k8s.libsonnet').stringSet([])"), nlohmann::json::array());
}

TEST(LibsonnetTest, ContentNameChangesWithTheContentOnlyAndFitsTheBudget) {
  const std::string k8s = "(import 'k8s.libsonnet')";
  const nlohmann::json a = Eval(k8s + ".contentName('demo-train', 46, {steps: 10, env: ['A']})");
  ASSERT_TRUE(a.is_string());
  EXPECT_EQ(a, Eval(k8s + ".contentName('demo-train', 46, {env: ['A'], steps: 10})"))
      << "field order must not matter";
  EXPECT_NE(a, Eval(k8s + ".contentName('demo-train', 46, {steps: 20, env: ['A']})"));
  EXPECT_EQ("demo-train-", a.get<std::string>().substr(0, 11));
  EXPECT_EQ(19u, a.get<std::string>().size());
  const std::string long_base(60, 'x');
  const std::string cut = Eval(k8s + ".contentName('" + long_base + "', 46, [1])");
  EXPECT_EQ(46u, cut.size());
}

// Issue #48: a GitOps engine is one implementation of libsonnet/engine.libsonnet
// (engines/argocd.libsonnet and engines/flux.libsonnet are the two), and
// gitops.libsonnet asks each engine the spec names for its part. A third one
// joins by name alone (implementations): its stage annotations, kept kinds,
// files, bootstrap, removal, namespace and edit note reach the target, and a
// member it lacks is named.
TEST(GitopsLibsonnetTest, AnEngineIsOneImplementationOfTheContract) {
  const std::string engine =
      "local gitops = import 'gitops.libsonnet'; "
      "local fake = (import 'engine.libsonnet') + { name:: 'fake', dirs:: ['gitops/fake'], "
      "  namespace(ctx):: ctx.spec.gitops.fake.namespace, "
      "  stageAnnotations(ctx, dir, o, workload):: {'fake.dev/wave': std.toString(gitops.wave(dir))} "
      "    + (if workload then {'fake.dev/workload': 'true'} else {}), "
      "  keepAnnotations:: {'fake.dev/keep': 'true'}, "
      "  files(ctx, files):: {'gitops/fake/root-x.yaml': {kind: 'Root', stages: gitops.stageDirs(files)}}, "
      "  clusterBootstrap(ctx):: 'apply the bundle', "
      "  bootstrap(ctx):: ['apply gitops/fake/root-x.yaml'], "
      "  remove(ctx, kept):: ['delete the root; ' + kept], "
      "  editWhileRunning:: 'Fake: applies it at once.' }; "
      "local g = gitops { implementations+: { fake: fake } }; "
      "local ctx = {project: 'p', target: {name: 't'}, workloadKinds: gitops.coreWorkloads, "
      "  spec: {gitops: {engines: ['fake'], platform: false, repoURL: 'https://git.example/r.git', revision: 'main', "
      "  path: 'out', clusters: {}, fake: {namespace: 'fake-system'}}}}; "
      "local files = {'30-train/job-a.yaml': {apiVersion: 'batch/v1', kind: 'Job', metadata: {name: 'a'}}, "
      "  '00-base/namespace-n.yaml': {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'n'}}}; ";
  const nlohmann::json out = Eval(engine + "{files: g.files(ctx, files), summary: g.summary(ctx, files)}");
  EXPECT_EQ(out["files"]["30-train/job-a.yaml"]["metadata"]["annotations"],
            (nlohmann::json{{"fake.dev/wave", "30"}, {"fake.dev/workload", "true"}}));
  EXPECT_EQ(out["files"]["00-base/namespace-n.yaml"]["metadata"]["annotations"],
            (nlohmann::json{{"fake.dev/wave", "0"}, {"fake.dev/keep", "true"}}));
  EXPECT_EQ(out["files"]["gitops/fake/root-x.yaml"]["stages"], (nlohmann::json{"00-base", "30-train"}));
  EXPECT_EQ(out["files"].size(), 3u);  // no Argo CD or Flux object
  EXPECT_EQ(out["summary"]["bootstrap"], (nlohmann::json{"apply gitops/fake/root-x.yaml"}));
  EXPECT_EQ(out["summary"]["namespaces"], (nlohmann::json{{"gitops/fake", "fake-system"}}));
  EXPECT_EQ(out["summary"]["editWhileRunning"], (nlohmann::json{"Fake: applies it at once."}));
  EXPECT_NE(out["summary"]["remove"][0].get<std::string>().find("delete the root; the Namespace and the "),
            std::string::npos);

  // A member it lacks is named.
  JsonnetVm* vm = jsonnet_make();
  AddLibraryPaths(vm);
  int failed = 0;
  char* text = jsonnet_evaluate_snippet(
      vm, "test", (std::string(engine) + "local bare = (import 'engine.libsonnet') + {name:: 'bare'}; "
                  "(gitops { implementations+: { bare: bare } }).summary(ctx { spec+: {gitops+: {engines: ['bare']}} }, files)")
                      .c_str(),
      &failed);
  const std::string err = text;
  jsonnet_realloc(vm, text, 0);
  jsonnet_destroy(vm);
  EXPECT_EQ(1, failed);
  EXPECT_NE(err.find("engine bare lacks dirs"), std::string::npos) << err;
}

// The platform components meet their contract (component.libsonnet lacking:
// platform.libsonnet checks only a --jpath directory's, once per evaluation).
TEST(PlatformLibsonnetTest, EveryBuiltInComponentHasTheRequiredMembers) {
  size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(NEMOC_SOURCE_DIR "/libsonnet/components")) {
    if (entry.path().extension() != ".libsonnet") continue;
    ++seen;
    EXPECT_EQ(nlohmann::json(), Eval("(import 'components/" + entry.path().filename().string() + "').lacking"))
        << entry.path();
  }
  EXPECT_GE(seen, 10u);
  const nlohmann::json lacking = Eval("((import 'component.libsonnet') + {name: 'x', tag: 'v1'}).lacking");
  EXPECT_NE(lacking.get<std::string>().find("component x lacks kind: "), std::string::npos) << lacking;
}

TEST(GitopsLibsonnetTest, StageDirectoriesAreFoundGenerically) {
  const nlohmann::json dirs = Eval(
      "(import 'gitops.libsonnet').stageDirs({'00-base/a.yaml': 1, '70-serve/b.yaml': 1, "
      "'20-data-prep/c.yaml': 1, 'gitops/flux/d.yaml': 1, '20-data-prep/e.yaml': 1})");
  EXPECT_EQ((nlohmann::json{"00-base", "20-data-prep", "70-serve"}), dirs);
  EXPECT_EQ(70, Eval("(import 'gitops.libsonnet').wave('70-serve')"));
}

// stages.train.timeout becomes activeDeadlineSeconds (F17): Go durations as
// the schema admits them, rounded up to whole seconds.
TEST(K8sLibsonnetTest, DurationSecondsReadsGoDurations) {
  const std::string k8s = "(import 'k8s.libsonnet')";
  EXPECT_EQ(43200, Eval(k8s + ".durationSeconds('12h')"));
  EXPECT_EQ(5400, Eval(k8s + ".durationSeconds('1h30m')"));
  EXPECT_EQ(5400, Eval(k8s + ".durationSeconds('1.5h')"));
  EXPECT_EQ(90, Eval(k8s + ".durationSeconds('1m30s')"));
  EXPECT_EQ(2, Eval(k8s + ".durationSeconds('1500ms')"));
  EXPECT_EQ(1, Eval(k8s + ".durationSeconds('10us')"));
  EXPECT_EQ(61, Eval(k8s + ".durationSeconds('1m0.5s')"));
}

TEST(GitopsLibsonnetTest, WorkloadsWithTtlAreRefused) {
  JsonnetVm* vm = jsonnet_make();
  AddLibraryPaths(vm);
  int failed = 0;
  char* out = jsonnet_evaluate_snippet(
      vm, "test",
      "local g = import 'gitops.libsonnet'; "
      "g.decorate({spec: {gitops: {engines: ['flux']}}, workloadKinds: g.coreWorkloads}, '20-x/job-a.yaml', "
      "{apiVersion: 'batch/v1', kind: 'Job', metadata: {name: 'a'}, spec: {ttlSecondsAfterFinished: 60}})",
      &failed);
  const std::string text = out;
  jsonnet_realloc(vm, out, 0);
  jsonnet_destroy(vm);
  EXPECT_EQ(1, failed);
  EXPECT_NE(std::string::npos, text.find("must not set ttlSecondsAfterFinished")) << text;
}

// What each runtime declares its controller appends to the workload's name in
// pod hostnames (runtime.libsonnet podNameSuffix; output_verifier.cc checks
// name + suffix fit 63), including objects missing the parts it reads.
TEST(RuntimeLibsonnetTest, RuntimesDeclareTheirPodNameSuffixes) {
  auto suffix = [](const std::string& runtime, const std::string& object) {
    return Eval("(import 'runtimes/" + runtime + ".libsonnet').podNameSuffix(" + object + ")");
  };
  // PyTorchJob: <name>-master-0, <name>-worker-<i>.
  EXPECT_EQ(suffix("pytorchjob", "{spec: {pytorchReplicaSpecs: {Worker: {replicas: 3}}}}"), 9);
  EXPECT_EQ(suffix("pytorchjob", "{spec: {pytorchReplicaSpecs: {Worker: {replicas: 11}}}}"), 10);
  EXPECT_EQ(suffix("pytorchjob", "{spec: {pytorchReplicaSpecs: {Master: {replicas: 1}}}}"), 9);
  EXPECT_EQ(suffix("pytorchjob", "{}"), 9);
  // TrainJob: a JobSet of the runtime's replicated job "node": <name>-node-0-15.
  EXPECT_EQ(suffix("trainjob", "{spec: {trainer: {numNodes: 16}}}"), 10);
  // JobSet: <jobset>-<replicatedJob>-<job index>-<pod index>, the longest:
  // "-workers-1-11" is 3 + 7 + 1 + 2.
  EXPECT_EQ(suffix("jobset", "{spec: {replicatedJobs: [{name: 'workers', replicas: 2, template: {spec: {completions: 12}}},"
                             " {name: 'w', replicas: 1, template: {spec: {}}}]}}"),
            13);
  EXPECT_EQ(suffix("jobset", "{spec: {replicatedJobs: [{name: 'workers', replicas: 2}]}}"), 12);
  // An Indexed Job: the Kubernetes core rule (output_verifier.cc) applies.
  EXPECT_EQ(suffix("indexed-job", "{}"), nullptr);
}

TEST(LibsonnetTest, BoundedNameKeepsShortNames) {
  EXPECT_EQ("llama-train", Eval("(import 'k8s.libsonnet').boundedName('llama-train', 46)"));
  const std::string exact(46, 'a');
  EXPECT_EQ(exact, Eval("(import 'k8s.libsonnet').boundedName('" + exact + "', 46)"));
}

TEST(LibsonnetTest, BoundedNameCutsWithAStableHashSuffix) {
  const std::string long_name = std::string(40, 'a') + "-" + std::string(20, 'b') + "-train";
  const nlohmann::json a = Eval("(import 'k8s.libsonnet').boundedName('" + long_name + "', 46)");
  const nlohmann::json b = Eval("(import 'k8s.libsonnet').boundedName('" + long_name + "x', 46)");
  ASSERT_TRUE(a.is_string());
  EXPECT_EQ(46u, a.get<std::string>().size());
  // max - 9 characters of the name, '-', then the hash.
  EXPECT_EQ(std::string(37, 'a') + "-", a.get<std::string>().substr(0, 38));
  EXPECT_NE(a, b) << "different long names must stay distinct";
  EXPECT_EQ(a, Eval("(import 'k8s.libsonnet').boundedName('" + long_name + "', 46)"));
  // md5 of the full name, first 8 hex digits.
  EXPECT_EQ(Eval("std.substr(std.md5('" + long_name + "'), 0, 8)").get<std::string>(),
            a.get<std::string>().substr(38));
}

TEST(LibsonnetTest, BoundedNameNeverEndsThePrefixWithADash) {
  // The cut lands right after a '-': it is dropped, never doubled.
  const std::string name = std::string(36, 'a') + "-" + std::string(30, 'b');
  const std::string out = Eval("(import 'k8s.libsonnet').boundedName('" + name + "', 46)");
  EXPECT_EQ(std::string::npos, out.find("--")) << out;
  EXPECT_EQ(std::string(36, 'a') + "-", out.substr(0, 37));
  EXPECT_EQ(45u, out.size());
}

TEST(LibsonnetTest, TwoObjectsCannotMapToOneFile) {
  // k8s.files merges per-stage maps and refuses a path produced twice.
  const std::string snippet =
      "local k = import 'k8s.libsonnet';"
      "k.files([{'a/configmap-x.yaml': {}}, {'a/configmap-x.yaml': {}}])";
  JsonnetVm* vm = jsonnet_make();
  AddLibraryPaths(vm);
  int failed = 0;
  char* out = jsonnet_evaluate_snippet(vm, "test", snippet.c_str(), &failed);
  std::string text = out;
  jsonnet_realloc(vm, out, 0);
  jsonnet_destroy(vm);
  EXPECT_EQ(1, failed);
  EXPECT_NE(std::string::npos, text.find("two objects map to the file a/configmap-x.yaml")) << text;
}

TEST(LibsonnetTest, LoraModulesMapToNemo1Names) {
  EXPECT_EQ(nlohmann::json({"attention_qkv", "attention_dense"}),
            Eval("(import 'nemo/lora_modules.libsonnet').toNemo1(['q_proj','v_proj','k_proj','o_proj'])"));
  EXPECT_EQ(nlohmann::json({"mlp_fc1", "mlp_fc2", "attention_qkv"}),
            Eval("(import 'nemo/lora_modules.libsonnet').toNemo1(['gate_proj','up_proj','down_proj','linear_qkv'])"));
}

TEST(LibsonnetTest, LoraModulesMapHuggingFaceNamesToNemo2Names) {
  const std::string lora = "(import 'nemo/lora_modules.libsonnet')";
  EXPECT_EQ(nlohmann::json({"linear_qkv", "linear_proj"}),
            Eval(lora + ".toNemo2(['q_proj','v_proj','k_proj','o_proj'])"));
  EXPECT_EQ(nlohmann::json({"linear_fc1", "linear_fc2"}),
            Eval(lora + ".toNemo2(['gate_proj','up_proj','down_proj'])"));
  // NeMo 1 names written by users mean the same modules in NeMo 2.
  EXPECT_EQ(nlohmann::json({"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}),
            Eval(lora + ".toNemo2(['attention_qkv','attention_dense','mlp_fc1','mlp_fc2'])"));
  EXPECT_EQ(nlohmann::json({"linear_fc2", "linear_qkv"}),
            Eval(lora + ".toNemo2(['linear_fc2','linear_qkv','q_proj'])"));
}

TEST(LibsonnetTest, LoraTableCoversEveryNameTheSchemaAccepts) {
  // The schema's enum of targetModules and the one table agree exactly.
  const nlohmann::json table = Eval("(import 'nemo/lora_modules.libsonnet').modules");
  std::ifstream in(NEMOC_SOURCE_DIR "/schemas/project.schema.json");
  const nlohmann::json schema = nlohmann::json::parse(in);
  const nlohmann::json names =
      schema["definitions"]["train"]["properties"]["peft"]["properties"]["targetModules"]["items"]["enum"];
  ASSERT_TRUE(names.is_array());
  EXPECT_EQ(names.size(), table.size());
  const std::set<std::string> nemo2 = {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
  for (const auto& name : names) {
    SCOPED_TRACE(name.dump());
    ASSERT_TRUE(table.contains(name.get<std::string>()));
    EXPECT_TRUE(nemo2.count(table[name.get<std::string>()]["nemo2"].get<std::string>()));
    EXPECT_TRUE(table[name.get<std::string>()]["nemo1"].is_string());
  }
}

TEST(LibsonnetTest, Nemo2PrecisionSelectsTheMixedPrecisionPlugin) {
  const std::string nemo2 = "(import 'nemo/nemo2.libsonnet')";
  EXPECT_EQ(nlohmann::json({{"bf16", "bf16_mixed"}, {"fp8", "bf16_with_fp8_mixed"}}),
            Eval(nemo2 + ".precisionPlugins"));
  EXPECT_EQ(nlohmann::json::array({{{"comment", "Precision: fp8"}},
                                   {{"assign", "recipe.trainer.plugins"},
                                    {"value", {{"$call", "bf16_with_fp8_mixed"}}}}}),
            Eval(nemo2 + ".precision({precision: 'fp8'})"));
  EXPECT_EQ(nlohmann::json({{"assign", "recipe.trainer.plugins"}, {"value", {{"$call", "bf16_mixed"}}}}),
            Eval(nemo2 + ".precision({precision: 'bf16'})[1]"));
}

TEST(LibsonnetTest, Nemo2ProgramPassesOverridesVerbatim) {
  // NeMo-Run overrides are key=value; nothing is rewritten to Hydra's ++ form.
  // --verbose where NeMo-Run's CLI would otherwise exit 0 on a failed run
  // (versions.json nemoRun): 25.04 and later, not 25.02 or 24.12.
  const auto program = [](const std::string& tag) {
    return Eval("(import 'nemo/nemo2.libsonnet').program({spec: {stages: {train: "
                "{image: {repository: 'nvcr.io/nvidia/nemo', tag: '" + tag + "'}, "
                "overrides: ['trainer.max_steps=5']}}}})");
  };
  EXPECT_EQ(nlohmann::json({"/config/recipe.py", "--factory", "recipe()", "--verbose", "trainer.max_steps=5"}),
            program("25.04"));
  EXPECT_EQ(nlohmann::json({"/config/recipe.py", "--factory", "recipe()", "--verbose", "trainer.max_steps=5"}),
            program("25.07"));
  EXPECT_EQ(nlohmann::json({"/config/recipe.py", "--factory", "recipe()", "trainer.max_steps=5"}), program("25.02"));
  EXPECT_EQ(nlohmann::json({"/config/recipe.py", "--factory", "recipe()", "trainer.max_steps=5"}), program("24.12"));
}

TEST(LibsonnetTest, HydraOverridesUseTheSafeForm) {
  EXPECT_EQ(nlohmann::json({"++trainer.max_steps=5", "+model.x=1", "++a=b", "~model.y"}),
            Eval("local h = import 'nemo/hydra.libsonnet';"
                 "[h.safeOverride(o) for o in ['trainer.max_steps=5', '+model.x=1', '++a=b', '~model.y']]"));
}

TEST(LibsonnetTest, KubernetesVariableSyntaxInUserArgumentsIsEscaped) {
  const nlohmann::json c = Eval(
      "(import 'launch.libsonnet').container(['--nnodes=2'], ['s.py', 'a=$(HOME)'], null)");
  EXPECT_EQ(nlohmann::json({"torchrun"}), c["command"]);
  EXPECT_EQ(nlohmann::json({"--nnodes=2", "s.py", "a=$$(HOME)"}), c["args"]);
}

TEST(LibsonnetTest, APrologueKeepsArgumentsOutOfTheShell) {
  const nlohmann::json c = Eval(
      "(import 'launch.libsonnet').container([], ['s.py', 'x=1; rm -rf /'], 'set -e')");
  EXPECT_EQ(nlohmann::json({"bash", "-c", "set -e\nexec torchrun \"$@\"", "torchrun"}), c["command"]);
  EXPECT_EQ(nlohmann::json({"s.py", "x=1; rm -rf /"}), c["args"]);
}

TEST(LibsonnetTest, DecimalsAreShort) {
  EXPECT_EQ(nlohmann::json({"0.9", "80", "0.05", "12.5", "0", "0.000001"}),
            Eval("local k = import 'k8s.libsonnet'; [k.decimal(x) for x in [0.9, 80, 0.05, 12.5, 0, 0.000001]]"));
}

TEST(LibsonnetTest, StagesShareOnePathTable) {
  // ctx.states: each stage's state hash (paths.libsonnet, decision F15), bound by nemoc.libsonnet.
  const std::string ctx =
      "local p = import 'paths.libsonnet';"
      "local ctx = {project: 'demo', target: {name: 'east'}, spec: {stages: {train: {}}, model: {}},"
      "  storage: {results: {mountPath: '/results'}, data: {mountPath: '/data'}},"
      "  states: {dataPrep: 'd1', train: 't1', convert: 'c1', tensorrtLLM: 'e1', evaluate: 'v1'}};";
  EXPECT_EQ("/data/demo/east/prepared/d1/corpus_text_document",
            Eval(ctx + "p.preparedDataset(ctx, {jsonKey: 'text'})"));
  EXPECT_EQ("/results/demo/east/train/t1/checkpoints/megatron_gpt.nemo", Eval(ctx + "p.nemoCheckpoint(ctx, {})"));
  EXPECT_EQ("/results/ckpt/x.nemo", Eval(ctx + "p.nemoCheckpoint(ctx, {checkpoint: 'ckpt/x.nemo'})"));
  EXPECT_EQ("/results/demo/east/huggingface/c1", Eval(ctx + "p.huggingfaceDir(ctx)"));
  EXPECT_EQ(Eval(ctx + "p.huggingfaceDir(ctx)"), Eval(ctx + "p.huggingfaceSource(ctx, {})"));
  EXPECT_EQ("/results/demo/east/tensorrt-llm/e1/engine", Eval(ctx + "p.engineDir(ctx)"));
  EXPECT_EQ(Eval(ctx + "p.engineDir(ctx)"), Eval(ctx + "p.engineSource(ctx, {})"));
  EXPECT_EQ("/results/engines/e", Eval(ctx + "p.engineSource(ctx, {engine: 'engines/e'})"));
  EXPECT_EQ("/results/demo/east/evaluate/v1", Eval(ctx + "p.evaluateDir(ctx)"));
  // The stage being hashed reads the draft; a state read before it is bound is a library bug.
  EXPECT_EQ("/results/demo/east/train/@state", Eval(ctx + "p.trainDir(p.drafting(ctx, 'train'))"));
  {
    JsonnetVm* vm = jsonnet_make();
    AddLibraryPaths(vm);
    int failed = 0;
    char* out = jsonnet_evaluate_snippet(vm, "test", (ctx + "p.mergeDir(ctx)").c_str(), &failed);
    EXPECT_TRUE(failed);
    EXPECT_NE(std::string::npos, std::string(out).find("state directory of mergeLora is read before"));
    jsonnet_realloc(vm, out, 0);
    jsonnet_destroy(vm);
  }
  // A training chain: each stage logs in its own state directory; the train
  // stage restores the pretraining's final .nemo.
  const std::string chain = ctx +
      "local chained = ctx {spec+: {stages+: {pretrain: {}}}, states+: {pretrain: 'p1'}};";
  EXPECT_EQ("/results/demo/east/train/t1", Eval(chain + "p.trainDir(chained)"));
  EXPECT_EQ("/results/demo/east/pretrain/p1/checkpoints/megatron_gpt.nemo", Eval(chain + "p.restoreNemo(chained)"));
  EXPECT_EQ("/results/demo/east/pretrain/p1", Eval(chain + "p.trainDir(chained {trainKey: 'pretrain'})"));
  EXPECT_EQ(nlohmann::json(), Eval(chain + "p.restoreNemo(chained {trainKey: 'pretrain'})"));
}

TEST(LibsonnetTest, StageOrderIsTheDirectoryOrder) {
  const nlohmann::json stages = Eval("(import 'stages/order.libsonnet').stages");
  ASSERT_EQ(12u, stages.size());
  std::string previous;
  for (const auto& s : stages) {
    const std::string dir = s["dir"].get<std::string>();
    EXPECT_LT(previous, dir) << "directories must sort in pipeline order";
    previous = dir;
  }
  EXPECT_EQ("28-pretrain", Eval("(import 'stages/order.libsonnet').dir.pretrain"));
  EXPECT_EQ("30-train", Eval("(import 'stages/order.libsonnet').dir.train"));
  // Every training stage of the chain has a directory (stages/chain.libsonnet).
  EXPECT_EQ(nlohmann::json({"pretrain", "train"}), Eval("(import 'stages/chain.libsonnet').keys"));
  EXPECT_EQ("35-merge-lora", Eval("(import 'stages/order.libsonnet').dir.mergeLora"));
}

TEST(LibsonnetTest, RunOnceKeepsArgumentsOutOfTheShell) {
  // What the script does is tested by running it (tests/state/run_once.py);
  // here: every path and the program stay argv entries, after the marker.
  const nlohmann::json c =
      Eval("(import 'stages/pod.libsonnet').runOnce('/m', ['/a b', '/c'], ['python3', 'x; rm -rf /'])");
  ASSERT_EQ(4u, c["command"].size());
  EXPECT_EQ("bash", c["command"][0]);
  EXPECT_EQ("-c", c["command"][1]);
  EXPECT_EQ("nemoc", c["command"][3]);
  const std::string script = c["command"][2].get<std::string>();
  EXPECT_EQ(std::string::npos, script.find("/a b"));
  EXPECT_EQ(std::string::npos, script.find("rm -rf /"));
  EXPECT_EQ(nlohmann::json({"/m", "/a b", "/c", "python3", "x; rm -rf /"}), c["args"]);
}

// #48: a workload kind's health is code (libsonnet/health.libsonnet): the
// condition-type helper writes the Lua and CEL the engines read, a runtime
// may give its own, and a runtime written in the earlier condition form is
// read as code; a record in neither form names its runtime.
TEST(HealthLibsonnetTest, HealthIsCodeWithTheConditionFormAsAHelper) {
  const nlohmann::json h = Eval("(import 'health.libsonnet').conditions('/spec/suspend', 'Done', 'Broken')");
  EXPECT_EQ(h["suspend"], "/spec/suspend");
  const std::string lua = h["lua"].get<std::string>();
  EXPECT_NE(lua.find("if c.type == \"Broken\" and c.status == \"True\" then\n      hs.status = \"Degraded\""),
            std::string::npos)
      << lua;
  EXPECT_NE(lua.find("if c.type == \"Done\" and c.status == \"True\" then\n      hs.status = \"Healthy\""),
            std::string::npos);
  EXPECT_EQ(h["cel"]["current"],
            "has(status.conditions) && status.conditions.exists(e, e.type == 'Done' && e.status == 'True')");
  EXPECT_EQ(h["cel"]["failed"],
            "has(status.conditions) && status.conditions.exists(e, e.type == 'Broken' && e.status == 'True')");
  EXPECT_FALSE(h.contains("mutatedBy"));
  EXPECT_TRUE(Eval("(import 'health.libsonnet').conditions('/s', 'A', 'B', cel=false)")["cel"].is_null());

  // The earlier form is the helper's record; code passes through as given.
  EXPECT_EQ(Eval("(import 'health.libsonnet').normalized('old', {suspend: '/spec/suspend', success: 'Done', "
                 "failure: 'Broken', cel: true, mutatedBy: ['/spec/x']})"),
            Eval("(import 'health.libsonnet').conditions('/spec/suspend', 'Done', 'Broken', mutatedBy=['/spec/x'])"));
  const std::string own = "{suspend: '/spec/suspend', lua: 'hs = {status = \"Healthy\"} return hs', "
                          "cel: {current: \"status.phase == 'Completed'\", failed: \"status.phase == 'Failed'\"}}";
  EXPECT_EQ(Eval("(import 'health.libsonnet').normalized('own', " + own + ")"), Eval(own));

  // What the engines get from a kind whose runtime wrote its own code.
  const nlohmann::json cm = Eval(
      "local g = import 'engines/argocd.libsonnet'; g.argocdHealthConfig({spec: {gitops: {argocd: {namespace: 'argocd'}}}, "
      "workloadKinds: {'batch.volcano.sh/Job': " + own + "}})");
  EXPECT_EQ(cm["data"]["resource.customizations.health.batch.volcano.sh_Job"], "hs = {status = \"Healthy\"} return hs");
  const nlohmann::json expr = Eval("(import 'engines/flux.libsonnet').healthCheckExpr('batch.volcano.sh/v1alpha1', 'Job', " + own + ")");
  EXPECT_EQ(expr, nlohmann::json({{"apiVersion", "batch.volcano.sh/v1alpha1"}, {"kind", "Job"},
                                  {"current", "status.phase == 'Completed'"}, {"failed", "status.phase == 'Failed'"}}));

  // Neither form: the runtime is named.
  JsonnetVm* vm = jsonnet_make();
  AddLibraryPaths(vm);
  int failed = 0;
  char* out = jsonnet_evaluate_snippet(vm, "test", "(import 'health.libsonnet').normalized('volcano', {kind: 'x'})", &failed);
  const std::string text = out;
  jsonnet_realloc(vm, out, 0);
  jsonnet_destroy(vm);
  EXPECT_EQ(1, failed);
  EXPECT_NE(text.find("runtime volcano: workload.health needs suspend, lua and cel"), std::string::npos) << text;
}

// The condition helper's Lua reads a kind's own suspend field: a kind held
// at another pointer than the built-in kinds' (/spec/suspend,
// /spec/runPolicy/suspend) reads Suspended while Kueue holds it, not
// Progressing. Run in Lua 5.1, the version Argo CD embeds (gopher-lua).
TEST(HealthLibsonnetTest, TheConditionHelpersLuaReadsTheKindsOwnSuspendField) {
  if (std::system("command -v lua5.1 > /dev/null 2>&1") != 0) NEMOC_MISSING_PREREQUISITE("lua5.1 is not installed");
  const std::string lua =
      Eval("(import 'health.libsonnet').conditions('/spec/hold/suspend', 'Done', 'Broken')")["lua"].get<std::string>();
  char dir_template[] = "/tmp/nemoc-health-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir_template));
  const std::string dir = dir_template;
  auto status = [&](const std::string& obj) {
    {
      std::ofstream f(dir + "/check.lua");
      f << "obj = " << obj << "\nlocal function check()\n" << lua << "end\nio.write(check().status)\n";
    }
    const std::string cmd = "lua5.1 " + dir + "/check.lua > " + dir + "/out 2>&1";
    EXPECT_EQ(0, std::system(cmd.c_str())) << lua;
    std::ifstream in(dir + "/out");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ("Suspended", status("{spec = {hold = {suspend = true}}}"));
  EXPECT_EQ("Progressing", status("{spec = {hold = {suspend = false}}}"));
  EXPECT_EQ("Progressing", status("{spec = {suspend = true}}"));  // not this kind's field
  EXPECT_EQ("Healthy", status("{spec = {}, status = {conditions = {{type = \"Done\", status = \"True\"}}}}"));
  std::filesystem::remove_all(dir);
  // The built-in kinds' test is the one line it always was (argocd-cm unchanged).
  EXPECT_EQ(Eval("(import 'health.libsonnet').luaSuspended('/spec/runPolicy/suspend')"),
            "obj.spec ~= nil and (obj.spec.suspend == true or (obj.spec.runPolicy ~= nil and obj.spec.runPolicy.suspend == true))");
}

}  // namespace
}  // namespace nemoc
