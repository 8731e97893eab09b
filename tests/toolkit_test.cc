// End-to-end tests of the user's toolkit: init, explain, plan, schema,
// metrics, --output json, colour and progress on a terminal, completion
// scripts and help texts. Golden texts live in tests/plan/ and
// tests/explain/; NEMOC_UPDATE_GOLDEN=1 rewrites them (review the diff).
#include "test_prerequisite.h"
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace nemoc::testing {
namespace {

bool UpdateGolden() {
  const char* update = std::getenv("NEMOC_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

// Compares `actual` with the golden file (or rewrites it when asked).
void ExpectGolden(const std::string& relative, const std::string& actual) {
  const std::string path = SourceDir() + "/" + relative;
  if (UpdateGolden()) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " missing; run with NEMOC_UPDATE_GOLDEN=1";
  EXPECT_EQ(ReadFile(path), actual) << relative << " differs; run with NEMOC_UPDATE_GOLDEN=1 "
                                    << "and review the diff";
}

std::vector<std::string> Examples() {
  std::vector<std::string> specs;
  for (const auto& dir : {"examples", "tests/specs"}) {
    for (const auto& entry : fs::directory_iterator(SourceDir() + "/" + dir)) {
      if (entry.path().extension() == ".yaml") {
        specs.push_back(std::string(dir) + "/" + entry.path().filename().string());
      }
    }
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

// --- init ---------------------------------------------------------------

struct InitCase {
  const char* profile;
  const char* model;
  const char* target;
};

TEST(Init, EveryProfileStarterBuildsAsIs) {
  const InitCase cases[] = {{"vanilla-k8s", "", "onprem"},
                            {"eks-efa", "", "eks"},
                            {"gke-a4", "", "gke-a4"},
                            {"gke-a4", "llama3.1-405b", "gke-a4"},
                            {"eks-efa", "mixtral-8x7b", "eks"},
                            {"vanilla-k8s", "llama2-70b", "onprem"},
                            // No default tokenizer (field review A28): the starter writes one.
                            {"vanilla-k8s", "nemotron4-15b", "onprem"},
                            {"eks-efa", "nemotron4-340b", "eks"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.profile) + " " + c.model);
    ScratchDir dir;
    std::vector<std::string> args = {"init", "--profile", c.profile, "starter"};
    if (*c.model) args.insert(args.end(), {"--model", c.model});
    if (std::string(c.profile) == "gke-a4") args.insert(args.end(), {"--cluster-queue", "a4-high"});
    RunResult init = RunNemoc(args, dir.path());
    ASSERT_EQ(init.exit_code, 0) << init.err;
    const std::string spec = ReadFile(dir.path() + "/starter.yaml");
    // The modeline names a file of the spec's own repository holding nemoc's
    // schema (it survives a clone), written beside the spec.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(spec, m, std::regex("^# yaml-language-server: \\$schema=(.+)\n")));
    EXPECT_EQ(m[1].str(), ".nemoc/project.schema.json");
    EXPECT_TRUE(fs::path(m[1].str()).is_relative());
    EXPECT_EQ(ReadFile((fs::path(dir.path()) / m[1].str()).string()),
              ReadFile(SourceDir() + "/schemas/project.schema.json"));
    // Builds with no error and no warning, output verified when the bundle is there.
    RunResult build = RunNemoc({"build", "starter.yaml"}, dir.path());
    ASSERT_EQ(build.exit_code, 0) << build.err << spec;
    EXPECT_EQ(build.err.find("warning"), std::string::npos) << build.err;
    EXPECT_TRUE(fs::exists(dir.path() + "/out/starter/" + c.target + "/kustomization.yaml"));
    // Never overwrites.
    RunResult again = RunNemoc(args, dir.path());
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_NE(again.err.find("already exists"), std::string::npos);
    EXPECT_EQ(ReadFile(dir.path() + "/starter.yaml"), spec);
  }
}

// After an upgrade, the schema copy nemoc init wrote describes the old nemoc:
// every build says so at the modeline until it is refreshed.
TEST(Init, AStaleSchemaCopyIsNamedAtTheModeline) {
  ScratchDir dir;
  ASSERT_EQ(RunNemoc({"init", "demo"}, dir.path()).exit_code, 0);
  RunResult fresh = RunNemoc({"validate", "demo.yaml"}, dir.path());
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(fresh.err.find("spec.stale-schema"), std::string::npos) << fresh.err;
  EXPECT_EQ(fresh.err.find("not this nemoc's"), std::string::npos) << fresh.err;
  dir.Write(".nemoc/project.schema.json", "{}\n");
  RunResult stale = RunNemoc({"validate", "demo.yaml"}, dir.path());
  EXPECT_EQ(stale.exit_code, 0) << stale.err;  // a warning
  EXPECT_NE(stale.err.find("demo.yaml:1:33: warning: the schema the modeline names (.nemoc/project.schema.json) "
                           "is not this nemoc's"),
            std::string::npos)
      << stale.err;
  EXPECT_NE(stale.err.find("refresh it: nemoc schema > .nemoc/project.schema.json"), std::string::npos);
  dir.Write(".nemoc/project.schema.json", RunNemoc({"schema"}).out);
  RunResult refreshed = RunNemoc({"validate", "demo.yaml"}, dir.path());
  EXPECT_EQ(refreshed.err.find("not this nemoc's"), std::string::npos) << refreshed.err;
}

TEST(Init, StdoutAndRefusals) {
  ScratchDir dir;
  RunResult out = RunNemoc({"init", "--stdout", "demo"}, dir.path());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("  name: demo\n"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() + "/demo.yaml"));
  RunResult model = RunNemoc({"init", "--model", "llama3-8bb"}, dir.path());
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("did you mean 'llama3-8b'?"), std::string::npos) << model.err;
  RunResult profile = RunNemoc({"init", "--profile", "aks"}, dir.path());
  EXPECT_EQ(profile.exit_code, 2);
  RunResult name = RunNemoc({"init", "../escape"}, dir.path());
  EXPECT_EQ(name.exit_code, 2);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// E27: a schema copy that cannot be written left NAME.yaml behind (and the
// next init then refused to overwrite it). Now neither file is written.
TEST(Init, AFailedSchemaCopyLeavesNoSpec) {
  ScratchDir dir;
  dir.Write(".nemoc", "a file where the schema's directory goes\n");
  RunResult r = RunNemoc({"init", "demo"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot create"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/demo.yaml"));
  fs::remove(dir.path() + "/.nemoc");
  ASSERT_EQ(RunNemoc({"init", "demo"}, dir.path()).exit_code, 0);
}

// E23: a project name shaped like a credential (a Slack token is a valid
// DNS label) is refused and never echoed.
TEST(Init, ACredentialShapedNameIsRefusedUnquoted) {
  ScratchDir dir;
  const std::string token = "xoxb-1234567890-abcdefghijkl";
  RunResult r = RunNemoc({"init", token}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("looks like a Slack token"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("1234567890"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// --- explain --------------------------------------------------------------

TEST(Explain, GoldenTexts) {
  const struct {
    const char* file;
    std::vector<std::string> args;
  } cases[] = {
      {"tests/explain/root.txt", {"explain"}},
      {"tests/explain/spec.stages.train.parallelism.txt", {"explain", "spec.stages.train.parallelism"}},
      {"tests/explain/spec.stages.train.precision.txt", {"explain", "spec.stages.train.precision"}},
      {"tests/explain/spec.targets.txt", {"explain", "spec.targets"}},
      {"tests/explain/spec.stages.train-recursive.txt", {"explain", "spec.stages.train", "--recursive"}},
  };
  for (const auto& c : cases) {
    RunResult r = RunNemoc(c.args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectGolden(c.file, r.out);
  }
}

TEST(Explain, UnknownFieldIsALocatedErrorWithASuggestion) {
  RunResult r = RunNemoc({"explain", "spec.stages.train.parallelsim"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "nemoc: error: no field 'parallelsim' in spec.stages.train\n"
            "  hint: did you mean 'spec.stages.train.parallelism'?\n1 error\n");
}

// --- plan -----------------------------------------------------------------

TEST(Plan, GoldenTextPerExample) {
  for (const auto& spec : Examples()) {
    RunResult r = RunNemoc({"plan", spec}, SourceDir());
    ASSERT_EQ(r.exit_code, 0) << spec << "\n" << r.err;
    ExpectGolden("tests/plan/" + fs::path(spec).stem().string() + ".txt", r.out);
  }
}

TEST(Plan, WritesNothingAndAgreesWithSummary) {
  ScratchDir dir;
  RunResult r = RunNemoc({"plan", SourceDir() + "/examples/llama31-405b-gke-a4.yaml", "--out",
                          dir.path() + "/out", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
  const json report = json::parse(r.out);
  EXPECT_EQ(report["command"], "plan");
  EXPECT_EQ(report["ok"], true);
  const json& target = report["specs"][0]["targets"][0];
  EXPECT_EQ(target["train"]["gpus"], 224);
  EXPECT_EQ(target["train"]["parallelism"]["data"], 2);
  EXPECT_EQ(target["train"]["parallelism"]["virtualPipeline"], 9);
  EXPECT_EQ(target["train"]["batch"]["microBatchesPerStep"], 1008);
  EXPECT_EQ(target["accelerator"], "b200-180gb");
  EXPECT_EQ(target["memory"]["capacityGB"], 180.0);
  EXPECT_EQ(target["stages"], json::array({"00-base", "30-train"}));
  // The same sentence as the committed SUMMARY.md.
  const std::string summary = ReadFile(SourceDir() + "/out/llama31-405b-pretrain/gke-a4/SUMMARY.md");
  EXPECT_NE(summary.find(target["memory"]["text"].get<std::string>()), std::string::npos);
  size_t objects = 0;
  // Rows of the Objects table (other tables, e.g. State directories, come before it).
  for (size_t at = summary.find("\n| `", summary.find("## Objects")); at != std::string::npos;
       at = summary.find("\n| `", at + 1)) {
    ++objects;
  }
  EXPECT_EQ(target["objects"]["total"], objects);
}

TEST(Plan, SetOverridesAreShown) {
  RunResult r = RunNemoc({"plan", "examples/llama31-405b-gke-a4.yaml", "--set",
                          "spec.stages.train.nodes=56", "-o", "json"},
                         SourceDir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json target = json::parse(r.out)["specs"][0]["targets"][0];
  EXPECT_EQ(target["train"]["gpus"], 448);
  EXPECT_EQ(target["train"]["parallelism"]["data"], 4);
}

// --- schema and modelines -------------------------------------------------

TEST(Schema, PrintsTheInputSchema) {
  RunResult r = RunNemoc({"schema"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, ReadFile(SourceDir() + "/schemas/project.schema.json"));
  EXPECT_EQ(json::parse(r.out)["$schema"], "http://json-schema.org/draft-07/schema#");
}

TEST(Schema, EverySpecCarriesAModelineThatResolves) {
  for (const auto& spec : Examples()) {
    const std::string text = ReadFile(SourceDir() + "/" + spec);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("^# yaml-language-server: \\$schema=(\\S+)\n")))
        << spec << " must start with the yaml-language-server modeline";
    EXPECT_TRUE(fs::equivalent(fs::path(SourceDir() + "/" + spec).parent_path() / m[1].str(),
                               SourceDir() + "/schemas/project.schema.json"))
        << spec;
  }
}

// --- check ----------------------------------------------------------------

// A renamed project leaves its old tree under out/, which Argo CD or Flux
// would keep applying: check names it, unless --expect says it is wanted.
TEST(Check, ReportsTreesNoGivenSpecGenerates) {
  ScratchDir dir;
  std::string spec = ReadFile(SourceDir() + "/examples/llama2-7b-lora-eks.yaml");
  dir.Write("a.yaml", spec);
  ASSERT_EQ(RunNemoc({"build", "--quiet", "a.yaml"}, dir.path()).exit_code, 0);
  const size_t at = spec.find("\n  name: ");
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, spec.find('\n', at + 1) - at, "\n  name: renamed");
  dir.Write("a.yaml", spec);
  ASSERT_EQ(RunNemoc({"build", "--quiet", "a.yaml"}, dir.path()).exit_code, 0);
  RunResult stale = RunNemoc({"check", "a.yaml"}, dir.path());
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_EQ(stale.out, "");
  EXPECT_NE(stale.err.find("out/llama2-7b-lora/eks: error: a tree nemoc made that no spec given to check "
                           "generates (a renamed or removed project?)"),
            std::string::npos)
      << stale.err;
  EXPECT_NE(stale.err.find("pass --expect out/llama2-7b-lora/eks"), std::string::npos) << stale.err;
  RunResult json_report = RunNemoc({"check", "a.yaml", "-o", "json"}, dir.path());
  EXPECT_EQ(json_report.exit_code, 1);
  EXPECT_NE(json_report.out.find("\"check.stale\""), std::string::npos) << json_report.out;
  // Expected: the tree itself, or a directory above it.
  for (const char* expect : {"out/llama2-7b-lora/eks", "out/llama2-7b-lora/", "out"}) {
    RunResult ok = RunNemoc({"check", "a.yaml", "--expect", expect}, dir.path());
    EXPECT_EQ(ok.exit_code, 0) << expect << ok.err;
    EXPECT_EQ(ok.out, "up to date\n") << expect;
  }
  EXPECT_EQ(RunNemoc({"check", "a.yaml", "--expect", "out/llama2-7b"}, dir.path()).exit_code, 1)
      << "a name prefix is not a directory above";
  // Removed (and the cluster bundle rebuilt without it): clean again.
  fs::remove_all(dir.path() + "/out/llama2-7b-lora");
  ASSERT_EQ(RunNemoc({"build", "--quiet", "a.yaml"}, dir.path()).exit_code, 0);
  RunResult clean = RunNemoc({"check", "a.yaml"}, dir.path());
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
}

// -o github: the diagnostics as GitHub Actions annotations on stdout (the
// text stays on stderr), so a workflow step marks the spec's lines.
TEST(Check, GithubAnnotationsLocateEveryDiagnostic) {
  ScratchDir dir;
  dir.Write("bad.yaml", "apiVersion: nemoc.dev/v1alpha1\nkind: Project\nmetadata: {name: x}\nspec:\n"
                        "  namespace: ml\n  bogus: 1\n");
  for (const char* command : {"validate", "build", "check", "plan"}) {
    RunResult r = RunNemoc({command, "-o", "github", "bad.yaml"}, dir.path());
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.out.rfind("::error file=bad.yaml,line=6,col=3,title=nemoc spec.unknown-field::unknown field "
                          "'bogus' in spec%0Ahint: allowed fields: ",
                          0),
              0u)
        << command << "\n" << r.out;
    EXPECT_NE(r.out.find("::error file=bad.yaml,line=4,col=1,title=nemoc spec.missing-field::spec: missing "
                         "required field 'model'%0Ahint: "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.err.find("bad.yaml:6:3: error: unknown field 'bogus' in spec"), std::string::npos) << r.err;
  }
  // Without -o github, stdout stays empty.
  RunResult text = RunNemoc({"validate", "bad.yaml"}, dir.path());
  EXPECT_EQ(text.out, "");
}

// --- metrics --------------------------------------------------------------

// tests/metrics/llama31-405b-gke-a4.dllogger.json: the recipe's 15 steps in
// DLLogger's format (a PARAMETER record, then one LOG record per step; step
// 12 is the README's sample line). Steps 10..14 average 118.18993851852417 s.
TEST(Metrics, NumbersForTheRecipeRun) {
  RunResult r = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                          "examples/llama31-405b-gke-a4.yaml", "--steps", "10:14", "-o", "json"},
                         SourceDir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json::parse(r.out)["specs"][0]["targets"][0];
  EXPECT_EQ(t["steps"]["count"], 5);
  EXPECT_NEAR(t["stepSeconds"].get<double>(), 118.18993851852417, 1e-9);
  EXPECT_NEAR(t["samplesPerSecond"].get<double>(), 17.0573, 1e-4);
  EXPECT_NEAR(t["tokensPerSecond"].get<double>(), 139733.3, 0.1);
  // llama3.1-405b from the catalog (8 query groups, vocabulary 128256).
  EXPECT_NEAR(t["modelFlopsPerSample"].get<double>(), 2.150748e16, 1e11);
  EXPECT_NEAR(t["tflopsPerGpu"].get<double>(), 1637.76, 0.01);
  EXPECT_EQ(t["peakTflops"], 4500);
  EXPECT_EQ(t["precision"], "fp8");
  EXPECT_NEAR(t["mfu"].get<double>(), 0.36395, 1e-5);
}

TEST(Metrics, TextReportAndDefaultWindow) {
  RunResult r = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                          "examples/llama31-405b-gke-a4.yaml"},
                         SourceDir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("steps 10..14 (5 of 15 step records), 224 × NVIDIA B200 180GB, fp8\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  MFU                   36.39 % of 4500 TFLOPS (fp8 dense peak)\n"),
            std::string::npos)
      << r.out;
}

TEST(Metrics, PrecisionChangesThePeak) {
  RunResult r = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                          "examples/llama31-405b-gke-a4.yaml", "--set", "spec.stages.train.precision=bf16",
                          "-o", "json"},
                         SourceDir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json::parse(r.out)["specs"][0]["targets"][0];
  EXPECT_EQ(t["peakTflops"], 2250);
  EXPECT_NEAR(t["mfu"].get<double>(), 0.72790, 1e-5);
}

// A training chain: --stage picks the stage whose sizes the log is measured
// against (the pretraining runs 16 GPUs at global batch 256, the fine-tuning 8
// at 128, both sequence length 2048).
TEST(Metrics, EachStageOfATrainingChainHasItsOwnSizes) {
  auto run = [](const std::string& stage) {
    return RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                     "examples/gpt-5b-pretrain-sft-vanilla.yaml", "--steps", "10:14", "--stage", stage, "-o", "json"},
                    SourceDir());
  };
  RunResult pretrain = run("pretrain"), train = run("train");
  ASSERT_EQ(pretrain.exit_code, 0) << pretrain.err;
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const json p = json::parse(pretrain.out)["specs"][0]["targets"][0];
  const json t = json::parse(train.out)["specs"][0]["targets"][0];
  EXPECT_NEAR(p["samplesPerSecond"].get<double>(), 256 / 118.18993851852417, 1e-6);
  EXPECT_NEAR(t["samplesPerSecond"].get<double>(), 128 / 118.18993851852417, 1e-6);
  EXPECT_EQ(p["gpus"], 16);
  EXPECT_EQ(t["gpus"], 8);
  RunResult none = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                             "examples/llama31-405b-gke-a4.yaml", "--stage", "pretrain"},
                            SourceDir());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no spec.stages.pretrain"), std::string::npos) << none.err;
}

// A log that is not the spec's run: consumed_samples grows by 2016 per step
// (the recipe's global batch), the spec says 6048, and the MFU that follows
// is above 100 %. Warnings, located in the log; the numbers still print.
TEST(Metrics, WarnsWhenTheLogIsNotTheSpecsRun) {
  RunResult r = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                          "examples/llama31-405b-gke-a4.yaml", "--set", "spec.stages.train.batch.global=6048"},
                         SourceDir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  MFU                   109.18 % of 4500 TFLOPS"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("tests/metrics/llama31-405b-gke-a4.dllogger.json:13:1: warning: consumed_samples grows by "
                       "2016 per step from step 10 to 11, but the spec's global batch is 6048"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tests/metrics/llama31-405b-gke-a4.dllogger.json: warning: MFU 109.2 % exceeds 100 %"),
            std::string::npos)
      << r.err;
  RunResult json_report = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                                    "examples/llama31-405b-gke-a4.yaml", "--set",
                                    "spec.stages.train.batch.global=6048", "-o", "json"},
                                   SourceDir());
  ASSERT_EQ(json_report.exit_code, 0) << json_report.err;
  EXPECT_NE(json_report.out.find("\"metrics.batch\""), std::string::npos) << json_report.out;
  EXPECT_NE(json_report.out.find("\"metrics.mfu\""), std::string::npos) << json_report.out;
  // The spec's own run: no warning.
  RunResult own = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                            "examples/llama31-405b-gke-a4.yaml"},
                           SourceDir());
  EXPECT_EQ(own.err, "");
}

