#include "checks.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check_registry.h"
#include "engines.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "spec_loader.h"
#include "stages.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using nlohmann::json;

const InputSchema& Schema() {
  static const std::unique_ptr<InputSchema> schema = [] {
    std::string err;
    auto s = InputSchema::Load(NEMOC_SOURCE_DIR "/schemas/project.schema.json", &err);
    if (s == nullptr) ADD_FAILURE() << err;
    return s;
  }();
  return *schema;
}

// The built-in stages (stages.h): CheckSpec orders the stage checks by them,
// and their descriptions' `needs` are one of its registered checks.
const StageTable& Stages() { return test_tables::Builtin().stages; }

const ModelCatalog& Catalog() {
  static const ModelCatalog catalog = [] {
    ModelCatalog c;
    std::string err;
    if (!ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &c, &err)) {
      ADD_FAILURE() << err;
    }
    return c;
  }();
  return catalog;
}

std::string Render(const Diagnostic& d) {
  std::string out = std::string(SeverityName(d.severity)) + " " + d.code + "@" +
                    std::to_string(d.location.line) + ":" +
                    std::to_string(d.location.column) + ": " + d.message;
  if (!d.hint.empty()) out += " | " + d.hint;
  return out;
}

std::vector<std::string> RenderAll(const Diagnostics& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds.items()) out.push_back(Render(d));
  return out;
}

