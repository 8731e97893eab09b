#include "normalizer.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "schema_validator.h"
#include "spec_loader.h"

namespace nemoc {
namespace {

using nlohmann::json;

const char kSchemaPath[] = NEMOC_SOURCE_DIR "/schemas/project.schema.json";
const char kModelsPath[] = NEMOC_SOURCE_DIR "/libsonnet/models.json";

const InputSchema& Schema() {
  static const std::unique_ptr<InputSchema> schema = [] {
    std::string err;
    auto s = InputSchema::Load(kSchemaPath, &err);
    if (s == nullptr) ADD_FAILURE() << err;
    return s;
  }();
  return *schema;
}

const ModelCatalog& Catalog() {
  static const ModelCatalog catalog = [] {
    ModelCatalog c;
    std::string err;
    if (!ModelCatalog::Load(kModelsPath, &c, &err)) ADD_FAILURE() << err;
    return c;
  }();
  return catalog;
}

// The raw catalog file, for checks that look at every entry.
const json& CatalogJson() {
  static const json models = [] {
    std::ifstream in(kModelsPath);
    json parsed = json::parse(in, nullptr, false);
    if (parsed.is_discarded()) ADD_FAILURE() << kModelsPath << " is not JSON";
    return parsed;
  }();
  return models;
}

// A valid spec; tests replace pieces of it. Line numbers matter.
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
      nodes: 2
      parallelism: {tensor: 2}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "mutation anchor not found: " << from;
  } else {
    text.replace(at, from.size(), to);
  }
  return text;
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

struct Normalized {
  bool ok = false;
  json out;
  Diagnostics diags;  // the normalizer's only
};

// Load -> Validate (both must be clean) -> Normalize. Without `validate`, a
// spec the schema refuses reaches the normalizer (its own checks are the
// defence when the catalogue and the schema disagree).
Normalized NormalizeSpec(const std::string& text, bool validate = true) {
  Normalized n;
  Document doc;
  Diagnostics before;
  std::set<std::string> yaml11;
  if (!LoadSpecText("spec.yaml", text, &doc, &before, {}, &yaml11) ||
      (validate && !Schema().Validate(doc, yaml11, &before))) {
    ADD_FAILURE() << "spec does not load/validate: " << ::testing::PrintToString(RenderAll(before));
    return n;
  }
  EXPECT_TRUE(before.empty()) << ::testing::PrintToString(RenderAll(before));
  n.ok = Normalize(doc, Schema(), Catalog(), &n.out, &n.diags);
  return n;
}

const char* const kRequiredArchitecture[] = {
    "numLayers",  "hiddenSize", "ffnHiddenSize",        "numAttentionHeads",
    "numQueryGroups", "vocabSize", "maxPositionEmbeddings"};

// ---------------------------------------------------------------------------
// The model catalog.

TEST(NormalizerTestCatalog, LoadsAndFinds) {
  EXPECT_EQ(CatalogJson()["models"].size(), Catalog().Names().size());
  EXPECT_GE(Catalog().Names().size(), 10u);
  ASSERT_NE(nullptr, Catalog().Find("llama3.1-405b"));
  EXPECT_EQ(126, (*Catalog().Find("llama3.1-405b"))["architecture"]["numLayers"]);
  EXPECT_EQ(nullptr, Catalog().Find("llama3.1-406b"));
  EXPECT_EQ(nullptr, Catalog().Find(""));
}

TEST(NormalizerTestCatalog, LoadErrors) {
  ModelCatalog c;
  std::string err;
  EXPECT_FALSE(ModelCatalog::Load("/nonexistent/models.json", &c, &err));
  EXPECT_EQ("cannot read model catalog: /nonexistent/models.json does not exist", err);
  // A JSON file without a "models" object (the schema) is refused.
  EXPECT_FALSE(ModelCatalog::Load(kSchemaPath, &c, &err));
  EXPECT_EQ(std::string("model catalog ") + kSchemaPath +
                " is not valid (expected {\"models\": {...}})",
            err);
}

TEST(NormalizerTestCatalog, EveryModelIsCompleteAndConsistent) {
  const json& models = CatalogJson()["models"];
  const json& arch_schema = Schema().json()["definitions"]["architecture"]["properties"];
  ASSERT_TRUE(models.is_object());
  for (const auto& [name, entry] : models.items()) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(entry.contains("family") && entry["family"].is_string());
    EXPECT_TRUE(entry.contains("huggingface") && entry["huggingface"].is_string());
    ASSERT_TRUE(entry.contains("seqLength") && entry["seqLength"].is_number_integer());
    const json& arch = entry["architecture"];
    ASSERT_TRUE(arch.is_object());
    bool complete = true;
    for (const char* field : kRequiredArchitecture) {
      const bool ok = arch.contains(field) && arch[field].is_number_integer() &&
                      arch[field].get<int64_t>() > 0;
      EXPECT_TRUE(ok) << field;
      complete = complete && ok;
    }
    if (!complete) continue;
    EXPECT_EQ(0, arch["numAttentionHeads"].get<int64_t>() % arch["numQueryGroups"].get<int64_t>())
        << "heads " << arch["numAttentionHeads"] << " / query groups " << arch["numQueryGroups"];
    EXPECT_LE(entry["seqLength"].get<int64_t>(), arch["maxPositionEmbeddings"].get<int64_t>());
    if (arch.contains("numExperts")) {
      ASSERT_TRUE(arch.contains("moeTopK"));
      EXPECT_LE(arch["moeTopK"].get<int64_t>(), arch["numExperts"].get<int64_t>());
    }
    // Every field is one the spec's architecture section knows, with an allowed value.
    for (const auto& [field, value] : arch.items()) {
      ASSERT_TRUE(arch_schema.contains(field)) << field;
      if (arch_schema[field].contains("enum")) {
        bool allowed = false;
        for (const auto& option : arch_schema[field]["enum"]) allowed = allowed || option == value;
        EXPECT_TRUE(allowed) << field << " = " << value;
      }
    }
  }
}