TEST(Metrics, Refusals) {
  ScratchDir dir;
  const std::string log = dir.Write("empty.json", "not a dllogger file\n");
  RunResult empty = RunNemoc({"metrics", log, "--spec", "examples/llama31-405b-gke-a4.yaml"}, SourceDir());
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("no DLLogger records"), std::string::npos) << empty.err;
  RunResult window = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                               "examples/llama31-405b-gke-a4.yaml", "--steps", "40:50"},
                              SourceDir());
  EXPECT_EQ(window.exit_code, 1);
  EXPECT_NE(window.err.find("the log has steps 0..14"), std::string::npos) << window.err;
  RunResult matrix = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                               "tests/specs/profile-matrix.yaml"},
                              SourceDir());
  EXPECT_EQ(matrix.exit_code, 2);  // a usage error
  EXPECT_NE(matrix.err.find("choose one with --target"), std::string::npos) << matrix.err;
  RunResult a100 = RunNemoc({"metrics", "tests/metrics/llama31-405b-gke-a4.dllogger.json", "--spec",
                             "examples/llama2-7b-lora-eks.yaml", "--set", "spec.stages.train.precision=fp8"},
                            SourceDir());
  EXPECT_EQ(a100.exit_code, 1);
  // fp8 on A100 is refused before any peak is looked up (A18: compute capability 8.0 < 8.9).
  EXPECT_NE(a100.err.find("target eks: fp8 precision needs compute capability 8.9 or higher"),
            std::string::npos)
      << a100.err;
}