using Lines = std::vector<std::string>;

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "mutation anchor not found: " << from;
  } else {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The real pipeline up to the checks: LoadSpecText -> Validate -> Normalize.
// Earlier stages must be clean; `checks` then holds only what the checks say.
struct Pipeline {
  Document doc;
  json normalized;
  bool ready = false;
  Diagnostics checks;
};

std::unique_ptr<Pipeline> Prepare(const std::string& text) {
  auto p = std::make_unique<Pipeline>();
  Diagnostics earlier;
  std::set<std::string> yaml11;
  if (!LoadSpecText("spec.yaml", text, &p->doc, &earlier, {}, &yaml11) ||
      !Schema().Validate(p->doc, yaml11, &earlier) ||
      !Normalize(p->doc, Schema(), Catalog(), &p->normalized, &earlier)) {
    ADD_FAILURE() << "spec does not get to the checks: "
                  << ::testing::PrintToString(RenderAll(earlier)) << "\n"
                  << text;
    return p;
  }
  EXPECT_EQ(Lines{}, RenderAll(earlier));
  p->ready = true;
  return p;
}

// CheckSpec's verdict and diagnostics.
struct Checked {
  bool ok = false;
  Lines lines;
};

Checked RunCheckSpec(const std::string& text) {
  Checked c;
  auto p = Prepare(text);
  if (!p->ready) return c;
  c.ok = CheckSpec(p->doc, p->normalized, test_tables::Builtin(), &p->checks);
  c.lines = RenderAll(p->checks);
  return c;
}

// CheckTrainArithmetic alone, on the normalized train stage and architecture.
Lines RunArithmetic(const std::string& text) {
  auto p = Prepare(text);
  if (!p->ready) return {"<not ready>"};
  const TypedSpec typed = ReadTypedSpec(p->normalized["spec"]);
  if (typed.Training("train") == nullptr) return {"<not typed>: " + typed.error};
  CheckTrainArithmetic(p->doc, *typed.Training("train"), p->normalized["spec"]["model"]["architecture"], &p->checks);
  return RenderAll(p->checks);
}

// ---------------------------------------------------------------------------
// Training arithmetic. Every field sits on its own line, so positions are fixed:
//   15 nodes (col 14)          19 tensor (col 17)        23 expert (col 17)
//   17 seqLength (col 18)      20 pipeline (col 19)      24 sequenceParallel (col 27)
//   18 parallelism: (key col 7) 21 virtualPipeline (col 26) 27 global (col 17)
//                              22 context (col 18)

struct Arith {
  std::string preset = "llama2-7b";
  int nodes = 2;
  int seq = 0;  // 0: not set
  int tp = 1, pp = 1, vpp = 0, cp = 1, ep = 1;
  bool sp = false;
  int micro = 1, global = 32;

  std::string Yaml() const {
    auto n = [](int v) { return std::to_string(v); };
    return std::string(
               "apiVersion: nemoc.dev/v1alpha1\n"
               "kind: Project\n"
               "metadata:\n"
               "  name: demo\n"
               "spec:\n"
               "  namespace: nemo\n"
               "  image: {repository: nvcr.io/nvidia/nemo, tag: \"24.07\"}\n"
               "  model:\n"
               "    preset: ") +
           preset +
           "\n"
           "  storage:\n"
           "    results:\n"
           "      nfs: {server: nfs.internal, path: /export}\n"
           "  stages:\n"
           "    train:\n"
           "      nodes: " + n(nodes) + "\n" +
           "      gpusPerNode: 8\n" +
           (seq ? "      seqLength: " + n(seq) + "\n" : "      # seqLength: default\n") +
           "      parallelism:\n"
           "        tensor: " + n(tp) + "\n" +
           "        pipeline: " + n(pp) + "\n" +
           (vpp ? "        virtualPipeline: " + n(vpp) + "\n" : "        # virtualPipeline: none\n") +
           "        context: " + n(cp) + "\n" +
           "        expert: " + n(ep) + "\n" +
           "        sequenceParallel: " + (sp ? "true" : "false") + "\n" +
           "      batch:\n"
           "        micro: " + n(micro) + "\n" +
           "        global: " + n(global) + "\n" +
           "      data: {mock: true}\n"
           "  targets:\n"
           "    - name: onprem\n"
           "      profile: vanilla-k8s\n";
  }
};

TEST(ChecksTestArithmetic, BaseCombinationIsClean) {
  Arith a;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, Llama405bRecipeIsValid) {
  Arith a;
  a.preset = "llama3.1-405b";
  a.nodes = 28;
  a.tp = 4;
  a.pp = 14;
  a.vpp = 9;
  a.cp = 2;
  a.sp = true;
  a.micro = 1;
  a.global = 2016;
  a.seq = 8192;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
  // NeMo 1 reads Llama 3.1's RoPE scaling from 24.09 on (24.07 is refused: A8).
  Checked c = RunCheckSpec(Replace(a.Yaml(), "tag: \"24.07\"", "tag: \"25.02\""));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestArithmetic, ParallelismMustDivideWorldSize) {
  Arith a;
  a.nodes = 3;
  a.tp = 8;
  a.pp = 2;
  EXPECT_EQ(Lines{"error train.parallelism@18:7: tensor × pipeline × context parallelism = 8 × 2 "
                  "× 1 = 16 does not divide the world size 24 (3 nodes × 8 GPUs per node) | "
                  "change the parallelism or the node count so that the world size is a "
                  "multiple of 16"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ContextParallelCountsTowardsModelParallel) {
  Arith a;
  a.nodes = 1;
  a.tp = 2;
  a.cp = 3;
  a.seq = 4092;  // divisible by 2 × 3
  EXPECT_EQ(Lines{"error train.parallelism@18:7: tensor × pipeline × context parallelism = 2 × 1 "
                  "× 3 = 6 does not divide the world size 8 (1 node × 8 GPUs per node) | "
                  "change the parallelism or the node count so that the world size is a "
                  "multiple of 6"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, GlobalBatchMustBeAMultipleOfMicroTimesDataParallel) {
  Arith a;  // 16 GPUs, TP 2 -> DP 8
  a.tp = 2;
  a.global = 36;
  EXPECT_EQ(Lines{"error train.batch@27:17: global batch 36 is not a multiple of micro batch × "
                  "data-parallel size = 1 × 8 = 8 | nearest valid values: 32 or 40"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, GlobalBatchHintWithMicroBatch) {
  Arith a;  // 16 GPUs, DP 16, micro 2 -> step 32
  a.micro = 2;
  a.global = 100;
  EXPECT_EQ(Lines{"error train.batch@27:17: global batch 100 is not a multiple of micro batch × "
                  "data-parallel size = 2 × 16 = 32 | nearest valid values: 96 or 128"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, GlobalBatchHintOmitsZero) {
  Arith a;  // DP 8
  a.tp = 2;
  a.global = 4;
  EXPECT_EQ(Lines{"error train.batch@27:17: global batch 4 is not a multiple of micro batch × "
                  "data-parallel size = 1 × 8 = 8 | nearest valid values: 8"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, HeadsMustBeDivisibleByTensorParallel) {
  Arith a;  // llama2-7b: 32 heads, 32 query groups
  a.nodes = 3;
  a.tp = 3;
  EXPECT_EQ(Lines{"error train.heads@19:17: the model's 32 attention heads are not divisible by "
                  "tensor parallelism 3"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, QueryGroupsMustBeDivisibleByTensorParallel) {
  Arith a;  // llama2-70b: 64 heads, 8 query groups
  a.preset = "llama2-70b";
  a.tp = 16;
  EXPECT_EQ(Lines{"error train.query-groups@19:17: the model's 8 query groups are not divisible "
                  "by tensor parallelism 16"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, VirtualPipelineNeedsPipeline) {
  Arith a;
  a.vpp = 2;
  EXPECT_EQ(Lines{"error train.virtual-pipeline@21:26: virtual pipeline parallelism needs "
                  "pipeline parallelism > 1"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, LayersMustBeDivisibleByPipelineTimesVirtual) {
  Arith a;  // 32 layers
  a.pp = 2;
  a.vpp = 3;
  EXPECT_EQ(Lines{"error train.layers@21:26: the model's 32 layers are not divisible by pipeline × "
                  "virtual pipeline = 2 × 3 = 6"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, LayersMustBeDivisibleByPipeline) {
  Arith a;  // 32 layers, 24 GPUs
  a.nodes = 3;
  a.pp = 3;
  EXPECT_EQ(Lines{"error train.layers@20:19: the model's 32 layers are not divisible by pipeline "
                  "parallelism 3"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ContextParallelNeedsSeqDivisibleByTwoCp) {
  Arith a;  // 16 GPUs, CP 2 -> DP 8
  a.cp = 2;
  a.seq = 4090;
  EXPECT_EQ(Lines{"error train.context-parallel@22:18: sequence length 4090 is not divisible by "
                  "2 × context parallelism = 4 | context parallelism splits each sequence into "
                  "2 × CP chunks"},
            RunArithmetic(a.Yaml()));
  a.seq = 4092;  // 4092 = 4 × 1023
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ContextParallelUsesTheDefaultSeqLength) {
  Arith a;  // llama2-7b default seqLength 4096; 2 × CP = 16 divides it
  a.cp = 8;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ExpertParallelNeedsAMixtureOfExperts) {
  Arith a;  // dense llama2-7b, DP 16
  a.ep = 2;
  EXPECT_EQ(Lines{"error train.expert-parallel@23:17: expert parallelism 2 needs a "
                  "mixture-of-experts model"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ExpertParallelMustDivideExperts) {
  Arith a;  // mixtral-8x7b: 8 experts; 24 GPUs, DP 24
  a.preset = "mixtral-8x7b";
  a.nodes = 3;
  a.ep = 3;
  a.global = 48;
  EXPECT_EQ(Lines{"error train.expert-parallel@23:17: the model's 8 experts are not divisible by "
                  "expert parallelism 3"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ExpertParallelMustDivideDataTimesContextParallel) {
  Arith a;  // mixtral: 8 GPUs, TP 4 -> DP 2, CP 1
  a.preset = "mixtral-8x7b";
  a.nodes = 1;
  a.tp = 4;
  a.ep = 4;
  EXPECT_EQ(Lines{"error train.expert-parallel@23:17: expert parallelism 4 does not divide "
                  "data-parallel × context-parallel size = 2 × 1 = 2"},
            RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, ExpertParallelValidForMixtral) {
  Arith a;  // 16 GPUs, TP 2 -> DP 8, EP 8 divides 8 experts and DP × CP
  a.preset = "mixtral-8x7b";
  a.tp = 2;
  a.ep = 8;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, SequenceParallelWithoutTensorParallelIsAWarning) {
  Arith a;
  a.sp = true;
  EXPECT_EQ(Lines{"warning train.sequence-parallel@24:27: sequence parallelism has no effect "
                  "with tensor parallelism 1"},
            RunArithmetic(a.Yaml()));
  Checked c = RunCheckSpec(a.Yaml());
  EXPECT_TRUE(c.ok);  // a warning does not fail the spec
  a.tp = 2;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, SeqLengthBeyondPositionEmbeddingsIsAWarning) {
  Arith a;  // llama2-7b: maxPositionEmbeddings 4096
  a.seq = 8192;
  EXPECT_EQ(Lines{"warning train.seq-length@17:18: sequence length 8192 exceeds the model's "
                  "maxPositionEmbeddings 4096"},
            RunArithmetic(a.Yaml()));
  a.seq = 4096;
  EXPECT_EQ(Lines{}, RunArithmetic(a.Yaml()));
}

TEST(ChecksTestArithmetic, SeveralRulesReportTogether) {
  Arith a;  // 24 GPUs, TP 5 PP 3: world, heads and layers all wrong
  a.nodes = 3;
  a.tp = 5;
  a.pp = 3;
  a.sp = true;
  a.seq = 8192;
  const Lines lines = RunArithmetic(a.Yaml());
  ASSERT_EQ(4u, lines.size()) << ::testing::PrintToString(lines);
  EXPECT_EQ(0u, lines[0].find("error train.parallelism@18:7: "));
  EXPECT_EQ(0u, lines[1].find("error train.heads@19:17: "));
  EXPECT_EQ(0u, lines[2].find("error train.layers@20:19: "));
  EXPECT_EQ(0u, lines[3].find("warning train.seq-length@17:18: "));
}

TEST(ChecksTestArithmetic, MissingBatchSectionDoesNotCrash) {
  Arith a;
  const std::string text =
      Replace(a.Yaml(), "      batch:\n        micro: 1\n        global: 32\n", "");
  Document doc;
  Diagnostics diags;
  std::set<std::string> yaml11;
  ASSERT_TRUE(LoadSpecText("spec.yaml", text, &doc, &diags, {}, &yaml11));
  if (!Schema().Validate(doc, yaml11, &diags)) {
    // Fixed in the schema: batch (or batch.global) is required, with a located error.
    ASSERT_EQ(1u, diags.items().size()) << ::testing::PrintToString(RenderAll(diags));
    EXPECT_EQ("spec.missing-field", diags.items()[0].code);
    EXPECT_NE(std::string::npos, diags.items()[0].message.find("'batch'"));
    return;
  }
  json normalized;
  ASSERT_TRUE(Normalize(doc, Schema(), Catalog(), &normalized, &diags));
  bool ok = true;
  EXPECT_NO_THROW(ok = CheckSpec(doc, normalized, test_tables::Builtin(), &diags));
  // Fixed in the normalizer or the checks: a default batch, or a located error.
  if (!normalized["spec"]["stages"]["train"].contains("batch")) {
    EXPECT_FALSE(ok);
    EXPECT_NE(std::string::npos, ::testing::PrintToString(RenderAll(diags)).find("batch"));
  }
}

// ---------------------------------------------------------------------------
// CheckSpec: the rest of the rules.

const char kBase[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: demo
spec:
  namespace: nemo
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model:
    preset: llama2-7b
  storage:
    results:
      nfs: {server: nfs.internal, path: /export}
  stages:
    train:
      mode: pretrain
      nodes: 2
      parallelism: {tensor: 2}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
)";

const char kNotYetHint[] =
    " | this part of the spec format is reserved; its generator has not landed in this "
    "version of nemoc";

// A fine-tuning variant of kBase: mode, source and JSONL data.
std::string FineTuning(const std::string& mode) {
  std::string text = Replace(kBase, "mode: pretrain", "mode: " + mode);
  text = Replace(text, "    preset: llama2-7b\n", "    preset: llama2-7b\n    source: {nemo: m/x.nemo}\n");
  // NeMo 1 SFT/LoRA needs validation data (framework_check.cc).
  return Replace(text, "data: {mock: true}", "data: {jsonl: {train: d/train.jsonl, validation: d/val.jsonl}}");
}

TEST(ChecksTestSpec, BaseSpecPasses) {
  Checked c = RunCheckSpec(kBase);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestSpec, FineTuningSpecsPass) {
  for (const char* mode : {"sft", "lora"}) {
    SCOPED_TRACE(mode);
    Checked c = RunCheckSpec(FineTuning(mode));
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(Lines{}, c.lines);
  }
}

// kBase with `stages` lines added after "  stages:".
std::string WithStages(const std::string& lines) { return Replace(kBase, "  stages:\n", "  stages:\n" + lines); }

// kBase with its train stage replaced by `lines`.
std::string WithoutTrain(const std::string& lines) {
  return Replace(kBase,
                 "    train:\n      mode: pretrain\n      nodes: 2\n      parallelism: {tensor: 2}\n"
                 "      batch: {micro: 1, global: 32}\n      data: {mock: true}\n",
                 lines);
}

TEST(ChecksTestPipeline, TheWholePipelinePasses) {
  Checked c = RunCheckSpec(WithStages(
      "    ncclTest: {minBusBandwidthGBps: 50}\n    evaluate: {tasks: [hellaswag]}\n    convert: {}\n"
      "    tensorrtLLM: {quantization: fp8}\n    serve: {triton: {replicas: 2, maxReplicas: 4}}\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestPipeline, ServingWithoutAnEngine) {
  Checked c = RunCheckSpec(WithStages("    serve: {}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-source@14:5: spec.stages.serve has no engine to serve: add a "
                  "tensorrtLLM stage or set spec.stages.serve.engine (an engine directory on the "
                  "results volume)"},
            c.lines);
  c = RunCheckSpec(WithStages("    serve: {engine: engines/llama}\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestPipeline, EngineWithoutACheckpoint) {
  Checked c = RunCheckSpec(WithStages("    tensorrtLLM: {}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-source@14:5: spec.stages.tensorrtLLM has no HuggingFace "
                  "checkpoint to build from: add a convert stage or set "
                  "spec.stages.tensorrtLLM.checkpoint"},
            c.lines);
  c = RunCheckSpec(WithStages("    tensorrtLLM: {checkpoint: hf/llama}\n"));
  EXPECT_TRUE(c.ok);
}

TEST(ChecksTestPipeline, EvaluationAndConversionWithoutTrainingOrCheckpoint) {
  for (const char* stage : {"evaluate", "convert"}) {
    SCOPED_TRACE(stage);
    Checked c = RunCheckSpec(WithoutTrain(std::string("    ") + stage + ": {}\n"));
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(Lines{std::string("error spec.missing-source@14:5: spec.stages.") + stage +
                    " has no checkpoint to read: add a train stage or set spec.stages." + stage +
                    ".checkpoint (a .nemo on the results volume)"},
              c.lines);
    c = RunCheckSpec(WithoutTrain(std::string("    ") + stage + ": {checkpoint: ckpt/model.nemo}\n"));
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(Lines{}, c.lines);
  }
}

TEST(ChecksTestPipeline, PreflightNeedsTraining) {
  Checked c = RunCheckSpec(WithoutTrain("    ncclTest: {}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-stage@14:5: spec.stages.ncclTest tests the training nodes "
                  "and fabric: it needs a train stage"},
            c.lines);
}

TEST(ChecksTestPipeline, TrainedCheckpointMustBeSaved) {
  Checked c = RunCheckSpec(Replace(WithStages("    convert: {}\n"), "      data: {mock: true}\n",
                                   "      data: {mock: true}\n      checkpoint: {enabled: false}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-source@21:29: spec.stages.convert reads the .nemo training "
                  "saves at the end, but checkpointing is off | remove checkpoint.enabled: false or "
                  "set spec.stages.convert.checkpoint"},
            c.lines);
}

TEST(ChecksTestPipeline, LoraAdaptersAreEvaluatedThroughTheMerge) {
  // The implied mergeLora stage (libsonnet/stages/merge-lora.libsonnet) merges
  // the adapter into the base; evaluate reads the merged .nemo.
  Checked c = RunCheckSpec(Replace(FineTuning("lora"), "  stages:\n", "  stages:\n    evaluate: {}\n"));
  EXPECT_TRUE(c.ok) << ::testing::PrintToString(c.lines);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestPipeline, NemoTwoLoraIsEvaluatedAndConverted) {
  std::string text = Replace(FineTuning("lora"), "  stages:\n", "  stages:\n    evaluate: {}\n    convert: {}\n");
  text = Replace(Replace(text, "tag: \"24.07\"", "tag: \"25.07\""), "mode: lora", "mode: lora\n      framework: nemo2");
  text = Replace(Replace(text, "m/x.nemo", "m/x"), "{train: d/train.jsonl, validation: d/val.jsonl}",
                 "{train: d/training.jsonl, validation: d/validation.jsonl}");
  Checked c = RunCheckSpec(text);
  // evaluate serves base + adapter in-framework (llm.evaluate); convert
  // merges (llm.peft.merge_lora), then exports (llm.export_ckpt); no
  // mergeLora stage is implied.
  EXPECT_TRUE(c.ok) << ::testing::PrintToString(c.lines);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestPipeline, MergeSettingsWithoutAMergeWarn) {
  // Settings for a merge that does not run: no reader of a LoRA run.
  Checked lora = RunCheckSpec(Replace(FineTuning("lora"), "  stages:\n", "  stages:\n    mergeLora: {gpus: 0}\n"));
  EXPECT_TRUE(lora.ok);
  EXPECT_EQ(Lines{"warning spec.unused-stage@15:5: spec.stages.mergeLora has nothing to merge: it runs "
                  "after a NeMo 1 LoRA train stage whose checkpoint evaluate or convert reads | remove "
                  "spec.stages.mergeLora"},
            lora.lines);
  // A full fine-tune has no adapter, even with a reader.
  Checked sft = RunCheckSpec(
      Replace(FineTuning("sft"), "  stages:\n", "  stages:\n    mergeLora: {gpus: 0}\n    evaluate: {}\n"));
  EXPECT_EQ(Lines{"warning spec.unused-stage@15:5: spec.stages.mergeLora has nothing to merge: it runs "
                  "after a NeMo 1 LoRA train stage whose checkpoint evaluate or convert reads | remove "
                  "spec.stages.mergeLora"},
            sft.lines);
  // Used: no warning.
  Checked used = RunCheckSpec(
      Replace(FineTuning("lora"), "  stages:\n", "  stages:\n    mergeLora: {gpus: 0}\n    evaluate: {}\n"));
  EXPECT_EQ(Lines{}, used.lines);
}

TEST(ChecksTestPipeline, NemoTwoCheckpointsAreEvaluatedAndExported) {
  // NeMo 2 writes checkpoint directories: evaluate serves and convert
  // exports the newest *-last one.
  std::string text = Replace(WithStages("    evaluate: {}\n    convert: {}\n"), "tag: \"24.07\"",
                             "tag: \"25.07\"");
  text = Replace(text, "mode: pretrain", "mode: pretrain\n      framework: nemo2");
  Checked c = RunCheckSpec(text);
  EXPECT_TRUE(c.ok) << ::testing::PrintToString(c.lines);
  EXPECT_EQ(Lines{}, c.lines);
  // Both read a *-last checkpoint: one error names both.
  Checked no_last = RunCheckSpec(
      Replace(text, "      data: {mock: true}\n", "      data: {mock: true}\n      checkpoint: {saveLast: false}\n"));
  EXPECT_EQ(Lines{"error spec.missing-source@23:30: spec.stages.evaluate and spec.stages.convert read the "
                  "NeMo 2 training run's newest *-last checkpoint, but checkpoint.saveLast is false | remove "
                  "checkpoint.saveLast: false or set a checkpoint on spec.stages.evaluate and spec.stages.convert"},
            no_last.lines);
  // With an explicit .nemo to read, the launcher's adapter evaluates it.
  Checked explicit_checkpoint = RunCheckSpec(Replace(text, "    evaluate: {}\n", "    evaluate: {checkpoint: models/base.nemo}\n"));
  EXPECT_TRUE(explicit_checkpoint.ok) << ::testing::PrintToString(explicit_checkpoint.lines);
  EXPECT_EQ(Lines{}, explicit_checkpoint.lines);

  // The export needs a *-last checkpoint and one GPU, and takes no dtype.
  std::string export_only = Replace(text, "    evaluate: {}\n", "");
  Checked misfit = RunCheckSpec(
      Replace(Replace(export_only, "    convert: {}\n", "    convert: {gpus: 0, precision: fp16}\n"),
              "      data: {mock: true}\n", "      data: {mock: true}\n      checkpoint: {saveLast: false}\n"));
  EXPECT_FALSE(misfit.ok);
  EXPECT_EQ((Lines{"error spec.missing-source@22:30: spec.stages.convert reads the NeMo 2 training run's "
                   "newest *-last checkpoint, but checkpoint.saveLast is false | remove checkpoint.saveLast: "
                   "false or set a checkpoint on spec.stages.convert",
                   "error convert.nemo2-gpus@14:21: the NeMo 2 export loads the checkpoint on the CPU but "
                   "needs exactly one GPU: Transformer Engine's layers refuse to start without CUDA | remove "
                   "spec.stages.convert.gpus (the export Job asks for 1) and size resources.memory for the "
                   "whole model",
                   "warning spec.unused-field@14:24: spec.stages.convert.precision is not used: "
                   "llm.export_ckpt takes no dtype, and writes the dtype of the checkpoint's model config | "
                   "remove spec.stages.convert.precision"}),
            misfit.lines);
  // gpus: 1 is what the Job runs with anyway.
  Checked one = RunCheckSpec(Replace(export_only, "    convert: {}\n", "    convert: {gpus: 1}\n"));
  EXPECT_TRUE(one.ok) << ::testing::PrintToString(one.lines);
  // fp8 training: NeMo 2 exports no fp8 checkpoint.
  Checked fp8 = RunCheckSpec(Replace(export_only, "      data: {mock: true}\n",
                                     "      data: {mock: true}\n      precision: fp8\n"));
  EXPECT_FALSE(fp8.ok);
  EXPECT_EQ(1, std::count_if(fp8.lines.begin(), fp8.lines.end(), [](const std::string& line) {
              return line.rfind("error convert.nemo2-export@22:18: NeMo 2 does not export an fp8-trained", 0) == 0;
            })) << ::testing::PrintToString(fp8.lines);
}

TEST(ChecksTestPipeline, EvaluationFitsOneNode) {
  Checked c = RunCheckSpec(WithStages("    evaluate: {tensorParallel: 4, pipelineParallel: 4}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.evaluate-gpus@14:53: evaluation runs on one node: tensor × pipeline "
                  "parallelism = 16 GPUs exceeds 8 GPUs per node | set "
                  "spec.stages.evaluate.tensorParallel and pipelineParallel so that their product "
                  "fits one node (NeMo reshards the checkpoint when loading)"},
            c.lines);
}

TEST(ChecksTestPipeline, TritonMustMatchTheEngine) {
  Checked c = RunCheckSpec(WithStages(
      "    convert: {}\n    tensorrtLLM: {maxBatchSize: 32, pagedKvCache: false}\n"
      "    serve: {triton: {maxBatchSize: 64, tensorParallel: 2}}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines({"error spec.serve-batch@16:36: spec.stages.serve.triton.maxBatchSize 64 exceeds "
                   "the engine's maxBatchSize 32",
                   "error spec.serve-gpus@16:56: spec.stages.serve.triton.tensorParallel 2 differs "
                   "from the engine's tensorParallel 1 | remove it: Triton runs one rank per engine "
                   "shard",
                   "error spec.serve-batching@15:51: in-flight batching needs an engine with a paged "
                   "KV cache | set pagedKvCache: true or spec.stages.serve.triton.inflightBatching: "
                   "false"}),
            c.lines);
}

TEST(ChecksTestPipeline, UnusedDataPrepIsAWarning) {
  Checked c = RunCheckSpec(WithStages("    dataPrep: {input: raw/corpus.jsonl}\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{"warning spec.unused-stage@14:5: spec.stages.dataPrep writes a dataset that "
                  "training does not read | set spec.stages.train.data: {fromDataPrep: true}"},
            c.lines);
}

TEST(ChecksTestPipeline, ConversionOfFamiliesWithoutAConverter) {
  // Every catalogue family has a NeMo -> HF converter (libsonnet/models.json;
  // Nemotron's since NeMo v2.0.0, checked per tag by stages/convert.libsonnet).
  // (Its pretraining needs the tokenizer written: the preset has no default, field review A28.)
  Checked nemotron = RunCheckSpec(Replace(WithStages("    convert: {}\n"), "preset: llama2-7b",
                                          "preset: nemotron4-15b\n    tokenizer: {library: sentencepiece, model: /t/n.model}"));
  EXPECT_TRUE(nemotron.ok) << ::testing::PrintToString(nemotron.lines);
  // A model described by its architecture alone has no family, so no converter.
  const std::string custom = Replace(
      WithStages("    convert: {}\n"), "    preset: llama2-7b\n",
      "    architecture: {numLayers: 12, hiddenSize: 768, ffnHiddenSize: 3072, numAttentionHeads: 12, "
      "vocabSize: 50304, maxPositionEmbeddings: 4096, normalization: layernorm, activation: gelu, "
      "positionEmbedding: learned_absolute, shareEmbeddings: true}\n"
      "    tokenizer: {library: huggingface, type: gpt2}\n");
  Checked c = RunCheckSpec(custom);
  EXPECT_FALSE(c.ok);
  ASSERT_FALSE(c.lines.empty());
  EXPECT_EQ(std::string("error spec.not-supported-yet@15:5: converting a model without a preset to "
                        "HuggingFace is not supported yet") + kNotYetHint,
            c.lines.back());
}

TEST(ChecksTestSpec, BuiltinCloudProfilesAreAccepted) {
  for (const char* profile : {"eks-efa", "gke-a4"}) {
    SCOPED_TRACE(profile);
    Checked c = RunCheckSpec(
        Replace(kBase, "profile: vanilla-k8s", std::string("profile: ") + profile));
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(Lines{}, c.lines);
  }
}

TEST(ChecksTestSpec, EveryRuntimeIsAcceptedByTheChecks) {
  for (const char* runtime : {"pytorchjob", "trainjob", "jobset", "indexed-job"}) {
    SCOPED_TRACE(runtime);
    Checked c = RunCheckSpec(std::string(kBase) + "      runtime: " + runtime + "\n");
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(Lines{}, c.lines);
  }
}

TEST(ChecksTestSpec, CloudStorageBackendsAreAcceptedByTheChecks) {
  // Whether a profile can mount them is the profile's business (Jsonnet).
  const std::pair<const char*, const char*> backends[] = {
      {"s3", "{bucket: my-bucket}"}, {"gcs", "{bucket: my-bucket}"}, {"fsxLustre", "{size: 1200Gi}"}};
  for (const auto& [backend, body] : backends) {
    SCOPED_TRACE(backend);
    Checked c = RunCheckSpec(Replace(kBase, "      nfs: {server: nfs.internal, path: /export}\n",
                                     std::string("      ") + backend + ": " + body + "\n"));
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(Lines{}, c.lines);
  }
}

TEST(ChecksTestSpec, VolumeNeedsExactlyOneBackend) {
  Checked c = RunCheckSpec(Replace(kBase, "      nfs: {server: nfs.internal, path: /export}\n",
                                   "      nfs: {server: nfs.internal, path: /export}\n"
                                   "      pvc: {claimName: results}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.storage-backend@11:5: spec.storage.results: set exactly one "
                  "backend (nfs, pvc, hostPath, fsxLustre, s3 or gcs)"},
            c.lines);
  c = RunCheckSpec(Replace(kBase, "      nfs: {server: nfs.internal, path: /export}\n",
                           "      mountPath: /r\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.storage-backend@11:5: spec.storage.results: set exactly one "
                  "backend (nfs, pvc, hostPath, fsxLustre, s3 or gcs)"},
            c.lines);
}

TEST(ChecksTestSpec, SharedStorageProblemIsReportedOnce) {
  Checked c = RunCheckSpec(Replace(kBase, "      nfs: {server: nfs.internal, path: /export}\n",
                                   "      nfs: {server: nfs.internal, path: /export}\n"
                                   "      pvc: {claimName: results}\n") +
                           "    - name: lab\n      profile: vanilla-k8s\n");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.storage-backend@11:5: spec.storage.results: set exactly one "
                  "backend (nfs, pvc, hostPath, fsxLustre, s3 or gcs)"},
            c.lines);
}

TEST(ChecksTestSpec, TargetStorageBackendsAreCheckedWhereWritten) {
  Checked c = RunCheckSpec(std::string(kBase) +
                           "      storage: {results: {hostPath: {path: /x}, pvc: {claimName: r}}}\n");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.storage-backend@23:17: spec.targets[0].storage.results: set exactly "
                  "one backend (nfs, pvc, hostPath, fsxLustre, s3 or gcs)"},
            c.lines);
}

TEST(ChecksTestSpec, GitopsIsAcceptedAndClustersMustNameTargets) {
  Checked c = RunCheckSpec(Replace(kBase, "  targets:\n",
                                   "  gitops: {repoURL: https://git.example/x.git}\n  targets:\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
  c = RunCheckSpec(Replace(kBase, "  targets:\n",
                           "  gitops:\n    repoURL: https://git.example/x.git\n"
                           "    clusters: {prod: https://k8s.example:443}\n  targets:\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.unknown-target@22:16: spec.gitops.clusters.prod: no target is "
                  "named 'prod'"},
            c.lines);
}

TEST(ChecksTestSpec, AnApplicationSetCannotCreateTheProjectsOfItsRoots) {
  // Without a platform bundle there is no roots AppProject to put the generated roots in (F14).
  const std::string gitops =
      "  gitops:\n    repoURL: https://git.example/x.git\n    platform: false\n"
      "    argocd: {applicationSet: true, createProject: true}\n  targets:\n";
  Checked c = RunCheckSpec(Replace(kBase, "  targets:\n", gitops));
  EXPECT_FALSE(c.ok);
  ASSERT_EQ(1u, c.lines.size());
  EXPECT_EQ(0u, c.lines[0].rfind("error spec.gitops-project@23:51: spec.gitops.argocd.createProject: "
                                 "with applicationSet and no platform bundle", 0))
      << c.lines[0];
  // createProject by default: located at applicationSet.
  c = RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, ", createProject: true", "")));
  EXPECT_FALSE(c.ok);
  ASSERT_EQ(1u, c.lines.size());
  EXPECT_EQ(0u, c.lines[0].rfind("error spec.gitops-project@23:30: ", 0)) << c.lines[0];
  // Either one alone is fine, and both together with the bundle (its roots project).
  c = RunCheckSpec(Replace(kBase, "  targets:\n",
                           Replace(gitops, "createProject: true", "createProject: false")));
  EXPECT_TRUE(c.ok);
  c = RunCheckSpec(Replace(kBase, "  targets:\n",
                           Replace(gitops, "applicationSet: true", "applicationSet: false")));
  EXPECT_TRUE(c.ok);
  c = RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "    platform: false\n", "")));
  EXPECT_TRUE(c.ok);
  // An engine's rule runs only when the spec names the engine (kEngine): Flux
  // alone never reads spec.gitops.argocd.
  c = RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "    platform: false\n",
                                                            "    platform: false\n    engines: [flux]\n")));
  EXPECT_TRUE(c.ok);
  c = RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "    platform: false\n",
                                                            "    platform: false\n    engines: [argocd, flux]\n")));
  EXPECT_FALSE(c.ok);
}

// C18/F17: a Flux health-check wait holds a kustomize-controller worker; stage
// Kustomizations poll, so a wait longer than 10 minutes is refused where it is
// written, and only when Flux reads it.
TEST(ChecksTestSpec, FluxWaitsAtMostTenMinutesPerHealthCheck) {
  const std::string gitops =
      "  gitops:\n    repoURL: https://git.example/x.git\n    engines: [flux]\n"
      "    defaultTimeout: 30m\n  targets:\n";
  Checked c = RunCheckSpec(Replace(kBase, "  targets:\n", gitops));
  EXPECT_FALSE(c.ok);
  ASSERT_EQ(1u, c.lines.size());
  EXPECT_EQ(0u, c.lines[0].rfind("error spec.flux-timeout@23:21: spec.gitops.defaultTimeout 30m is longer than 10m", 0))
      << c.lines[0];
  EXPECT_TRUE(RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "30m", "10m"))).ok);
  EXPECT_FALSE(RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "30m", "9m61s"))).ok);
  EXPECT_TRUE(RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "30m", "0.1h"))).ok);
  // Argo CD alone never reads it.
  EXPECT_TRUE(RunCheckSpec(Replace(kBase, "  targets:\n", Replace(gitops, "[flux]", "[argocd]"))).ok);
}

TEST(ChecksTestSpec, MonitoringNeedsSomethingToWatch) {
  Checked c = RunCheckSpec(
      Replace(kBase, "  targets:\n", "  monitoring: {serviceMonitor: true}\n  targets:\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.monitoring@20:32: spec.monitoring.serviceMonitor scrapes Triton, but "
                  "there is no serve stage (NeMo training has no metrics endpoint) | use "
                  "spec.monitoring.alerts for training: GPU alerts from the DCGM exporter"},
            c.lines);
  c = RunCheckSpec(Replace(kBase, "  targets:\n", "  monitoring: {alerts: true}\n  targets:\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
  c = RunCheckSpec(Replace(WithoutTrain("    tensorrtLLM: {checkpoint: hf/x}\n"), "  targets:\n",
                           "  monitoring: {alerts: true}\n  targets:\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.monitoring@15:24: spec.monitoring.alerts watches training and "
                  "serving, and there is neither"},
            c.lines);
}

TEST(ChecksTestSpec, DuplicateTargetNameIsLocatedAtTheSecond) {
  Checked c = RunCheckSpec(std::string(kBase) + "    - name: onprem\n      profile: vanilla-k8s\n");
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.duplicate-target@23:13: target name 'onprem' is used twice | every "
                  "target writes its own directory out/<project>/<target>/"},
            c.lines);
}

TEST(ChecksTestSpec, SftWithoutModelSource) {
  Checked c = RunCheckSpec(Replace(FineTuning("sft"), "    source: {nemo: m/x.nemo}\n", ""));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-source@15:13: mode sft fine-tunes existing weights: set "
                  "spec.model.source.nemo (a .nemo checkpoint) or spec.model.source.huggingface | "
                  "or pretrain first: add spec.stages.pretrain"},
            c.lines);
}

// Both frameworks continue pretraining from spec.model.source: NeMo 1 through
// model.restore_from_path (megatron_gpt_pretraining.py), NeMo 2 through
// AutoResume's restore_config (libsonnet/nemo/nemo2.libsonnet restorePath).
TEST(ChecksTestSpec, PretrainWithSource) {
  const std::string spec =
      Replace(kBase, "    preset: llama2-7b\n", "    preset: llama2-7b\n    source: {nemo: m/x.nemo}\n");
  Checked c = RunCheckSpec(spec);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
  // NeMo 2 restores a checkpoint directory (a .nemo file is framework-source's error).
  c = RunCheckSpec(Replace(Replace(Replace(spec, "mode: pretrain\n", "mode: pretrain\n      framework: nemo2\n"),
                                   "tag: \"24.07\"", "tag: \"25.04\""),
                           "m/x.nemo", "m/x-nemo2"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestSpec, HuggingfaceSourceNeedsAConverter) {
  // llama has an HF -> .nemo converter in libsonnet/models.json: imported before training.
  Checked c = RunCheckSpec(Replace(FineTuning("sft"), "source: {nemo: m/x.nemo}",
                                   "source: {huggingface: meta-llama/Llama-2-7b-hf}"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
  c = RunCheckSpec(Replace(Replace(FineTuning("sft"), "source: {nemo: m/x.nemo}",
                                   "source: {huggingface: nvidia/nemotron-4-15b-base}"),
                           "preset: llama2-7b", "preset: nemotron4-15b"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.no-converter@10:14: importing HuggingFace weights of the nemotron family: "
                  "no NeMo release nemoc accepts (24.07 to 25.07) ships a Hugging Face -> NeMo converter "
                  "for it | start from a .nemo checkpoint: spec.model.source.nemo"},
            c.lines);
}

TEST(ChecksTestSpec, PeftWithoutLora) {
  Checked c = RunCheckSpec(
      Replace(FineTuning("sft"), "      nodes: 2\n", "      nodes: 2\n      peft: {adapterDim: 8}\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.peft-without-lora@18:7: spec.stages.train.peft is set but mode is "
                  "sft | set mode: lora"},
            c.lines);
}

TEST(ChecksTestSpec, MissingData) {
  Checked c = RunCheckSpec(Replace(kBase, "      data: {mock: true}\n", ""));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-field@14:5: spec.stages.train: missing required field "
                  "'data' | set data: {mock: true}, {prefixes: [...]} or {fromDataPrep: true}"},
            c.lines);
  c = RunCheckSpec(Replace(FineTuning("lora"), "      data: {jsonl: {train: d/train.jsonl, validation: d/val.jsonl}}\n", ""));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-field@15:5: spec.stages.train: missing required field "
                  "'data' | fine-tuning reads JSONL: data: {jsonl: {train: squad/train.jsonl}}"},
            c.lines);
}

TEST(ChecksTestSpec, JsonlWithPretrain) {
  Checked c = RunCheckSpec(Replace(kBase, "data: {mock: true}", "data: {jsonl: {train: d/train.jsonl}}"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.wrong-data@19:14: pretraining reads Megatron indexed datasets "
                  "(prefixes), mock data or the dataPrep output, not JSONL | add a dataPrep "
                  "stage and use data: {fromDataPrep: true}"},
            c.lines);
}

TEST(ChecksTestSpec, FineTuningWithoutJsonl) {
  Checked c = RunCheckSpec(
      Replace(FineTuning("sft"), "data: {jsonl: {train: d/train.jsonl, validation: d/val.jsonl}}", "data: {mock: true}"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.wrong-data@20:7: mode sft reads JSONL records: set "
                  "spec.stages.train.data.jsonl"},
            c.lines);
}

TEST(ChecksTestSpec, FromDataPrepWithoutDataPrep) {
  Checked c = RunCheckSpec(Replace(kBase, "data: {mock: true}", "data: {fromDataPrep: true}"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error spec.missing-stage@19:14: spec.stages.train.data.fromDataPrep needs a "
                  "dataPrep stage"},
            c.lines);
  // With the stage, the spec is complete.
  c = RunCheckSpec(Replace(Replace(kBase, "data: {mock: true}", "data: {fromDataPrep: true}"),
                           "  stages:\n", "  stages:\n    dataPrep: {input: raw}\n"));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(Lines{}, c.lines);
}

TEST(ChecksTestSpec, ArithmeticRunsInsideCheckSpec) {
  Checked c = RunCheckSpec(Replace(kBase, "global: 32", "global: 36"));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(Lines{"error train.batch@18:33: global batch 36 is not a multiple of micro batch × "
                  "data-parallel size = 1 × 8 = 8 | nearest valid values: 32 or 40"},
            c.lines);
}

// Issue #48 item 3: a check registers itself for its scope. This one, of the
// evaluate stage, records the stages it ran for and reports nothing.
std::vector<std::string>& EvaluateCheckRuns() {
  static std::vector<std::string> runs;
  return runs;
}
void RecordEvaluate(const CheckInput&, const std::string& key, Diagnostics*) { EvaluateCheckRuns().push_back(key); }
NEMOC_REGISTER_CHECK("test.evaluate-ran", kStage, "evaluate", RecordEvaluate);

TEST(CheckRegistry, EachCheckIsRegisteredOnceAndRunsForItsScope) {
  std::set<std::string> names;
  std::vector<std::string> order;
  for (const RegisteredCheck* check : RegisteredChecks(Stages())) {
    EXPECT_TRUE(names.insert(check->name).second) << check->name << " registered twice";
    EXPECT_NE(nullptr, check->run) << check->name;
    if (check->scope == RegisteredCheck::Scope::kStage) {
      EXPECT_NE(nullptr, Stages().Find(check->key)) << check->name << ": no stage " << check->key;
    }
    if (check->scope == RegisteredCheck::Scope::kEngine) {
      EXPECT_NE(nullptr, EngineTable::Builtin().Find(check->key)) << check->name << ": no engine " << check->key;
    }
    order.push_back(check->name);
  }
  // From every file that declares checks: the linker kept them all.
  for (const char* name : {"spec.pipeline", "train.arithmetic", "serve.engine", "stages.needs"}) {
    EXPECT_EQ(1u, names.count(name)) << name;
  }
  // The spec's checks, then the training stages', then the stages' in pipeline order.
  auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  EXPECT_LT(at("stages.needs"), at("gitops.argocd-project"));  // the spec's, then the engines' by name
  EXPECT_LT(at("gitops.argocd-project"), at("gitops.flux-polls"));
  EXPECT_LT(at("gitops.flux-polls"), at("train.mode"));
  EXPECT_LT(at("train.warmup"), at("test.evaluate-ran"));
  EXPECT_LT(at("test.evaluate-ran"), at("serve.engine"));  // 40-evaluate before 70-serve

  EvaluateCheckRuns().clear();
  RunCheckSpec(kBase);
  EXPECT_EQ(std::vector<std::string>{}, EvaluateCheckRuns()) << "ran without an evaluate stage";
  RunCheckSpec(WithStages("    evaluate: {}\n"));
  EXPECT_EQ(std::vector<std::string>{"evaluate"}, EvaluateCheckRuns());
}

}  // namespace
}  // namespace nemoc
