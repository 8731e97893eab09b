#include "framework_check.h"

#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check_registry.h"
#include "checks.h"
#include "nemo_releases.h"
#include "normalizer.h"
#include "schema_validator.h"
#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using Lines = std::vector<std::string>;

TEST(FrameworkCheckTest, NemoReleaseFromImageTags) {
  EXPECT_EQ(2407, NemoRelease("nvcr.io/nvidia/nemo", "24.07"));
  EXPECT_EQ(2507, NemoRelease("nvcr.io/nvidia/nemo", "25.07.01"));
  EXPECT_EQ(2504, NemoRelease("nvcr.io/nvidia/nemo", "25.04.rc2"));
  EXPECT_EQ(2502, NemoRelease("us-central1-docker.pkg.dev/x/pytorch-gpu-nemo-nccl",
                              "nemo25.02-gib1.0.5-A4"));
  // A tag only says which NeMo it is on NGC's nemo repository.
  EXPECT_EQ(0, NemoRelease("nvcr.io/nvidia/pytorch", "25.02-py3"));
  EXPECT_EQ(0, NemoRelease("registry.local/nemo", "latest-build"));
  EXPECT_EQ(0, NemoRelease("nvcr.io/nvidia/nemo", "250.7"));
}

// The real pipeline up to the checks; returns CheckSpec's diagnostics as
// "code@line:col: message".
Lines Check(const std::string& text, const NemoReleases* table = nullptr) {
  std::string err;
  static const std::unique_ptr<InputSchema> schema =
      InputSchema::Load(NEMOC_SOURCE_DIR "/schemas/project.schema.json", &err);
  static const ModelCatalog catalog = [] {
    ModelCatalog c;
    std::string e;
    EXPECT_TRUE(ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &c, &e)) << e;
    return c;
  }();
  Document doc;
  nlohmann::json normalized;
  Diagnostics diags;
  std::set<std::string> yaml11;
  if (!LoadSpecText("spec.yaml", text, &doc, &diags, {}, &yaml11) || !schema->Validate(doc, yaml11, &diags) ||
      !Normalize(doc, *schema, catalog, &normalized, &diags)) {
    ADD_FAILURE() << "spec does not reach the checks:\n" << text;
    return {};
  }
  const CheckTables& builtin = test_tables::Builtin();
  CheckSpec(doc, normalized, CheckTables{builtin.stages, table != nullptr ? *table : builtin.releases}, &diags);
  Lines out;
  for (const auto& d : diags.items()) {
    out.push_back(d.code + "@" + std::to_string(d.location.line) + ":" +
                  std::to_string(d.location.column) + ": " + d.message);
  }
  return out;
}

std::string Spec(const std::string& image_tag, const std::string& preset, const std::string& train) {
  return "apiVersion: nemoc.dev/v1alpha1\n"
         "kind: Project\n"
         "metadata: {name: demo}\n"
         "spec:\n"
         "  namespace: nemo\n"
         "  image: {repository: nvcr.io/nvidia/nemo, tag: \"" + image_tag + "\"}\n"
         "  model:\n"
         "    preset: " + preset + "\n"
         "  storage:\n"
         "    results: {nfs: {server: nfs.internal, path: /export}}\n"
         "  stages:\n"
         "    train:\n" + train +
         "  targets:\n"
         "    - {name: onprem, profile: vanilla-k8s}\n";
}

const char kPretrain[] =
    "      framework: nemo2\n"
    "      nodes: 1\n"
    "      batch: {global: 8}\n"
    "      data: {mock: true}\n";

TEST(FrameworkCheckTest, Nemo2WithARecipeAndANewEnoughImagePasses) {
  EXPECT_EQ(Lines{}, Check(Spec("25.07", "llama3-8b", kPretrain)));
  EXPECT_EQ(Lines{}, Check(Spec("24.12", "llama3.1-405b",
                                "      framework: nemo2\n      nodes: 32\n"
                                "      parallelism: {tensor: 8, pipeline: 2, context: 4}\n"
                                "      batch: {global: 8}\n      data: {mock: true}\n")));
}