// E19: metrics read /dev/zero into memory without end and blocked on a FIFO;
// 40k bad records printed megabytes. A regular file only, bounded, and the
// bad records capped with a count of the rest.
TEST(Metrics, InputIsARegularFileAndBadRecordsAreCapped) {
  ScratchDir dir;
  const std::string fifo = dir.path() + "/log.fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  for (const std::string& log : {std::string("/dev/zero"), fifo}) {
    RunResult r = RunNemoc({"metrics", log, "--spec", "examples/llama31-405b-gke-a4.yaml"}, SourceDir());
    EXPECT_EQ(r.exit_code, 1) << log << "\n" << r.err;
    EXPECT_NE(r.err.find(log + " is not a regular file"), std::string::npos) << r.err;
  }
  std::string bad;
  for (int i = 0; i < 5000; ++i) bad += "DLLL {not json\n";
  const std::string log = dir.Write("bad.json", bad);
  RunResult r = RunNemoc({"metrics", log, "--spec", "examples/llama31-405b-gke-a4.yaml"}, SourceDir());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Count(r.err, "error: DLLogger record is not a JSON object"), 20u) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("4980 more bad DLLogger records (5000 in all; the first 20 are shown)"), std::string::npos);
  EXPECT_LT(r.err.size(), 20000u);
}