// Field review A28: a preset whose Hugging Face repository has no tokenizer
// AutoTokenizer can load says where its tokenizer comes from, with citations;
// both Nemotron-4 presets are such presets (no public nvidia/nemotron-4-15b-base,
// and nvidia/Nemotron-4-340B-Base is a NeMo checkpoint).
TEST(NormalizerTestCatalog, PresetsWithoutAHubTokenizerCiteWhereTheirsComesFrom) {
  // "<owner>/<repo> <tag> <path>:<line>[-<line>] (...)" or a Hugging Face page.
  const std::regex citation(R"(^([A-Za-z0-9-]+/[A-Za-z0-9._-]+ [A-Za-z0-9.]+ [^ ]+:[0-9]+(-[0-9]+)?( \(.+\))?|huggingface\.co[/:].+)$)");
  int nemotron = 0;
  for (const auto& [name, entry] : CatalogJson()["models"].items()) {
    SCOPED_TRACE(name);
    if (entry["family"] == "nemotron") {
      ++nemotron;
      ASSERT_TRUE(entry.contains("tokenizer")) << "a nemotron preset must name where its tokenizer comes from";
    }
    if (!entry.contains("tokenizer")) continue;
    const json& t = entry["tokenizer"];
    ASSERT_TRUE(t.is_object());
    EXPECT_TRUE(t.value("source", "") == "container" || t.value("source", "") == "hub" ||
                t.value("source", "") == ".nemo")
        << t.value("source", "");
    for (const char* field : {"why", "use", "starter"}) {
      EXPECT_FALSE(t.value(field, std::string()).empty()) << field;
    }
    ASSERT_TRUE(t.contains("cite") && t["cite"].is_array() && !t["cite"].empty());
    for (const auto& c : t["cite"]) {
      ASSERT_TRUE(c.is_string());
      EXPECT_TRUE(std::regex_match(c.get<std::string>(), citation)) << c;
    }
    // The starter's value is a tokenizer the spec schema accepts.
    Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                                         "    preset: " + name + "\n    tokenizer: " +
                                             t["starter"].get<std::string>() + "\n"));
    EXPECT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  }
  EXPECT_EQ(2, nemotron);
}

// ---------------------------------------------------------------------------
// Presets and architectures.