TEST(FrameworkCheckTest, ModelWithoutANemo2RecipeIsRefusedAtThePreset) {
  EXPECT_EQ(Lines{"spec.no-nemo2-recipe@8:13: model llama2-13b has no NeMo 2 recipe (framework: nemo2)"},
            Check(Spec("25.07", "llama2-13b", kPretrain)));
}

TEST(FrameworkCheckTest, ImageOlderThanTheRecipeIsRefusedAtTheTag) {
  EXPECT_EQ(Lines{"spec.framework-image@6:49: NeMo 2 recipe llama2_7b needs a NeMo 25.02 or later "
                  "container; image tag 24.12 is NeMo 24.12"},
            Check(Spec("24.12", "llama2-7b", kPretrain)));
  EXPECT_EQ(Lines{"spec.framework-image@6:49: NeMo 2 recipe llama3_8b needs a NeMo 24.12 or later "
                  "container; image tag 24.07 is NeMo 24.07"},
            Check(Spec("24.07", "llama3-8b", kPretrain)));
}

TEST(FrameworkCheckTest, Nemo1OnAContainerWithoutNemo1ScriptsIsRefused) {
  const std::string nemo1 = "      nodes: 1\n      batch: {global: 8}\n      data: {mock: true}\n";
  // Default framework: the error points at the image tag.
  EXPECT_EQ(Lines{"spec.framework-image@6:49: framework nemo1 runs NeMo 1 Hydra scripts "
                  "(megatron_gpt_*.py), whose configuration nemoc knows up to NeMo 25.07 "
                  "(libsonnet/nemo/versions.json nemo1); image tag "
                  "25.09 is NeMo 25.09"},
            Check(Spec("25.09", "llama3-8b", nemo1)));
  // Written framework: the error points at it.
  EXPECT_EQ(Lines{"spec.framework-image@13:18: framework nemo1 runs NeMo 1 Hydra scripts "
                  "(megatron_gpt_*.py), whose configuration nemoc knows up to NeMo 25.07 "
                  "(libsonnet/nemo/versions.json nemo1); image tag "
                  "26.02 is NeMo 26.02"},
            Check(Spec("26.02", "llama3-8b", "      framework: nemo1\n" + nemo1)));
  EXPECT_EQ(Lines{}, Check(Spec("25.07", "llama3-8b", nemo1)));
}

// A8 / F9: NeMo 24.07 (r2.0.0rc1) has no scale_positional_embedding.
TEST(FrameworkCheckTest, Llama31OnNemo1Before2409IsRefusedAtTheTag) {
  const std::string nemo1 = "      nodes: 1\n      batch: {global: 8}\n      data: {mock: true}\n";
  EXPECT_EQ(Lines{"spec.framework-image@6:49: Llama 3.1 needs RoPE scaling "
                  "(model.scale_positional_embedding), which NeMo 1 reads from NeMo 24.09 on; image "
                  "tag 24.07 is NeMo 24.07"},
            Check(Spec("24.07", "llama3.1-8b", nemo1)));
  EXPECT_EQ(Lines{}, Check(Spec("24.09", "llama3.1-8b", nemo1)));
  EXPECT_EQ(Lines{}, Check(Spec("24.07", "llama3-8b", nemo1)));
}