// --- --output json ------------------------------------------------------

TEST(JsonOutput, DiagnosticsAreObjectsWithPointers) {
  ScratchDir dir;
  std::string spec = ReadFile(SourceDir() + "/examples/gpt-tp2-trainjob.yaml");
  spec.replace(spec.find("nodes: 2"), 8, "nodes: 0");
  const std::string path = dir.Write("bad.yaml", spec);
  for (const char* command : {"build", "validate", "plan"}) {
    std::vector<std::string> args = {command, path, "--output", "json"};
    if (std::string(command) != "validate") args.insert(args.end(), {"--out", dir.path() + "/out"});
    RunResult r = RunNemoc(args);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.err, "") << command;
    const json report = json::parse(r.out);
    EXPECT_EQ(report["command"], command);
    EXPECT_EQ(report["ok"], false);
    const json& d = report["diagnostics"][0];
    EXPECT_EQ(d["severity"], "error");
    EXPECT_EQ(d["file"], path);
    EXPECT_EQ(d["pointer"], "/spec/stages/train/nodes");
    EXPECT_GT(d["line"].get<int>(), 0);
    EXPECT_GT(d["column"].get<int>(), 0);
    EXPECT_TRUE(d["message"].is_string());
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/out"));
}

TEST(JsonOutput, BuildReportsWhatItWrote) {
  ScratchDir dir;
  RunResult r = RunNemoc({"build", SourceDir() + "/examples/gpt-tp2-trainjob.yaml", "--out", dir.path(),
                          "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  EXPECT_EQ(report["ok"], true);
  const json& target = report["specs"][0]["targets"][0];
  EXPECT_EQ(target["name"], "lab");
  EXPECT_EQ(target["written"], true);
  EXPECT_GT(target["added"].get<int>(), 0);
  RunResult validate = RunNemoc({"validate", SourceDir() + "/examples/gpt-tp2-trainjob.yaml", "-o", "json"});
  EXPECT_EQ(json::parse(validate.out)["specs"][0]["project"], "gpt-tp2");
  RunResult bad = RunNemoc({"validate", "x.yaml", "-o", "yaml"});
  EXPECT_EQ(bad.exit_code, 2);
}

// --- colour and progress ------------------------------------------------------

TEST(Terminal, ColourRule) {
  EXPECT_TRUE(ShouldColor(true, nullptr));
  EXPECT_TRUE(ShouldColor(true, ""));
  EXPECT_FALSE(ShouldColor(true, "1"));
  EXPECT_FALSE(ShouldColor(false, nullptr));
}

// script(1) runs nemoc on a pseudo-terminal, so stderr is a terminal.
TEST(Terminal, ColourAndProgressOnlyOnATerminal) {
  if (!fs::exists("/usr/bin/script")) NEMOC_MISSING_PREREQUISITE("script(1) not installed");
  const char* bin = std::getenv("NEMOC_BIN");
  ASSERT_NE(bin, nullptr);
  ScratchDir dir;
  std::string spec = ReadFile(SourceDir() + "/examples/gpt-tp2-trainjob.yaml");
  spec.replace(spec.find("nodes: 2"), 8, "nodes: 0");
  const std::string bad = dir.Write("bad.yaml", spec);
  auto run = [&](const std::string& env, const std::string& args) {
    const std::string log = dir.path() + "/typescript";
    const std::string command = "env -u NO_COLOR " + env + " script -qec '" + std::string(bin) + " " +
                                args + "' " + log + " >/dev/null 2>&1";
    const int status = std::system(command.c_str());
    (void)status;  // the typescript is what is checked
    return ReadFile(log);
  };
  EXPECT_NE(run("", "validate " + bad).find("\033[1;31merror:"), std::string::npos);
  EXPECT_EQ(run("NO_COLOR=1", "validate " + bad).find("\033["), std::string::npos);
  const std::string examples = SourceDir() + "/examples/gpt-tp2-trainjob.yaml " + SourceDir() +
                               "/examples/llama2-7b-lora-eks.yaml";
  const std::string progress = run("", "build --out " + dir.path() + "/out " + examples);
  EXPECT_NE(progress.find("[2/2] compiling "), std::string::npos) << progress;
  // Not a terminal: neither colour nor progress.
  RunResult piped = RunNemoc({"build", "--out", dir.path() + "/out2", SourceDir() + "/examples/gpt-tp2-trainjob.yaml",
                              SourceDir() + "/examples/llama2-7b-lora-eks.yaml"});
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.err.find("compiling"), std::string::npos);
  EXPECT_EQ(RunNemoc({"validate", bad}).err.find("\033["), std::string::npos);
}

// --- completion and help -----------------------------------------------------

std::vector<std::string> Subcommands() {
  RunResult help = RunNemoc({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  std::vector<std::string> names;
  const size_t at = help.out.find("Subcommands:\n");
  EXPECT_NE(at, std::string::npos) << help.out;
  std::regex row("^  ([a-z]+) ");
  std::istringstream lines(help.out.substr(at + 13));
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    std::smatch m;
    if (std::regex_search(line, m, row)) names.push_back(m[1]);
  }
  return names;
}

TEST(Completion, ScriptsNameEverySubcommandAndOption) {
  const std::vector<std::string> subcommands = Subcommands();
  for (const char* expected : {"build", "validate", "plan", "init", "explain", "schema", "metrics", "version"}) {
    EXPECT_NE(std::find(subcommands.begin(), subcommands.end(), expected), subcommands.end()) << expected;
  }
  const std::string bash = ReadFile(SourceDir() + "/completions/nemoc.bash");
  const std::string zsh = ReadFile(SourceDir() + "/completions/_nemoc");
  ASSERT_FALSE(bash.empty());
  ASSERT_FALSE(zsh.empty());
  std::smatch list;
  ASSERT_TRUE(std::regex_search(bash, list, std::regex("local commands=\"([^\"]*)\"")));
  EXPECT_EQ(std::system(("bash -n " + SourceDir() + "/completions/nemoc.bash").c_str()), 0);
  if (std::system("command -v zsh >/dev/null") == 0) {
    EXPECT_EQ(std::system(("zsh -n " + SourceDir() + "/completions/_nemoc").c_str()), 0);
  }
  for (const auto& sub : subcommands) {
    EXPECT_TRUE(std::regex_search(list[1].str(), std::regex("\\b" + sub + "\\b"))) << "bash lacks " << sub;
    EXPECT_TRUE(std::regex_search(zsh, std::regex("'" + sub + ":"))) << "zsh lacks " << sub;
    RunResult help = RunNemoc({sub, "--help"});
    ASSERT_EQ(help.exit_code, 0) << sub;
    // Option rows of the help ("  -o,--output FORMAT ..."), not the footer's examples.
    std::regex option("^ +(?:-[a-zA-Z],)?(--[a-z][a-z-]+)");
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, option) || m[1] == "--help") continue;
      EXPECT_NE(bash.find(m[1].str()), std::string::npos) << "bash lacks " << sub << " " << m[1];
      EXPECT_NE(zsh.find(m[1].str()), std::string::npos) << "zsh lacks " << sub << " " << m[1];
    }
  }
}