TEST(NormalizerTestModel, PresetIsResolvedFromTheCatalog) {
  Normalized n = NormalizeSpec(Replace(kBase, "preset: llama2-7b", "preset: llama2-70b"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(Lines{}, RenderAll(n.diags));
  const json& model = n.out["spec"]["model"];
  EXPECT_EQ((*Catalog().Find("llama2-70b"))["architecture"], model["architecture"]);
  EXPECT_EQ(80, model["architecture"]["numLayers"]);
  EXPECT_EQ(8, model["architecture"]["numQueryGroups"]);
  EXPECT_EQ("llama", model["family"]);
  EXPECT_EQ("meta-llama/Llama-2-70b-hf", model["huggingface"]);
  EXPECT_EQ(4096, model["defaultSeqLength"]);
  EXPECT_EQ((json{{"library", "huggingface"}, {"type", "meta-llama/Llama-2-70b-hf"}}),
            model["tokenizer"]);
}

TEST(NormalizerTestModel, ExplicitArchitectureFieldsOverrideThePreset) {
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                             "    preset: llama2-7b\n"
                             "    architecture: {numLayers: 16, numQueryGroups: 8, rotaryBase: 500000}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  json expected = (*Catalog().Find("llama2-7b"))["architecture"];
  expected["numLayers"] = 16;
  expected["numQueryGroups"] = 8;
  expected["rotaryBase"] = 500000;
  EXPECT_EQ(expected, n.out["spec"]["model"]["architecture"]);
}

TEST(NormalizerTestModel, ExplicitTokenizerIsKept) {
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                             "    preset: llama2-7b\n"
                             "    tokenizer: {library: sentencepiece, model: /tok/t.model}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ((json{{"library", "sentencepiece"}, {"model", "/tok/t.model"}}),
            n.out["spec"]["model"]["tokenizer"]);
}

// A preset without a default tokenizer (libsonnet/models.json tokenizer, field
// review A28): nemoc writes no Hub id that does not exist or cannot be loaded;
// the stages that build the tokenizer are refused at the preset, naming what works.
TEST(NormalizerTestModel, APresetWithoutADefaultTokenizerRefusesTheStagesThatReadIt) {
  const std::string nemotron = Replace(kBase, "preset: llama2-7b", "preset: nemotron4-15b");
  const std::string refused =
      "error spec.no-tokenizer@9:13: preset nemotron4-15b has no tokenizer nemoc can default to (NVIDIA "
      "publishes no Hugging Face repository of Nemotron-4 15B; its tokenizer is the 256k SentencePiece "
      "model a Nemotron-4 .nemo carries) and ";
  const std::string hint =
      " | set spec.model.tokenizer: {library: sentencepiece, model: <nemotron_2_256k.model on shared "
      "storage, e.g. taken out of the .nemo>} or {library: huggingface, type: <a Hugging Face tokenizer "
      "directory on shared storage>}";
  // NeMo 1 pretraining (mock data too: the model builds its tokenizer).
  Normalized n = NormalizeSpec(nemotron);
  EXPECT_FALSE(n.ok);
  EXPECT_EQ(Lines{refused + "spec.stages.train (NeMo 1 pretraining) builds it" + hint}, RenderAll(n.diags));
  EXPECT_FALSE(n.out["spec"]["model"].contains("tokenizer"));
  // NeMo 2 pretraining on prepared data.
  n = NormalizeSpec(Replace(Replace(nemotron, "  image: {repository: nvcr.io/nvidia/nemo, tag: \"24.07\"}",
                                    "  image: {repository: nvcr.io/nvidia/nemo, tag: \"25.02\"}"),
                            "      data: {mock: true}\n",
                            "      framework: nemo2\n      data: {prefixes: [{path: corpus_text_document}]}\n"));
  EXPECT_EQ(Lines{refused + "spec.stages.train (NeMo 2 pretraining on prepared data) builds it" + hint},
            RenderAll(n.diags));
  // Data preparation.
  n = NormalizeSpec(Replace(nemotron, "  stages:\n",
                            "  stages:\n    dataPrep: {input: raw/corpus.jsonl}\n"));
  EXPECT_EQ(Lines{refused + "spec.stages.dataPrep tokenizes with it" + hint}, RenderAll(n.diags));
  // NeMo 2 pretraining on mock data (MockDataModule's own tokenizer) and fine-tuning
  // (the checkpoint's) read none: built, without a tokenizer.
  n = NormalizeSpec(Replace(Replace(nemotron, "tag: \"24.07\"", "tag: \"25.02\""), "      data: {mock: true}\n",
                            "      framework: nemo2\n      data: {mock: true}\n"));
  EXPECT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  n = NormalizeSpec(Replace(Replace(nemotron, "    preset: nemotron4-15b\n",
                                    "    preset: nemotron4-15b\n    source: {nemo: models/nemotron.nemo}\n"),
                            "      data: {mock: true}\n",
                            "      mode: sft\n      data: {jsonl: {train: squad/train.jsonl}}\n"));
  EXPECT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_FALSE(n.out["spec"]["model"].contains("tokenizer"));
  // The spec's tokenizer is used.
  n = NormalizeSpec(Replace(nemotron, "    preset: nemotron4-15b\n",
                            "    preset: nemotron4-15b\n    tokenizer: {library: sentencepiece, model: /t/n.model}\n"));
  EXPECT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ((json{{"library", "sentencepiece"}, {"model", "/t/n.model"}}), n.out["spec"]["model"]["tokenizer"]);
}

TEST(NormalizerTestModel, UnknownPresetWithDidYouMean) {
  // The schema enumerates the presets (scripts/update-schema-catalogue):
  // this is the normalizer's own check behind it.
  Normalized n = NormalizeSpec(Replace(kBase, "preset: llama2-7b", "preset: lama2-7b"), /*validate=*/false);
  EXPECT_FALSE(n.ok);
  EXPECT_EQ(Lines{"error spec.unknown-model@9:13: unknown model preset 'lama2-7b' | did you "
                  "mean 'llama2-7b'?"},
            RenderAll(n.diags));
  EXPECT_EQ(json::object(), n.out["spec"]["model"]["architecture"]);
}

TEST(NormalizerTestModel, UnknownPresetListsKnownPresets) {
  Normalized n = NormalizeSpec(Replace(kBase, "preset: llama2-7b", "preset: gpt-neox-20b"), /*validate=*/false);
  EXPECT_FALSE(n.ok);
  EXPECT_EQ(Lines{"error spec.unknown-model@9:13: unknown model preset 'gpt-neox-20b' | known "
                  "presets: llama2-13b, llama2-70b, llama2-7b, llama3-70b, llama3-8b, "
                  "llama3.1-405b, llama3.1-70b, llama3.1-8b, mixtral-8x7b, nemotron4-15b, "
                  "nemotron4-340b"},
            RenderAll(n.diags));
}

TEST(NormalizerTestModel, ExplicitArchitectureMissingRequiredFields) {
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                             "    architecture: {numLayers: 2, hiddenSize: 64}\n"
                             "    tokenizer: {library: huggingface, type: gpt2}\n"));
  EXPECT_FALSE(n.ok);
  EXPECT_EQ(Lines{"error spec.missing-field@9:5: spec.model.architecture: missing "
                  "ffnHiddenSize, numAttentionHeads, vocabSize, maxPositionEmbeddings (no "
                  "preset provides them)"},
            RenderAll(n.diags));
}

TEST(NormalizerTestModel, NeitherPresetNorArchitecture) {
  Normalized n = NormalizeSpec(Replace(kBase, "  model:\n    preset: llama2-7b\n", "  model: {}\n"));
  EXPECT_FALSE(n.ok);
  EXPECT_EQ((Lines{"error spec.missing-field@8:3: spec.model: set a preset or an architecture | "
                   "known presets: see libsonnet/models.json, e.g. llama3.1-8b",
                   "error spec.missing-field@8:3: spec.model: a tokenizer is required when no "
                   "preset is given | e.g. tokenizer: {library: huggingface, type: "
                   "meta-llama/Llama-3.1-8B}"}),
            RenderAll(n.diags));
}