// Issue #48 item 3: what NeMo 1 runs on is libsonnet/nemo/versions.json's
// nemo1 rows, not code: the verdicts follow the table.
TEST(FrameworkCheckTest, WhatNemo1RunsOnIsTheVersionsTable) {
  NemoReleases table;
  std::string err;
  ASSERT_TRUE(NemoReleases::Load(NEMOC_SOURCE_DIR "/libsonnet/nemo/versions.json", &table, &err)) << err;
  EXPECT_EQ(2507, table.last_nemo1);
  EXPECT_EQ(2409, table.nemo1_scale_positional_embedding_since);
  const std::string nemo1 = "      nodes: 1\n      batch: {global: 8}\n      data: {mock: true}\n";
  NemoReleases later = table;
  later.last_nemo1 = 2509;
  EXPECT_EQ(Lines{}, Check(Spec("25.09", "llama3-8b", nemo1), &later));
  later.nemo1_scale_positional_embedding_since = 2412;
  EXPECT_EQ(Lines{"spec.framework-image@6:49: Llama 3.1 needs RoPE scaling "
                  "(model.scale_positional_embedding), which NeMo 1 reads from NeMo 24.12 on; image "
                  "tag 24.09 is NeMo 24.09"},
            Check(Spec("24.09", "llama3.1-8b", nemo1), &later));

  // A row that is no release is refused, naming it.
  const std::string bad = ::testing::TempDir() + "/versions.json";
  {
    std::ofstream out(bad);
    out << R"({"nemo1": {"lastRelease": "25.7", "scalePositionalEmbeddingSince": "24.09"}, "releases": {}})";
  }
  NemoReleases refused;
  EXPECT_FALSE(NemoReleases::Load(bad, &refused, &err));
  EXPECT_NE(err.find("nemo1.lastRelease must be a release \"YY.MM\""), std::string::npos) << err;
  EXPECT_EQ(2507, ReleaseNumber("25.07"));
  EXPECT_EQ(0, ReleaseNumber("25.7"));
}

// NeMo 1 SFT builds model.data.validation_ds unconditionally
// (megatron_gpt_sft_model.py r2.0.0rc1:803, v2.4.0:1015): no `file_names: ???`.
TEST(FrameworkCheckTest, Nemo1FineTuningWithoutValidationDataIsRefusedAtTheData) {
  const std::string spec =
      "apiVersion: nemoc.dev/v1alpha1\n"
      "kind: Project\n"
      "metadata: {name: demo}\n"
      "spec:\n"
      "  namespace: nemo\n"
      "  image: {repository: nvcr.io/nvidia/nemo, tag: \"24.09\"}\n"
      "  model:\n"
      "    preset: llama2-7b\n"
      "    source: {nemo: models/llama2-7b.nemo}\n"
      "  storage:\n"
      "    results: {nfs: {server: nfs.internal, path: /export}}\n"
      "  stages:\n"
      "    train:\n"
      "      mode: MODE\n"
      "      nodes: 1\n"
      "      batch: {global: 8}\n"
      "      data:\n"
      "        jsonl: {train: squad/train.jsonl}\n"
      "  targets:\n"
      "    - {name: onprem, profile: vanilla-k8s}\n";
  auto with = [&](const std::string& mode, const std::string& extra) {
    std::string s = spec;
    s.replace(s.find("MODE"), 4, mode);
    if (!extra.empty()) s.replace(s.find("train: squad/train.jsonl}"), 25, "train: squad/train.jsonl, " + extra + "}");
    return s;
  };
  EXPECT_EQ(Lines{"spec.framework-data@18:9: framework nemo1 sft needs validation data: NeMo's SFT model "
                  "builds model.data.validation_ds on every run and reads its JSONL files"},
            Check(with("sft", "")));
  EXPECT_EQ(Lines{"spec.framework-data@18:9: framework nemo1 lora needs validation data: NeMo's SFT model "
                  "builds model.data.validation_ds on every run and reads its JSONL files"},
            Check(with("lora", "")));
  EXPECT_EQ(Lines{}, Check(with("sft", "validation: squad/val.jsonl")));
}