// fish's own completion engine asked what it offers after "nemoc " and after
// "nemoc SUB --": every subcommand, and every option of every subcommand's help.
TEST(Completion, FishOffersEverySubcommandAndOption) {
  if (std::system("command -v fish >/dev/null 2>&1") != 0) {
    NEMOC_MISSING_PREREQUISITE("fish not installed (scripts/install-deps installs it)");
  }
  const std::string script = SourceDir() + "/completions/nemoc.fish";
  ASSERT_EQ(std::system(("fish -n " + script).c_str()), 0);
  // The profile list comes from `nemoc profiles --names`: the nemoc under test first on PATH.
  const char* bin = std::getenv("NEMOC_BIN");
  const std::string bin_dir =
      std::filesystem::path(bin != nullptr ? bin : SourceDir() + "/build/nemoc").parent_path().string();
  auto complete = [&](const std::string& line) {
    return Shell("PATH=" + bin_dir + ":$PATH fish --no-config -c 'source " + script + "; complete -C \"" + line +
                 "\"' 2>&1");
  };
  const std::string first = complete("nemoc ");
  for (const auto& sub : Subcommands()) {
    EXPECT_NE(first.find(sub + "\t"), std::string::npos) << "fish lacks " << sub << ":\n" << first;
    RunResult help = RunNemoc({sub, "--help"});
    ASSERT_EQ(help.exit_code, 0) << sub;
    const std::string offered = complete("nemoc " + sub + " -");
    std::regex option("^ +(?:(-[a-zA-Z]),)?(--[a-z][a-z-]+)");
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, option) || m[2] == "--help" || m[2] == "--help-all") continue;
      EXPECT_NE(offered.find(m[2].str() + "\t"), std::string::npos) << "fish lacks " << sub << " " << m[2] << ":\n" << offered;
      if (m[1].matched) {
        EXPECT_NE(offered.find(m[1].str() + "\t"), std::string::npos) << "fish lacks " << sub << " " << m[1];
      }
    }
  }
  // Values where the help lists them.
  EXPECT_NE(complete("nemoc diff -o ").find("markdown"), std::string::npos);
  EXPECT_NE(complete("nemoc init --profile ").find("gke-a4"), std::string::npos);
  // A profile of your own, from the --jpath the line names (a helper library beside it is no profile).
  ScratchDir jpath;
  jpath.Write("my-cloud.libsonnet", "(import 'vanilla-k8s.libsonnet') + { name: 'my-cloud', description:: 'mine' }\n");
  jpath.Write("helpers.libsonnet", "{ x: 1 }\n");
  const std::string mine = complete("nemoc init --jpath " + jpath.path() + " --profile ");
  EXPECT_NE(mine.find("my-cloud"), std::string::npos) << mine;
  EXPECT_NE(mine.find("vanilla-k8s"), std::string::npos) << mine;
  EXPECT_EQ(mine.find("helpers"), std::string::npos) << mine;
}