const char kFullArchitecture[] =
    "    architecture: {numLayers: 4, hiddenSize: 256, ffnHiddenSize: 1024, "
    "numAttentionHeads: 16, vocabSize: 32000, maxPositionEmbeddings: 2048}\n";

TEST(NormalizerTestModel, ArchitectureWithoutPresetNeedsATokenizer) {
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n", kFullArchitecture));
  EXPECT_FALSE(n.ok);
  EXPECT_EQ(Lines{"error spec.missing-field@8:3: spec.model: a tokenizer is required when no "
                  "preset is given | e.g. tokenizer: {library: huggingface, type: "
                  "meta-llama/Llama-3.1-8B}"},
            RenderAll(n.diags));
}

TEST(NormalizerTestModel, QueryGroupsDefaultToHeadsAndArchitectureDefaults) {
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                             std::string(kFullArchitecture) +
                                 "    tokenizer: {library: huggingface, type: gpt2}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ((json{{"numLayers", 4},
                  {"hiddenSize", 256},
                  {"ffnHiddenSize", 1024},
                  {"numAttentionHeads", 16},
                  {"numQueryGroups", 16},
                  {"vocabSize", 32000},
                  {"maxPositionEmbeddings", 2048},
                  {"normalization", "rmsnorm"},
                  {"activation", "fast-swiglu"},
                  {"positionEmbedding", "rope"},
                  {"rotaryBase", 10000},
                  {"shareEmbeddings", false}}),
            n.out["spec"]["model"]["architecture"]);
  const json& model = n.out["spec"]["model"];
  EXPECT_FALSE(model.contains("family"));
  EXPECT_FALSE(model.contains("defaultSeqLength"));
  // Without a preset, the sequence length defaults to maxPositionEmbeddings.
  EXPECT_EQ(2048, n.out["spec"]["stages"]["train"]["seqLength"]);
}