TEST(FrameworkCheckTest, Nemo2FineTuningNeedsANemo2CheckpointAndNemo2DataLayout) {
  const std::string spec =
      "apiVersion: nemoc.dev/v1alpha1\n"
      "kind: Project\n"
      "metadata: {name: demo}\n"
      "spec:\n"
      "  namespace: nemo\n"
      "  image: {repository: nvcr.io/nvidia/nemo, tag: \"25.07\"}\n"
      "  model:\n"
      "    preset: llama3-8b\n"
      "    source: {nemo: models/llama3-8b.nemo}\n"
      "  storage:\n"
      "    results: {nfs: {server: nfs.internal, path: /export}}\n"
      "  stages:\n"
      "    train:\n"
      "      mode: lora\n"
      "      framework: nemo2\n"
      "      nodes: 1\n"
      "      batch: {global: 8}\n"
      "      valCheckInterval: 10\n"
      "      data: {jsonl: {train: sft/train.jsonl, validation: other/validation.jsonl}}\n"
      "      overrides: [\"++trainer.max_steps=5\", \"trainer.log_every_n_steps=1\"]\n"
      "  targets:\n"
      "    - {name: onprem, profile: vanilla-k8s}\n";
  EXPECT_EQ((Lines{
                "spec.framework-source@9:20: framework nemo2 restores a NeMo 2 checkpoint directory, "
                "not the NeMo 1 file models/llama3-8b.nemo",
                "spec.framework-data@19:29: framework nemo2 reads fine-tuning data from "
                "<dir>/training.jsonl, not sft/train.jsonl",
                "spec.framework-data@19:58: framework nemo2 reads validation data from "
                "sft/validation.jsonl (beside training.jsonl), not other/validation.jsonl",
                "spec.framework-override@20:19: override '++trainer.max_steps=5' uses Hydra syntax; "
                "framework nemo2 takes NeMo-Run overrides key=value (e.g. trainer.log_every_n_steps=1)",
            }),
            Check(spec));
  // Continued pretraining restores the source too (AutoResume's restore_config).
  std::string pretrain = spec;
  pretrain.replace(pretrain.find("mode: lora"), 10, "mode: pretrain");
  pretrain.replace(pretrain.find("      valCheckInterval: 10\n"), pretrain.find("  targets:") - pretrain.find("      valCheckInterval: 10\n"),
                   "      data: {mock: true}\n");
  EXPECT_EQ(Lines{"spec.framework-source@9:20: framework nemo2 restores a NeMo 2 checkpoint directory, "
                  "not the NeMo 1 file models/llama3-8b.nemo"},
            Check(pretrain));
}

// A13: llama31_405b.pretrain_recipe counts embedding and loss as pipeline
// layers from NeMo 25.02 (NVIDIA/NeMo v2.2.1..v2.4.0 recipes/llama31_405b.py:72-73);
// Megatron core_v0.13.0 transformer_config.py:993-1040 then splits 126 + 2.
// A split Megatron accepts either way passes (nemo2.libsonnet keeps or drops
// the flags); one it accepts neither way is refused.
TEST(FrameworkCheckTest, PipelineSplitFollowsTheRecipesCountedLayers) {
  const auto pretrain = [](const std::string& nodes, const std::string& parallelism) {
    return "      framework: nemo2\n      nodes: " + nodes + "\n      parallelism: " + parallelism +
           "\n      batch: {global: 8}\n      data: {mock: true}\n";
  };
  // The recipe's own PP 8 · VPP 2: 128 = 8 × 2 × 8 with the counted layers.
  const std::string pp8 = pretrain("32", "{tensor: 8, pipeline: 8, virtualPipeline: 2, context: 4}");
  EXPECT_EQ(Lines{}, Check(Spec("25.07", "llama3.1-405b", pp8)));
  // NeMo 24.12's recipe counts nothing: 126 over 16 is refused.
  EXPECT_EQ(Lines{"train.layers@15:62: the model's 126 layers are not divisible by pipeline × virtual "
                  "pipeline = 8 × 2 = 16"},
            Check(Spec("24.12", "llama3.1-405b", pp8)));
  // PP 14 · VPP 9: 126 = 14 × 9 once the flags are dropped.
  EXPECT_EQ(Lines{}, Check(Spec("25.07", "llama3.1-405b",
                                pretrain("28", "{tensor: 4, pipeline: 14, virtualPipeline: 9, context: 2}"))));
  // PP 5: neither 126 nor 128.
  EXPECT_EQ(Lines{"train.layers@15:42: the model's 126 layers are not divisible by pipeline parallelism 5 "
                  "(nor are 128 with the recipe's embedding and loss counted as layers)"},
            Check(Spec("25.07", "llama3.1-405b", pretrain("5", "{tensor: 8, pipeline: 5}"))));
}