// The man page the build generates from the help text (scripts/make-man):
// every subcommand has its section with its options, and man renders it
// without warnings.
TEST(Help, ManPageIsGeneratedFromTheHelp) {
  const char* bin = std::getenv("NEMOC_BIN");
  const std::string page =
      std::filesystem::path(bin != nullptr ? bin : SourceDir() + "/build/nemoc").parent_path().string() + "/nemoc.1";
  if (!std::filesystem::exists(page)) {
    NEMOC_MISSING_PREREQUISITE("no " + page + ": help2man was not found when the build was configured");
  }
  const std::string roff = ReadFile(page);
  EXPECT_NE(roff.find(".TH NEMOC \"1\""), std::string::npos) << roff.substr(0, 400);
  const std::string text = Shell("MANWIDTH=100 man --warnings -l " + page + " 2>&1");
  EXPECT_EQ(text.find("warning"), std::string::npos) << text;
  for (const auto& sub : Subcommands()) {
    if (sub == "help") continue;
    const size_t at = text.find("   nemoc " + sub + "\n");
    ASSERT_NE(at, std::string::npos) << "no section for " << sub;
    const size_t end = text.find("\n   nemoc ", at + 1);
    const std::string section = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    RunResult help = RunNemoc({sub, "--help"});
    std::regex option("^ +(?:-[a-zA-Z],)?(--[a-z][a-z-]+)");
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, option)) continue;
      EXPECT_NE(section.find(m[1].str()), std::string::npos) << "the man page's " << sub << " lacks " << m[1];
    }
  }
  for (const char* heading : {"ENVIRONMENT", "EXAMPLES", "EXIT STATUS"}) {
    EXPECT_NE(text.find(std::string("\n") + heading + "\n"), std::string::npos) << heading;
  }
}