TEST(NormalizerTestModel, ExplicitQueryGroupsAreKept) {
  std::string arch = kFullArchitecture;
  arch = Replace(arch, "numAttentionHeads: 16", "numAttentionHeads: 16, numQueryGroups: 4");
  Normalized n = NormalizeSpec(Replace(kBase, "    preset: llama2-7b\n",
                             arch + "    tokenizer: {library: huggingface, type: gpt2}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(4, n.out["spec"]["model"]["architecture"]["numQueryGroups"]);
}

// ---------------------------------------------------------------------------
// Train stage defaults.

TEST(NormalizerTestTrain, SeqLengthDefaultsToTheCatalogSeqLength) {
  // llama3.1-8b: seqLength 8192, maxPositionEmbeddings 131072.
  Normalized n = NormalizeSpec(Replace(kBase, "preset: llama2-7b", "preset: llama3.1-8b"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(8192, n.out["spec"]["stages"]["train"]["seqLength"]);
  EXPECT_EQ(8192, n.out["spec"]["model"]["defaultSeqLength"]);
}

TEST(NormalizerTestTrain, ExplicitSeqLengthIsKept) {
  Normalized n = NormalizeSpec(Replace(kBase, "      nodes: 2\n", "      nodes: 2\n      seqLength: 1024\n"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ(1024, n.out["spec"]["stages"]["train"]["seqLength"]);
}

TEST(NormalizerTestTrain, SectionsAndCollectionsAreCreatedWithDefaults) {
  Normalized n = NormalizeSpec(kBase);
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  const json& train = n.out["spec"]["stages"]["train"];
  EXPECT_EQ((json{{"tensor", 2}, {"pipeline", 1}, {"context", 1}, {"expert", 1},
                  {"sequenceParallel", false}}),
            train["parallelism"]);
  EXPECT_EQ((json{{"lr", 0.0003}, {"minLr", 3e-05}, {"warmupSteps", 100},
                  {"weightDecay", 0.1}, {"gradientClip", 1.0}}),
            train["optimizer"]);
  EXPECT_EQ((json{{"every", 500}, {"keep", 3}, {"saveLast", true}, {"resume", "auto"},
                  {"enabled", true}}),
            train["checkpoint"]);
  EXPECT_FALSE(train.contains("peft"));  // only for mode lora
  EXPECT_EQ(json::array(), train["overrides"]);
  EXPECT_EQ(json::object(), train["env"]);
  EXPECT_EQ(json::object(), train["resources"]);
  EXPECT_EQ(json::object(), n.out["metadata"]["labels"]);
  EXPECT_EQ(json::object(), n.out["metadata"]["annotations"]);
  EXPECT_EQ(json::array(), n.out["spec"]["imagePullSecrets"]);
  EXPECT_EQ((json{{"serviceMonitor", false},
                  {"alerts", false},
                  {"thresholds", {{"gpuUtilizationPercent", 80}, {"gpuMemoryPercent", 95}, {"stalledAfter", "15m"}}}}),
            n.out["spec"]["monitoring"]);
  EXPECT_FALSE(n.out["spec"].contains("gitops"));
  EXPECT_EQ(json::object(), n.out["spec"]["targets"][0]["nodeSelector"]);
}

TEST(NormalizerTestTrain, LoraGetsPeftDefaults) {
  std::string text = Replace(kBase, "      nodes: 2\n", "      mode: lora\n      nodes: 2\n");
  text = Replace(text, "data: {mock: true}", "data: {jsonl: {train: d/train.jsonl}}");
  text = Replace(text, "    preset: llama2-7b\n", "    preset: llama2-7b\n    source: {nemo: m.nemo}\n");
  Normalized n = NormalizeSpec(text);
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ((json{{"adapterDim", 32}, {"alpha", 32}, {"dropout", 0.0},
                  {"targetModules", {"linear_qkv"}}}),
            n.out["spec"]["stages"]["train"]["peft"]);
  EXPECT_EQ("{input} {output}", n.out["spec"]["stages"]["train"]["data"]["jsonl"]["promptTemplate"]);
}

// A19: fine-tuning a trained model defaults to NeMo 2's fine-tuning rates,
// not pretraining's 3e-4; what the spec writes wins.
TEST(NormalizerTestTrain, FineTuningGetsFineTuningLearningRates) {
  std::string text = Replace(kBase, "data: {mock: true}", "data: {jsonl: {train: d/train.jsonl}}");
  text = Replace(text, "    preset: llama2-7b\n", "    preset: llama2-7b\n    source: {nemo: m.nemo}\n");
  for (const auto& [mode, lr] : std::vector<std::pair<std::string, double>>{{"sft", 5e-6}, {"lora", 1e-4}}) {
    Normalized n = NormalizeSpec(Replace(text, "      nodes: 2\n", "      mode: " + mode + "\n      nodes: 2\n"));
    ASSERT_TRUE(n.ok) << mode << ::testing::PrintToString(RenderAll(n.diags));
    EXPECT_EQ(lr, n.out["spec"]["stages"]["train"]["optimizer"]["lr"]) << mode;
    EXPECT_EQ(0.0, n.out["spec"]["stages"]["train"]["optimizer"]["minLr"]) << mode;
  }
  Normalized n = NormalizeSpec(Replace(text, "      nodes: 2\n",
                                       "      mode: sft\n      optimizer: {lr: 0.00001}\n      nodes: 2\n"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ(1e-5, n.out["spec"]["stages"]["train"]["optimizer"]["lr"]);
}

TEST(NormalizerTestTrain, ServiceAccountDefaults) {
  Normalized n = NormalizeSpec(kBase);
  ASSERT_TRUE(n.ok);
  EXPECT_EQ((json{{"name", "demo-workload"}, {"create", true}}), n.out["spec"]["serviceAccount"]);

  n = NormalizeSpec(Replace(kBase, "  namespace: nemo\n", "  namespace: nemo\n  serviceAccount: {create: false}\n"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ((json{{"name", "demo-workload"}, {"create", false}}), n.out["spec"]["serviceAccount"]);

  n = NormalizeSpec(Replace(kBase, "  namespace: nemo\n", "  namespace: nemo\n  serviceAccount: {name: trainer}\n"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ((json{{"name", "trainer"}, {"create", true}}), n.out["spec"]["serviceAccount"]);
}

TEST(NormalizerTestPipeline, LaterStagesInheritWhatEarlierStagesFix) {
  Normalized n = NormalizeSpec(Replace(
      kBase, "  stages:\n",
      "  stages:\n    ncclTest: {}\n    evaluate: {}\n    tensorrtLLM: {maxBatchSize: 32, tensorParallel: 2}\n"
      "    serve: {engine: e}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  const json& stages = n.out["spec"]["stages"];
  // Evaluation loads the checkpoint with the training parallelism.
  EXPECT_EQ(stages["train"]["parallelism"]["tensor"], stages["evaluate"]["tensorParallel"]);
  EXPECT_EQ(stages["train"]["parallelism"]["pipeline"], stages["evaluate"]["pipelineParallel"]);
  EXPECT_EQ(json({"hellaswag"}), stages["evaluate"]["tasks"]);
  // After NeMo 2 training, the Evals Factory's harness has no hellaswag
  // completions task: mmlu; a .nemo named explicitly goes to the launcher's.
  Normalized nemo2 = NormalizeSpec(Replace(Replace(kBase, "      data: {mock: true}\n",
                                                   "      data: {mock: true}\n      framework: nemo2\n"),
                                           "  stages:\n", "  stages:\n    evaluate: {}\n"));
  ASSERT_TRUE(nemo2.ok) << ::testing::PrintToString(RenderAll(nemo2.diags));
  EXPECT_EQ(json({"mmlu"}), nemo2.out["spec"]["stages"]["evaluate"]["tasks"]);
  // ... and one pipeline stage: in-framework deployment fails with more.
  Normalized nemo2_pp = NormalizeSpec(Replace(Replace(kBase, "      parallelism: {tensor: 2}\n",
                                                      "      parallelism: {tensor: 2, pipeline: 2}\n      framework: nemo2\n"),
                                              "  stages:\n", "  stages:\n    evaluate: {}\n"));
  ASSERT_TRUE(nemo2_pp.ok) << ::testing::PrintToString(RenderAll(nemo2_pp.diags));
  EXPECT_EQ(2, nemo2_pp.out["spec"]["stages"]["evaluate"]["tensorParallel"]);
  EXPECT_EQ(1, nemo2_pp.out["spec"]["stages"]["evaluate"]["pipelineParallel"]);
  Normalized dot_nemo = NormalizeSpec(Replace(Replace(kBase, "      data: {mock: true}\n",
                                                      "      data: {mock: true}\n      framework: nemo2\n"),
                                              "  stages:\n", "  stages:\n    evaluate: {checkpoint: m/x.nemo}\n"));
  ASSERT_TRUE(dot_nemo.ok) << ::testing::PrintToString(RenderAll(dot_nemo.diags));
  EXPECT_EQ(json({"hellaswag"}), dot_nemo.out["spec"]["stages"]["evaluate"]["tasks"]);
  // Triton serves with the engine's batch limit and tensor parallelism.
  EXPECT_EQ(32, stages["serve"]["triton"]["maxBatchSize"]);
  EXPECT_EQ(2, stages["serve"]["triton"]["tensorParallel"]);
  EXPECT_EQ(1, stages["serve"]["triton"]["replicas"]);
  // Triton and TensorRT-LLM share one image default; the preflight uses training's image.
  const json triton = {{"repository", "nvcr.io/nvidia/tritonserver"}, {"tag", "25.01-trtllm-python-py3"},
                       {"pullPolicy", "IfNotPresent"}};
  EXPECT_EQ(triton, stages["serve"]["triton"]["image"]);
  EXPECT_EQ(triton, stages["tensorrtLLM"]["image"]);
  EXPECT_FALSE(stages["serve"].contains("image"));
  EXPECT_EQ(stages["train"]["image"], stages["ncclTest"]["image"]);

  // Without an engine stage: the documented fallbacks; a user image keeps the pull-policy default.
  n = NormalizeSpec(Replace(kBase, "  stages:\n",
                            "  stages:\n    serve: {engine: e, triton: {image: {repository: r.io/triton, tag: t1}}}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(64, n.out["spec"]["stages"]["serve"]["triton"]["maxBatchSize"]);
  EXPECT_EQ(1, n.out["spec"]["stages"]["serve"]["triton"]["tensorParallel"]);
  EXPECT_EQ((json{{"repository", "r.io/triton"}, {"tag", "t1"}, {"pullPolicy", "IfNotPresent"}}),
            n.out["spec"]["stages"]["serve"]["triton"]["image"]);
}

// One TensorRT-LLM release per engine (field-review.md A26): the image written
// on one of the two stages follows into the other; two written must agree.
TEST(NormalizerTestPipeline, TheEngineAndItsServerRunOneTensorRtLlmRelease) {
  const auto spec = [](const std::string& engine, const std::string& serve) {
    return Replace(kBase, "  stages:\n",
                   "  stages:\n    tensorrtLLM: {" + engine + "}\n    serve: {triton: {" + serve + "}}\n");
  };
  const json t2407 = {{"repository", "nvcr.io/nvidia/tritonserver"}, {"tag", "24.07-trtllm-python-py3"},
                      {"pullPolicy", "Always"}};
  const std::string written = "image: {repository: nvcr.io/nvidia/tritonserver, tag: 24.07-trtllm-python-py3, "
                              "pullPolicy: Always}";
  // Only the engine's: the server follows it (was: the server kept the 24.07 default
  // while a 25.01 engine was built, and crashed at model load).
  Normalized n = NormalizeSpec(spec(written, ""));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(t2407, n.out["spec"]["stages"]["tensorrtLLM"]["image"]);
  EXPECT_EQ(t2407, n.out["spec"]["stages"]["serve"]["triton"]["image"]);
  // Only the server's: the engine follows it.
  n = NormalizeSpec(spec("", written));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(t2407, n.out["spec"]["stages"]["tensorrtLLM"]["image"]);
  EXPECT_EQ(t2407, n.out["spec"]["stages"]["serve"]["triton"]["image"]);
  // Neither: the schema default, nemoc's newest tested release, for both.
  n = NormalizeSpec(spec("", ""));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ("25.01-trtllm-python-py3", n.out["spec"]["stages"]["tensorrtLLM"]["image"]["tag"]);
  EXPECT_EQ(n.out["spec"]["stages"]["tensorrtLLM"]["image"], n.out["spec"]["stages"]["serve"]["triton"]["image"]);
  // Both, one NGC release with another suffix or pull policy: accepted as written.
  n = NormalizeSpec(spec(written, "image: {repository: nvcr.io/nvidia/tritonserver, tag: 24.07-trtllm-python-py3-x}"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ("24.07-trtllm-python-py3-x", n.out["spec"]["stages"]["serve"]["triton"]["image"]["tag"]);
  // Both, two releases: refused at the server's tag (line 15 of the spec).
  n = NormalizeSpec(spec(written, "image: {repository: nvcr.io/nvidia/tritonserver, tag: 25.01-trtllm-python-py3}"));
  EXPECT_FALSE(n.ok);
  const Lines got = RenderAll(n.diags);
  ASSERT_EQ(1u, got.size()) << ::testing::PrintToString(got);
  EXPECT_EQ(0u, got[0].find("error spec.engine-release@15:"));
  EXPECT_NE(std::string::npos, got[0].find("spec.stages.serve.triton.image nvcr.io/nvidia/tritonserver:25.01-trtllm-"
                                           "python-py3 is not the TensorRT-LLM release of spec.stages.tensorrtLLM."
                                           "image nvcr.io/nvidia/tritonserver:24.07-trtllm-python-py3"))
      << got[0];
  // Images that are not NGC tritonserver releases must be the same image.
  n = NormalizeSpec(spec("image: {repository: r.io/trtllm, tag: '0.17'}", "image: {repository: r.io/triton, tag: '0.17'}"));
  EXPECT_FALSE(n.ok);
  n = NormalizeSpec(spec("image: {repository: r.io/trtllm, tag: '0.17'}", "image: {repository: r.io/trtllm, tag: '0.17'}"));
  EXPECT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
}

// The default Triton image is the newest release nemoc writes the model
// repository for (field-review.md F22), and so runs on every GPU nemoc knows.
TEST(NormalizerTestPipeline, TheDefaultTritonImageIsTheNewestServedReleaseAndRunsEverywhere) {
  std::ifstream schema_in(kSchemaPath);
  const json schema = json::parse(schema_in);
  const std::string tag = schema["definitions"]["tritonImage"]["default"]["tag"];
  std::ifstream serve_in(NEMOC_SOURCE_DIR "/libsonnet/stages/serve.libsonnet");
  const std::string serve((std::istreambuf_iterator<char>(serve_in)), std::istreambuf_iterator<char>());
  const size_t at = serve.find("served:: [");
  ASSERT_NE(std::string::npos, at);
  const std::string list = serve.substr(at, serve.find(']', at) - at);
  const std::string newest = list.substr(list.rfind("'", list.size() - 2) + 1,
                                         list.rfind("'") - list.rfind("'", list.size() - 2) - 1);
  std::ifstream templates_in(NEMOC_SOURCE_DIR "/libsonnet/triton_templates.json");
  const json templates = json::parse(templates_in);
  ASSERT_TRUE(templates.contains(newest)) << newest;
  EXPECT_EQ(templates[newest]["tritonReleases"][0].get<std::string>(), tag.substr(0, 5)) << newest;
  std::ifstream gpus_in(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json");
  const json gpus = json::parse(gpus_in);
  for (const auto& [name, gpu] : gpus["accelerators"].items()) {
    if (!gpu.contains("minimumRelease") || !gpu["minimumRelease"].contains("tritonserver")) continue;
    EXPECT_LE(gpu["minimumRelease"]["tritonserver"].get<std::string>(), tag.substr(0, 5)) << name;
  }
}

// The default NeMo image (spec.image absent) is the newest release nemoc has
// tables for (libsonnet/nemo/versions.json), at least every accelerator's
// minimumRelease.nemo (field-review.md F22): a B200 spec needs no image.
TEST(NormalizerTestPipeline, TheDefaultNemoImageIsTheNewestTestedReleaseAndRunsEverywhere) {
  std::ifstream schema_in(kSchemaPath);
  const json schema = json::parse(schema_in);
  const json image = schema["properties"]["spec"]["properties"]["image"]["default"];
  EXPECT_EQ("nvcr.io/nvidia/nemo", image["repository"].get<std::string>());
  const std::string tag = image["tag"];
  std::ifstream versions_in(NEMOC_SOURCE_DIR "/libsonnet/nemo/versions.json");
  const json versions = json::parse(versions_in);
  std::string newest;
  for (const auto& [release, _] : versions["releases"].items()) newest = std::max(newest, release);
  EXPECT_EQ(newest, tag);
  std::ifstream gpus_in(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json");
  const json gpus = json::parse(gpus_in);
  for (const auto& [name, gpu] : gpus["accelerators"].items()) {
    if (!gpu.contains("minimumRelease") || !gpu["minimumRelease"].contains("nemo")) continue;
    EXPECT_LE(gpu["minimumRelease"]["nemo"].get<std::string>(), tag) << name;
  }
  Normalized n = NormalizeSpec(Replace(kBase, "  image: {repository: nvcr.io/nvidia/nemo, tag: \"24.07\"}\n", ""));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(tag, n.out["spec"]["stages"]["train"]["image"]["tag"].get<std::string>());
}

TEST(NormalizerTestTrain, StageImagesDefaultToSpecImage) {
  const json spec_image = {{"repository", "nvcr.io/nvidia/nemo"}, {"tag", "24.07"},
                           {"pullPolicy", "IfNotPresent"}};
  Normalized n = NormalizeSpec(Replace(kBase, "  stages:\n", "  stages:\n    evaluate: {batchSize: 4}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  EXPECT_EQ(spec_image, n.out["spec"]["image"]);
  EXPECT_EQ(spec_image, n.out["spec"]["stages"]["train"]["image"]);
  EXPECT_EQ(spec_image, n.out["spec"]["stages"]["evaluate"]["image"]);

  n = NormalizeSpec(Replace(kBase, "      nodes: 2\n",
                  "      nodes: 2\n      image: {repository: example.com/nemo, tag: v2, "
                  "pullPolicy: Always}\n"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ((json{{"repository", "example.com/nemo"}, {"tag", "v2"}, {"pullPolicy", "Always"}}),
            n.out["spec"]["stages"]["train"]["image"]);
  EXPECT_EQ(spec_image, n.out["spec"]["image"]);
}

// ---------------------------------------------------------------------------
// Storage per target.

TEST(NormalizerTestStorage, DataDefaultsToResults) {
  Normalized n = NormalizeSpec(kBase);
  ASSERT_TRUE(n.ok);
  const json results = {{"nfs", {{"server", "nfs.internal"}, {"path", "/export"}, {"readOnly", false}}},
                        {"mountPath", "/results"}};
  EXPECT_EQ((json{{"pointer", "/spec/storage"},
                  {"results", results},
                  {"data", results},
                  {"separateData", false}}),
            n.out["spec"]["targets"][0]["storage"]);
}

TEST(NormalizerTestStorage, SeparateDataVolumeMountsAtData) {
  Normalized n = NormalizeSpec(Replace(kBase, "      nfs: {server: nfs.internal, path: /export}\n",
                             "      nfs: {server: nfs.internal, path: /export}\n"
                             "    data:\n      pvc: {claimName: datasets}\n"));
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  const json& storage = n.out["spec"]["targets"][0]["storage"];
  EXPECT_EQ("/results", storage["results"]["mountPath"]);
  EXPECT_EQ((json{{"pvc", {{"claimName", "datasets"}}}, {"mountPath", "/data"}}), storage["data"]);
  EXPECT_EQ(true, storage["separateData"]);
}

TEST(NormalizerTestStorage, TargetStorageReplacesSpecStorage) {
  std::string text = std::string(kBase) +
                     "    - name: lab\n"
                     "      profile: vanilla-k8s\n"
                     "      storage:\n"
                     "        results: {hostPath: {path: /mnt/r}, mountPath: /mnt/results}\n";
  Normalized n = NormalizeSpec(text);
  ASSERT_TRUE(n.ok) << ::testing::PrintToString(RenderAll(n.diags));
  const json& targets = n.out["spec"]["targets"];
  ASSERT_EQ(2u, targets.size());
  EXPECT_EQ("/export", targets[0]["storage"]["results"]["nfs"]["path"]);
  EXPECT_EQ("/spec/storage", targets[0]["storage"]["pointer"]);
  const json lab_results = {{"hostPath", {{"path", "/mnt/r"}}}, {"mountPath", "/mnt/results"}};
  EXPECT_EQ((json{{"pointer", "/spec/targets/1/storage"},
                  {"results", lab_results},
                  {"data", lab_results},
                  {"separateData", false}}),
            targets[1]["storage"]);
}

// ---------------------------------------------------------------------------
// Derived sizes.

TEST(NormalizerTestSizes, DerivedSizesInTheNormalizedSpec) {
  Normalized n = NormalizeSpec(Replace(Replace(kBase, "nodes: 2", "nodes: 4"), "parallelism: {tensor: 2}",
                             "parallelism: {tensor: 4, pipeline: 2}"));
  ASSERT_TRUE(n.ok);
  EXPECT_EQ((json{{"worldSize", 32}, {"modelParallel", 8}, {"dataParallel", 4}}),
            n.out["spec"]["stages"]["train"]["derived"]);
}

TEST(NormalizerTestSizes, NonDividingParallelismGivesDataParallelZero) {
  Normalized n = NormalizeSpec(Replace(Replace(kBase, "nodes: 2", "nodes: 3"), "parallelism: {tensor: 2}",
                             "parallelism: {tensor: 16}"));
  ASSERT_TRUE(n.ok);  // the checks report it, not the normalizer
  EXPECT_EQ((json{{"worldSize", 24}, {"modelParallel", 16}, {"dataParallel", 0}}),
            n.out["spec"]["stages"]["train"]["derived"]);
}

struct SizesCase {
  json train;
  int64_t world, tensor, pipeline, context, expert, vpp, model_parallel, data_parallel;
};

TEST(NormalizerTestSizes, ComputeTrainSizesCombinations) {
  const SizesCase cases[] = {
      {json::object(), 8, 1, 1, 1, 1, 0, 1, 8},  // nodes 1 × 8 GPUs by default
      {{{"nodes", 2}}, 16, 1, 1, 1, 1, 0, 1, 16},
      {{{"nodes", 4}, {"gpusPerNode", 4}, {"parallelism", {{"tensor", 4}}}}, 16, 4, 1, 1, 1, 0, 4, 4},
      {{{"nodes", 4}, {"parallelism", {{"tensor", 4}, {"pipeline", 2}}}}, 32, 4, 2, 1, 1, 0, 8, 4},
      {{{"nodes", 28},
        {"parallelism", {{"tensor", 4}, {"pipeline", 14}, {"virtualPipeline", 9}, {"context", 2}}}},
       224, 4, 14, 2, 1, 9, 112, 2},
      {{{"nodes", 8}, {"parallelism", {{"tensor", 2}, {"expert", 8}}}}, 64, 2, 1, 1, 8, 0, 2, 32},
      {{{"nodes", 3}, {"parallelism", {{"tensor", 8}, {"pipeline", 2}}}}, 24, 8, 2, 1, 1, 0, 16, 0},
      {{{"nodes", 1}, {"gpusPerNode", 8}, {"parallelism", {{"context", 16}}}}, 8, 1, 1, 16, 1, 0, 16, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.train.dump());
    TrainSizes s = ComputeTrainSizes(c.train);
    EXPECT_EQ(c.world, s.world_size);
    EXPECT_EQ(s.nodes * s.gpus_per_node, s.world_size);
    EXPECT_EQ(c.tensor, s.tensor);
    EXPECT_EQ(c.pipeline, s.pipeline);
    EXPECT_EQ(c.context, s.context);
    EXPECT_EQ(c.expert, s.expert);
    EXPECT_EQ(c.vpp, s.virtual_pipeline);
    EXPECT_EQ(c.model_parallel, s.model_parallel);
    EXPECT_EQ(c.data_parallel, s.data_parallel);
  }
}

}  // namespace
}  // namespace nemoc