// A17: NeMo 2 fine-tuning from Hugging Face weights needs llm.import_ckpt,
// which nemoc does not generate yet: a located refusal, never an internal
// error from nemo2.libsonnet (which reads spec.model.source.nemo).
// The import stage runs llm.import_ckpt for NeMo 2 (field review A17); no refusal.
TEST(FrameworkCheckTest, Nemo2FineTuningFromHuggingfaceIsImported) {
  const std::string spec =
      "apiVersion: nemoc.dev/v1alpha1\n"
      "kind: Project\n"
      "metadata: {name: demo}\n"
      "spec:\n"
      "  namespace: nemo\n"
      "  image: {repository: nvcr.io/nvidia/nemo, tag: \"25.07\"}\n"
      "  model:\n"
      "    preset: llama3-8b\n"
      "    source: {huggingface: meta-llama/Meta-Llama-3-8B}\n"
      "  storage:\n"
      "    results: {nfs: {server: nfs.internal, path: /export}}\n"
      "  stages:\n"
      "    train:\n"
      "      mode: lora\n"
      "      framework: nemo2\n"
      "      nodes: 1\n"
      "      batch: {global: 8}\n"
      "      data: {jsonl: {train: sft/training.jsonl}}\n"
      "  targets:\n"
      "    - {name: onprem, profile: vanilla-k8s}\n";
  EXPECT_EQ(Lines{}, Check(spec));
}

TEST(FrameworkCheckTest, Nemo2PretrainingOnPreparedDataTakesTheModelsTokenizer) {
  // The preset's Hugging Face tokenizer: accepted (libsonnet/nemo/nemo2.libsonnet writes it).
  EXPECT_EQ(Lines{}, Check(Spec("25.07", "llama3-8b",
                                "      framework: nemo2\n      nodes: 1\n      batch: {global: 8}\n"
                                "      data:\n        prefixes: [{path: wiki/text}]\n")));
  // A Megatron tokenizer: no generator yet, located at the tokenizer.
  const std::string spec =
      "apiVersion: nemoc.dev/v1alpha1\n"
      "kind: Project\n"
      "metadata: {name: demo}\n"
      "spec:\n"
      "  namespace: nemo\n"
      "  image: {repository: nvcr.io/nvidia/nemo, tag: \"25.07\"}\n"
      "  model:\n"
      "    preset: llama3-8b\n"
      "    tokenizer: {library: megatron, type: GPT2BPETokenizer}\n"
      "  storage:\n"
      "    results: {nfs: {server: nfs.internal, path: /export}}\n"
      "  stages:\n"
      "    train:\n"
      "      mode: pretrain\n"
      "      framework: nemo2\n"
      "      nodes: 1\n"
      "      batch: {global: 8}\n"
      "      data: {prefixes: [{path: wiki/text}]}\n"
      "  targets:\n"
      "    - {name: onprem, profile: vanilla-k8s}\n";
  EXPECT_EQ(Lines{"spec.not-supported-yet@9:5: framework nemo2 pretraining on prepared data with "
                  "tokenizer library 'megatron' is not supported yet"},
            Check(spec));
  // Mock data needs no tokenizer of the data's.
  std::string mock = spec;
  mock.replace(mock.find("data: {prefixes: [{path: wiki/text}]}"), 37, "data: {mock: true}");
  EXPECT_EQ(Lines{}, Check(mock));
}

}  // namespace
}  // namespace nemoc