TEST(Help, VersionFlagHelpCommandAndDidYouMean) {
  RunResult version = RunNemoc({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, RunNemoc({"version"}).out);
  EXPECT_EQ(version.out.rfind("nemoc ", 0), 0u) << version.out;
  // help, help CMD: the same pages as --help, CMD --help (with "nemoc CMD" in the usage line).
  RunResult top = RunNemoc({"help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_EQ(top.out, RunNemoc({"--help"}).out);
  RunResult plan = RunNemoc({"help", "plan"});
  EXPECT_EQ(plan.exit_code, 0);
  EXPECT_NE(plan.out.find("Usage: nemoc plan [OPTIONS] specs..."), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("--target"), std::string::npos) << plan.out;
  // A misspelt subcommand: a usage error naming the closest, before any other complaint.
  for (const auto& [typo, meant] : std::vector<std::pair<std::string, std::string>>{
           {"biuld", "build"}, {"pln", "plan"}, {"valdiate", "validate"}, {"chek", "check"}}) {
    RunResult r = RunNemoc({typo, "spec.yaml"});
    EXPECT_EQ(r.exit_code, 2) << typo;
    EXPECT_EQ(r.err, "nemoc: unknown command '" + typo + "' (did you mean '" + meant + "'?); 'nemoc --help' lists them\n");
    EXPECT_EQ(r.out, "");
    RunResult h = RunNemoc({"help", typo});
    EXPECT_EQ(h.exit_code, 2) << typo;
    EXPECT_EQ(h.err, r.err);
  }
  RunResult far = RunNemoc({"deploy"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err, "nemoc: unknown command 'deploy'; 'nemoc --help' lists them\n");
}

TEST(Help, EverySubcommandExplainsItself) {
  for (const auto& sub : Subcommands()) {
    RunResult help = RunNemoc({sub, "--help"});
    EXPECT_EQ(help.exit_code, 0) << sub;
    EXPECT_NE(help.out.find("Usage:"), std::string::npos) << sub << help.out;
    if (sub != "version") {
      EXPECT_GT(help.out.size(), 300u) << sub << ": help too thin\n" << help.out;
    }
  }
}

}  // namespace
}  // namespace nemoc::testing

namespace nemoc::testing {
namespace {

// Field review E27: `render`, `plan`, `explain`, `schema` and `profiles`
// exited 0 with their output lost on a full disk (stdio buffers; the error
// shows only at the flush). Each is an error now, said on stderr.
TEST(Output, AFailedWriteToStandardOutputIsAnError) {
  ASSERT_TRUE(std::filesystem::exists("/dev/full")) << "needs /dev/full (Linux)";
  const char* bin_env = std::getenv("NEMOC_BIN");
  const std::string bin = bin_env ? bin_env : SourceDir() + "/build/nemoc";
  const std::string src = SourceDir();
  for (const std::string& args :
       {std::string("render --target onprem examples/llama31-8b-pipeline.yaml"),
        std::string("plan examples/llama31-8b-pipeline.yaml"), std::string("explain spec.targets"),
        std::string("schema"), std::string("profiles")}) {
    int code = -1;
    const std::string err = Shell("cd '" + src + "' && NEMOC_DATA_DIR='" + src + "' '" + bin + "' " + args +
                                      " 2>&1 >/dev/full",
                                  &code);
    EXPECT_EQ(3, code) << args << "\n" << err;
    EXPECT_NE(std::string::npos, err.find("nemoc: error: cannot write to standard output")) << args << "\n" << err;
    // The same command with a working stdout succeeds.
    Shell("cd '" + src + "' && NEMOC_DATA_DIR='" + src + "' '" + bin + "' " + args + " >/dev/null 2>&1", &code);
    EXPECT_EQ(0, code) << args;
  }
}

}  // namespace
}  // namespace nemoc::testing
