#include "fit_check.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "diagnostic.h"
#include "normalizer.h"
#include "source_map.h"
#include "spec_loader.h"
#include "test_check_tables.h"

namespace nemoc {
namespace {

using nlohmann::json;

const char kModelsPath[] = NEMOC_SOURCE_DIR "/libsonnet/models.json";
const char kAcceleratorsPath[] = NEMOC_SOURCE_DIR "/libsonnet/accelerators.json";

constexpr double kGB = 1e9;

// The raw model catalog, parsed once.
const json& Models() {
  static const json models = [] {
    std::ifstream in(kModelsPath);
    json parsed = json::parse(in, nullptr, false);
    if (parsed.is_discarded() || !parsed.contains("models")) {
      ADD_FAILURE() << kModelsPath << " is not a model catalog";
      return json::object();
    }
    return parsed["models"];
  }();
  return models;
}

// A complete normalized training stage: the normalizer fills every default
// (the input schema's) of a minimal spec, and tests patch the fields they
// vary; EstimateMemory and CheckFit read the typed stage (spec_types.h).
const json& NormalizedStage() {
  static const json stage = [] {
    const char minimal[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: base
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
      batch: {global: 8}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
)";
    const json normalized = test_tables::Normalized("base.yaml", minimal);
    if (normalized.is_null()) {
      ADD_FAILURE() << "the minimal spec does not normalize";
      return json::object();
    }
    return normalized["spec"]["stages"]["train"];
  }();
  return stage;
}

// `partial` over the normalized stage, its derived sizes recomputed, typed.
TrainingStage Typed(const json& partial) {
  json stage = NormalizedStage();
  stage.merge_patch(partial);
  const TrainSizes s = ComputeTrainSizes(stage);
  stage["derived"] = {{"worldSize", s.world_size}, {"modelParallel", s.model_parallel}, {"dataParallel", s.data_parallel}};
  TrainingStage typed;
  std::string err;
  EXPECT_TRUE(ReadSpec(stage, &typed, &err)) << err;
  return typed;
}

MemoryEstimate Estimate(const json& train, const json& architecture) {
  return EstimateMemory(Typed(train), ModelArchitecture::FromJson(architecture));
}

void Fit(const Document& doc, const json& train, const json& architecture, const std::string& target,
         const std::string& accelerator, double capacity_gb, Diagnostics* diags, const std::string& key = "train") {
  CheckFit(doc, Typed(train), ModelArchitecture::FromJson(architecture), target, accelerator, capacity_gb, diags, key);
}

// The architecture of a catalog preset; fails the test when it is missing.
json Arch(const std::string& preset) {
  const json& models = Models();
  if (!models.contains(preset) || !models[preset].contains("architecture")) {
    ADD_FAILURE() << "preset " << preset << " missing from " << kModelsPath;
    return json::object();
  }
  return models[preset]["architecture"];
}

// |actual - expected| within `fraction` of expected.
::testing::AssertionResult WithinFraction(double actual, double expected, double fraction) {
  const double error = std::abs(actual - expected) / expected;
  if (error <= fraction) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " is " << 100 * error << "% away from "
                                       << expected << " (allowed " << 100 * fraction << "%)";
}

// Equal up to floating-point reassociation.
::testing::AssertionResult Close(double actual, double expected) {
  const double tolerance = 1e-12 * std::max(1.0, std::abs(expected));
  if (std::abs(actual - expected) <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " != " << expected;
}

// ---------------------------------------------------------------------------
// CountParameters

TEST(FitCheckCountParameters, CatalogModelsMatchPublishedCounts) {
  struct Case {
    const char* preset;
    double published;
  };
  const Case cases[] = {
      {"llama2-7b", 6.74e9},     {"llama2-13b", 13.0e9},     {"llama2-70b", 69.0e9},
      {"llama3-8b", 8.03e9},     {"llama3.1-70b", 70.6e9},   {"llama3.1-405b", 405.9e9},
      {"mixtral-8x7b", 46.7e9},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.preset);
    const ParameterCount count = CountParameters(Arch(c.preset));
    EXPECT_TRUE(WithinFraction(count.total, c.published, 0.015));
  }
}

TEST(FitCheckCountParameters, DenseModelsHaveNoExpertShare) {
  for (const char* preset : {"llama2-7b", "llama3.1-405b", "nemotron4-15b"}) {
    SCOPED_TRACE(preset);
    EXPECT_EQ(CountParameters(Arch(preset)).expert, 0.0);
  }
}

TEST(FitCheckCountParameters, Llama2_7bExact) {
  // 32 layers × (4·4096² attention + 3·4096·11008 MLP + 2·4096 norms)
  // + 2·32000·4096 embeddings/output + 4096 final norm.
  const double expected = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2.0 * 4096) +
                          2.0 * 32000 * 4096 + 4096;
  EXPECT_EQ(expected, 6738415616.0);  // the published 6,738,415,616
  EXPECT_DOUBLE_EQ(CountParameters(Arch("llama2-7b")).total, expected);
}

TEST(FitCheckCountParameters, MixtralExpertShare) {
  const ParameterCount count = CountParameters(Arch("mixtral-8x7b"));
  // 32 layers × 8 experts × 3 × 4096 × 14336.
  const double expert = 32.0 * 8 * 3 * 4096 * 14336;
  EXPECT_DOUBLE_EQ(count.expert, expert);
  EXPECT_TRUE(WithinFraction(count.expert, 45.1e9, 0.015));
  // Everything else (attention, router, norms, embeddings) is ~1.6 B.
  EXPECT_TRUE(WithinFraction(count.total - count.expert, 1.6e9, 0.05));
}

TEST(FitCheckCountParameters, Nemotron4_15bWithSquaredReluMlp) {
  // Listed with squared-relu: a 2-matrix MLP. Published: ~15.6 B
  // (3.2 B embedding + 12.5 B non-embedding in the Nemotron-4 report).
  const json arch = Arch("nemotron4-15b");
  ASSERT_EQ(arch.value("activation", ""), "squared-relu");
  const ParameterCount count = CountParameters(arch);
  EXPECT_TRUE(WithinFraction(count.total, 15.6e9, 0.05));
  // A gated MLP would add one h × ffn matrix per layer and overshoot.
  json gated = arch;
  gated["activation"] = "fast-swiglu";
  EXPECT_DOUBLE_EQ(CountParameters(gated).total - count.total, 32.0 * 6144 * 24576);
  EXPECT_FALSE(WithinFraction(CountParameters(gated).total, 15.6e9, 0.05));
}

TEST(FitCheckCountParameters, GroupedQueryAttentionLowersKeyValueProjections) {
  json mha = Arch("llama2-7b");  // 32 heads, 32 query groups
  ASSERT_EQ(mha.value("numAttentionHeads", 0), 32);
  ASSERT_EQ(mha.value("numQueryGroups", 0), 32);
  json gqa = mha;
  gqa["numQueryGroups"] = 8;
  const double h = 4096, layers = 32, heads = 32, groups = 8;
  const double fewer = layers * 2 * h * (h - h * groups / heads);
  EXPECT_DOUBLE_EQ(CountParameters(mha).total - CountParameters(gqa).total, fewer);
  // Absent numQueryGroups means plain multi-head attention.
  json implicit = mha;
  implicit.erase("numQueryGroups");
  EXPECT_DOUBLE_EQ(CountParameters(implicit).total, CountParameters(mha).total);
}

TEST(FitCheckCountParameters, TiedEmbeddingsDropTheOutputLayer) {
  json untied = Arch("llama3-8b");
  ASSERT_FALSE(untied.value("shareEmbeddings", true));
  json tied = untied;
  tied["shareEmbeddings"] = true;
  EXPECT_DOUBLE_EQ(CountParameters(untied).total - CountParameters(tied).total, 128256.0 * 4096);
}

TEST(FitCheckCountParameters, MoeAddsRouterAndScalesExperts) {
  json dense = Arch("llama3-8b");
  json moe = dense;
  moe["numExperts"] = 4;
  const double h = 4096, ffn = 14336, layers = 32;
  const ParameterCount d = CountParameters(dense);
  const ParameterCount m = CountParameters(moe);
  EXPECT_DOUBLE_EQ(m.expert, layers * 4 * 3 * h * ffn);
  // Three more copies of the MLP plus a 4096 × 4 router per layer.
  EXPECT_DOUBLE_EQ(m.total - d.total, layers * (3 * 3 * h * ffn + h * 4));
}

// ---------------------------------------------------------------------------
// EstimateMemory on a small hand-made architecture

// 8 layers, h 1024, 2-matrix MLP of 4096, MHA, vocab 1000, untied:
// 8 × (4·1024² + 2·1024·4096 + 2·1024) + 2·1000·1024 + 1024 parameters.
json SmallArch() {
  return {{"numLayers", 8},        {"hiddenSize", 1024},      {"ffnHiddenSize", 4096},
          {"numAttentionHeads", 16}, {"numQueryGroups", 16}, {"vocabSize", 1000},
          {"activation", "gelu"},  {"shareEmbeddings", false}};
}
constexpr double kSmallParams =
    8.0 * (4.0 * 1024 * 1024 + 2.0 * 1024 * 4096 + 2.0 * 1024) + 2.0 * 1000 * 1024 + 1024;

// 16 GPUs, TP 2 · PP 2 (DP 4), micro 2, global 64 (8 micro-batches), seq 2048, SP.
json SmallTrain() {
  return {{"mode", "pretrain"},
          {"nodes", 2},
          {"gpusPerNode", 8},
          {"parallelism", {{"tensor", 2}, {"pipeline", 2}, {"sequenceParallel", true}}},
          {"batch", {{"micro", 2}, {"global", 64}}},
          {"seqLength", 2048}};
}

TEST(FitCheckEstimateMemory, SmallArchitectureParameterCount) {
  EXPECT_EQ(kSmallParams, 102728704.0);
  EXPECT_DOUBLE_EQ(CountParameters(SmallArch()).total, kSmallParams);
}

TEST(FitCheckEstimateMemory, ExactTermsWithSequenceParallel) {
  const MemoryEstimate e = Estimate(SmallTrain(), SmallArch());
  const double per_gpu = kSmallParams / (2 * 2);
  EXPECT_TRUE(Close(e.parameters_per_gpu, per_gpu));
  EXPECT_TRUE(Close(e.weights_gb, 2 * per_gpu / kGB));
  EXPECT_TRUE(Close(e.gradients_gb, 2 * per_gpu / kGB));
  EXPECT_TRUE(Close(e.optimizer_gb, 12 * per_gpu / 4 / kGB));  // DP 4 × CP 1
  // 34·s·b·h/t per layer, L/PP = 4 layers, min(PP 2, 8 micro-batches) = 2 in
  // flight, plus logits 4·s·b·V/t.
  const double per_layer = 34.0 * 2048 * 2 * 1024 / 2;
  const double logits = 4.0 * 2048 * 2 * 1000 / 2;
  EXPECT_TRUE(Close(e.activations_gb, (per_layer * 4 * 2 + logits) / kGB));
  EXPECT_EQ(e.overhead_gb, 6.0);
  EXPECT_TRUE(Close(e.total_gb, e.weights_gb + e.gradients_gb + e.optimizer_gb +
                                    e.activations_gb + e.overhead_gb));
  // The same by hand: 0.051364352 × 2 + 0.077046528 + 0.578617344 + 6.
  EXPECT_NEAR(e.weights_gb, 0.051364352, 1e-12);
  EXPECT_NEAR(e.optimizer_gb, 0.077046528, 1e-12);
  EXPECT_NEAR(e.activations_gb, 0.578617344, 1e-12);
  EXPECT_NEAR(e.total_gb, 6.758392576, 1e-9);
}

TEST(FitCheckEstimateMemory, ExactActivationsWithoutSequenceParallel) {
  json train = SmallTrain();
  train["parallelism"]["sequenceParallel"] = false;
  const MemoryEstimate e = Estimate(train, SmallArch());
  // s·b·h·(10 + 24/t) = 2048·2·1024·22.
  const double per_layer = 2048.0 * 2 * 1024 * (10 + 24.0 / 2);
  const double logits = 4.0 * 2048 * 2 * 1000 / 2;
  EXPECT_TRUE(Close(e.activations_gb, (per_layer * 4 * 2 + logits) / kGB));
  // Sequence parallelism stores less: 34/2 = 17 < 22 per s·b·h.
  EXPECT_LT(Estimate(SmallTrain(), SmallArch()).activations_gb, e.activations_gb);
}

TEST(FitCheckEstimateMemory, SequenceParallelIsAbsentByDefault) {
  json train = SmallTrain();
  train["parallelism"].erase("sequenceParallel");
  json off = SmallTrain();
  off["parallelism"]["sequenceParallel"] = false;
  EXPECT_DOUBLE_EQ(Estimate(train, SmallArch()).activations_gb,
                   Estimate(off, SmallArch()).activations_gb);
}

TEST(FitCheckEstimateMemory, InterleavedPipelineAddsInFlightFraction) {
  // 32 GPUs, TP 2 · PP 4 (DP 4), VPP 2: 1 + (4 − 1)/(4·2) = 1.375.
  json train = SmallTrain();
  train["nodes"] = 4;
  train["parallelism"]["pipeline"] = 4;
  train["batch"]["global"] = 128;  // 16 micro-batches per DP rank
  const double per_layer = 34.0 * 2048 * 2 * 1024 / 2;
  const double logits = 4.0 * 2048 * 2 * 1000 / 2;
  // L/PP = 2 layers, min(4, 16) = 4 micro-batches in flight.
  const MemoryEstimate plain = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(plain.activations_gb, (per_layer * 2 * 4 + logits) / kGB));
  train["parallelism"]["virtualPipeline"] = 2;
  const MemoryEstimate interleaved = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(interleaved.activations_gb, (per_layer * 2 * 4 * 1.375 + logits) / kGB));
  // VPP 1 is not interleaved.
  train["parallelism"]["virtualPipeline"] = 1;
  EXPECT_TRUE(Close(Estimate(train, SmallArch()).activations_gb, plain.activations_gb));
  // Weights and optimizer do not depend on the schedule.
  EXPECT_DOUBLE_EQ(interleaved.weights_gb, plain.weights_gb);
  EXPECT_DOUBLE_EQ(interleaved.optimizer_gb, plain.optimizer_gb);
}

TEST(FitCheckEstimateMemory, DoublingTensorParallelismHalvesWeights) {
  json train = SmallTrain();
  const MemoryEstimate tp2 = Estimate(train, SmallArch());
  train["parallelism"]["tensor"] = 4;  // DP 4 -> 2
  const MemoryEstimate tp4 = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(tp4.weights_gb, tp2.weights_gb / 2));
  EXPECT_TRUE(Close(tp4.gradients_gb, tp2.gradients_gb / 2));
  EXPECT_TRUE(Close(tp4.parameters_per_gpu, tp2.parameters_per_gpu / 2));
  // Half the parameters over half the DP ranks: the same optimizer shard.
  EXPECT_TRUE(Close(tp4.optimizer_gb, tp2.optimizer_gb));
  EXPECT_LT(tp4.activations_gb, tp2.activations_gb);
  EXPECT_LT(tp4.total_gb, tp2.total_gb);
}

TEST(FitCheckEstimateMemory, DoublingPipelineParallelismHalvesWeights) {
  json train = SmallTrain();
  const MemoryEstimate pp2 = Estimate(train, SmallArch());
  train["parallelism"]["pipeline"] = 4;
  train["nodes"] = 4;  // keep DP 4
  const MemoryEstimate pp4 = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(pp4.weights_gb, pp2.weights_gb / 2));
  EXPECT_TRUE(Close(pp4.optimizer_gb, pp2.optimizer_gb / 2));
  // 1F1B: half the layers per stage, twice the micro-batches in flight
  // (8 micro-batches ≥ 4): the layer activations stay the same.
  EXPECT_TRUE(Close(pp4.activations_gb, pp2.activations_gb));
}

TEST(FitCheckEstimateMemory, DoublingDataParallelismShrinksOnlyTheOptimizer) {
  json train = SmallTrain();
  const MemoryEstimate dp4 = Estimate(train, SmallArch());
  train["nodes"] = 4;              // DP 8
  train["batch"]["global"] = 128;  // still 8 micro-batches per rank
  const MemoryEstimate dp8 = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(dp8.optimizer_gb, dp4.optimizer_gb / 2));
  EXPECT_DOUBLE_EQ(dp8.weights_gb, dp4.weights_gb);
  EXPECT_DOUBLE_EQ(dp8.gradients_gb, dp4.gradients_gb);
  EXPECT_DOUBLE_EQ(dp8.activations_gb, dp4.activations_gb);
  EXPECT_DOUBLE_EQ(dp8.overhead_gb, dp4.overhead_gb);
  EXPECT_LT(dp8.total_gb, dp4.total_gb);
}

TEST(FitCheckEstimateMemory, LoraHasNoGradientsOrOptimizerState) {
  json train = SmallTrain();
  const MemoryEstimate full = Estimate(train, SmallArch());
  train["mode"] = "lora";
  const MemoryEstimate lora = Estimate(train, SmallArch());
  EXPECT_EQ(lora.gradients_gb, 0.0);
  EXPECT_EQ(lora.optimizer_gb, 0.0);
  EXPECT_DOUBLE_EQ(lora.weights_gb, full.weights_gb);
  EXPECT_DOUBLE_EQ(lora.activations_gb, full.activations_gb);
  EXPECT_TRUE(Close(lora.total_gb, lora.weights_gb + lora.activations_gb + 6.0));
  // Full fine-tuning (sft) keeps gradients and optimizer state, as does a
  // train stage without a mode.
  train["mode"] = "sft";
  EXPECT_DOUBLE_EQ(Estimate(train, SmallArch()).optimizer_gb, full.optimizer_gb);
  train.erase("mode");
  EXPECT_DOUBLE_EQ(Estimate(train, SmallArch()).gradients_gb, full.gradients_gb);
}

TEST(FitCheckEstimateMemory, ContextParallelismDividesActivations) {
  json train = SmallTrain();
  const MemoryEstimate cp1 = Estimate(train, SmallArch());
  train["parallelism"]["context"] = 2;  // TP 2 · PP 2 · CP 2 on 16 GPUs: DP 2
  const MemoryEstimate cp2 = Estimate(train, SmallArch());
  EXPECT_TRUE(Close(cp2.activations_gb, cp1.activations_gb / 2));
  // Weights are replicated across CP ranks; the optimizer is sharded over
  // DP × CP = 4, as before.
  EXPECT_DOUBLE_EQ(cp2.weights_gb, cp1.weights_gb);
  EXPECT_TRUE(Close(cp2.optimizer_gb, 12 * kSmallParams / 4 / 4 / kGB));
  EXPECT_TRUE(Close(cp2.optimizer_gb, cp1.optimizer_gb));
}

TEST(FitCheckEstimateMemory, MoreMicroBatchesThanPipelineStagesDoNotGrowActivations) {
  json train = SmallTrain();
  const MemoryEstimate eight = Estimate(train, SmallArch());  // 8 ≥ PP 2
  train["batch"]["global"] = 640;                                   // 80 micro-batches
  const MemoryEstimate eighty = Estimate(train, SmallArch());
  EXPECT_DOUBLE_EQ(eighty.activations_gb, eight.activations_gb);
  EXPECT_DOUBLE_EQ(eighty.total_gb, eight.total_gb);
  // One micro-batch per rank: only one in flight.
  train["batch"]["global"] = 8;
  const MemoryEstimate one = Estimate(train, SmallArch());
  const double per_layer = 34.0 * 2048 * 2 * 1024 / 2;
  const double logits = 4.0 * 2048 * 2 * 1000 / 2;
  EXPECT_TRUE(Close(one.activations_gb, (per_layer * 4 * 1 + logits) / kGB));
  EXPECT_LT(one.activations_gb, eight.activations_gb);
}

TEST(FitCheckEstimateMemory, ExpertParallelismSplitsOnlyTheExperts) {
  const json arch = Arch("mixtral-8x7b");
  const ParameterCount count = CountParameters(arch);
  json train = {{"nodes", 8},
                {"gpusPerNode", 8},
                {"parallelism", {{"tensor", 2}, {"pipeline", 4}, {"expert", 4}}},
                {"batch", {{"micro", 1}, {"global", 256}}},
                {"seqLength", 4096}};
  const MemoryEstimate e = Estimate(train, arch);
  const double dense = count.total - count.expert;
  EXPECT_TRUE(Close(e.parameters_per_gpu, dense / 8 + count.expert / 32));
  train["parallelism"]["expert"] = 1;
  EXPECT_TRUE(Close(Estimate(train, arch).parameters_per_gpu, count.total / 8));
}

// A16: the distributed optimizer shards expert parameters over the expert
// data-parallel group only (DP x CP / EP ranks), dense ones over DP x CP.
TEST(FitCheckEstimateMemory, ExpertOptimizerStateShardsOverTheExpertDataParallelGroup) {
  const json arch = Arch("mixtral-8x7b");
  const ParameterCount count = CountParameters(arch);
  const json train = {{"nodes", 8},
                      {"gpusPerNode", 8},
                      {"parallelism", {{"tensor", 2}, {"pipeline", 4}, {"expert", 4}}},
                      {"batch", {{"micro", 1}, {"global", 256}}},
                      {"seqLength", 4096}};
  const MemoryEstimate e = Estimate(train, arch);
  const double dense = (count.total - count.expert) / 8, expert = count.expert / 32;
  // DP = 64 / 8 = 8; expert DP = 8 / 4 = 2.
  EXPECT_TRUE(Close(e.optimizer_gb, 12 * (dense / 8 + expert / 2) / kGB)) << e.optimizer_gb;
}

// A16: NeMo 2's bf16_mixed keeps fp32 main gradients (grad_reduce_in_fp32=True,
// NVIDIA/NeMo v2.2.1 nemo/collections/llm/recipes/precision/mixed_precision.py:30).
TEST(FitCheckEstimateMemory, Nemo2GradientsAreFp32) {
  json train = SmallTrain();
  const double per_gpu = kSmallParams / (2 * 2);
  EXPECT_TRUE(Close(Estimate(train, SmallArch()).gradients_gb, 2 * per_gpu / kGB));
  train["framework"] = "nemo2";
  EXPECT_TRUE(Close(Estimate(train, SmallArch()).gradients_gb, 4 * per_gpu / kGB));
}

TEST(FitCheckEstimateMemory, DefaultSequenceLengthAndMicroBatch) {
  // Absent from the spec: the preset's seqLength (llama2-7b: 4096) and the
  // schema's micro batch 1, filled by the normalizer -- not by the estimate.
  json train = {{"nodes", 1},
                {"gpusPerNode", 8},
                {"parallelism", {{"tensor", 8}, {"sequenceParallel", true}}},
                {"batch", {{"global", 8}}}};
  const MemoryEstimate e = Estimate(train, SmallArch());
  const double per_layer = 34.0 * 4096 * 1 * 1024 / 8;
  const double logits = 4.0 * 4096 * 1 * 1000 / 8;
  // PP 1: all 8 layers, one micro-batch in flight.
  EXPECT_TRUE(Close(e.activations_gb, (per_layer * 8 + logits) / kGB));
  EXPECT_TRUE(Close(e.optimizer_gb, 12 * kSmallParams / 8 / kGB));  // DP 1
}

// ---------------------------------------------------------------------------
// DescribeFit

TEST(FitCheckDescribeFit, Format) {
  MemoryEstimate e;
  e.weights_gb = 14.49;
  e.gradients_gb = 14.49;
  e.optimizer_gb = 21.74;
  e.activations_gb = 79.81;
  e.overhead_gb = 6;
  e.total_gb = 136.53;
  EXPECT_EQ(DescribeFit(e, 180),
            "~136.5 GB of 180 GB (76%): weights 14.5, gradients 14.5, optimizer 21.7, "
            "activations 79.8, overhead 6.0");
  e.total_gb = 90;
  e.weights_gb = 0;
  EXPECT_EQ(DescribeFit(e, 40),
            "~90.0 GB of 40 GB (225%): weights 0.0, gradients 14.5, optimizer 21.7, "
            "activations 79.8, overhead 6.0");
}

// ---------------------------------------------------------------------------
// CheckFit

// Llama 2 7B on one node, TP 2 · PP 2 (DP 2), micro 1, global 8, seq 4096,
// SP. By hand: weights 3.369 GB, gradients 3.369, optimizer 10.108,
// activations 9.389, overhead 6: ~32.235 GB per GPU.
// `parallelism:` is on line 13, column 7.
const char kSpec[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: fit
spec:
  model:
    preset: llama2-7b
  stages:
    train:
      mode: pretrain
      nodes: 1
      gpusPerNode: 8
      parallelism: {tensor: 2, pipeline: 2, sequenceParallel: true}
      batch: {micro: 1, global: 8}
      seqLength: 4096
)";

const char kHint[] =
    "raise tensor or pipeline parallelism, lower the micro batch, or use GPUs with more memory";

class FitCheckCheckFit : public ::testing::Test {
 protected:
  void SetUp() override {
    Diagnostics load;
    ASSERT_TRUE(LoadSpecText("fit.yaml", kSpec, &doc_, &load)) << RenderText(load, {});
    ASSERT_TRUE(load.empty()) << RenderText(load, {});
    train_ = doc_.root["spec"]["stages"]["train"];
    arch_ = Arch("llama2-7b");
  }

  Document doc_;
  json train_;
  json arch_;
};

TEST_F(FitCheckCheckFit, EstimateOfTheSpecMatchesHandArithmetic) {
  const MemoryEstimate e = Estimate(train_, arch_);
  EXPECT_NEAR(e.weights_gb, 3.369207808, 1e-9);
  EXPECT_NEAR(e.gradients_gb, 3.369207808, 1e-9);
  EXPECT_NEAR(e.optimizer_gb, 10.107623424, 1e-9);
  EXPECT_NEAR(e.activations_gb, 9.388949504, 1e-9);
  EXPECT_NEAR(e.total_gb, 32.234988544, 1e-9);
}

TEST_F(FitCheckCheckFit, ErrorWhenOverCapacity) {
  Diagnostics diags;
  Fit(doc_, train_, arch_, "t1", "test-24gb", 24, &diags);
  ASSERT_EQ(diags.items().size(), 1u) << RenderText(diags, {});
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.code, "train.memory");
  EXPECT_EQ(d.message,
            "target t1: estimated memory per GPU ~32.2 GB of 24 GB (134%): weights 3.4, "
            "gradients 3.4, optimizer 10.1, activations 9.4, overhead 6.0 on test-24gb: "
            "does not fit");
  EXPECT_EQ(d.message.rfind("target t1: estimated memory per GPU ~", 0), 0u);
  const std::string suffix = ": does not fit";
  ASSERT_GE(d.message.size(), suffix.size());
  EXPECT_EQ(d.message.substr(d.message.size() - suffix.size()), suffix);
  EXPECT_NE(d.message.find(DescribeFit(Estimate(train_, arch_), 24)), std::string::npos);
  EXPECT_EQ(d.location.file, "fit.yaml");
  EXPECT_EQ(d.location.line, 13);
  EXPECT_EQ(d.location.column, 7);
  EXPECT_EQ(d.hint, kHint);
  EXPECT_TRUE(diags.has_errors());
}

TEST_F(FitCheckCheckFit, WarningBetweenNinetyAndHundredPercent) {
  Diagnostics diags;
  Fit(doc_, train_, arch_, "t1", "test-34gb", 34, &diags);  // 94.8 %
  ASSERT_EQ(diags.items().size(), 1u) << RenderText(diags, {});
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(d.code, "train.memory");
  EXPECT_EQ(d.message,
            "target t1: estimated memory per GPU ~32.2 GB of 34 GB (95%): weights 3.4, "
            "gradients 3.4, optimizer 10.1, activations 9.4, overhead 6.0 on test-34gb: "
            "close to capacity");
  EXPECT_EQ(d.location.line, 13);
  EXPECT_EQ(d.location.column, 7);
  EXPECT_EQ(d.hint, kHint);
  EXPECT_FALSE(diags.has_errors());
}

TEST_F(FitCheckCheckFit, ThresholdsAroundTheEstimate) {
  const double total = Estimate(train_, arch_).total_gb;
  {
    Diagnostics diags;  // just over capacity
    Fit(doc_, train_, arch_, "t1", "x", total * 0.999, &diags);
    ASSERT_EQ(diags.items().size(), 1u);
    EXPECT_EQ(diags.items()[0].severity, Severity::kError);
  }
  {
    Diagnostics diags;  // 91 % of capacity
    Fit(doc_, train_, arch_, "t1", "x", total / 0.91, &diags);
    ASSERT_EQ(diags.items().size(), 1u);
    EXPECT_EQ(diags.items()[0].severity, Severity::kWarning);
  }
  {
    Diagnostics diags;  // 89 % of capacity
    Fit(doc_, train_, arch_, "t1", "x", total / 0.89, &diags);
    EXPECT_TRUE(diags.empty()) << RenderText(diags, {});
  }
}

TEST_F(FitCheckCheckFit, NothingBelowNinetyPercent) {
  Diagnostics diags;
  Fit(doc_, train_, arch_, "t1", "a100-40gb", 40, &diags);  // 80.6 %
  EXPECT_TRUE(diags.empty()) << RenderText(diags, {});
}

TEST_F(FitCheckCheckFit, NothingWhenDataParallelismIsZero) {
  json train = train_;
  train["parallelism"]["tensor"] = 3;  // 8 GPUs do not divide by TP 3 · PP 2
  ASSERT_EQ(ComputeTrainSizes(train).data_parallel, 0);
  Diagnostics diags;
  Fit(doc_, train, arch_, "t1", "tiny", 1, &diags);
  EXPECT_TRUE(diags.empty()) << RenderText(diags, {});
}

TEST_F(FitCheckCheckFit, NothingWithoutAnArchitecture) {
  Diagnostics diags;
  Fit(doc_, train_, json::object(), "t1", "tiny", 1, &diags);
  EXPECT_TRUE(diags.empty()) << RenderText(diags, {});
}

// ---------------------------------------------------------------------------
// The example configurations, as sanity bounds.

// A document without a source map: diagnostics carry no location.
const Document& NoSource() {
  static const Document doc;
  return doc;
}

TEST(FitCheckExamples, Llama31_405bOnB200Fits) {
  // examples/llama31-405b-gke-a4.yaml: 28 × 8, TP 4 · PP 14 · VPP 9 · CP 2.
  const json train = {{"mode", "pretrain"},
                      {"nodes", 28},
                      {"gpusPerNode", 8},
                      {"parallelism",
                       {{"tensor", 4},
                        {"pipeline", 14},
                        {"virtualPipeline", 9},
                        {"context", 2},
                        {"sequenceParallel", true}}},
                      {"batch", {{"micro", 1}, {"global", 2016}}},
                      {"seqLength", 8192}};
  ASSERT_EQ(ComputeTrainSizes(train).data_parallel, 2);
  const MemoryEstimate e = Estimate(train, Arch("llama3.1-405b"));
  EXPECT_LT(e.total_gb, 180);
  EXPECT_GT(e.total_gb, 90);  // a large model on a large GPU, not a trivial fit
  // 405.9 B / 56 ≈ 7.25 B parameters per GPU.
  EXPECT_TRUE(WithinFraction(e.parameters_per_gpu, 405.9e9 / 56, 0.015));
  Diagnostics diags;
  Fit(NoSource(), train, Arch("llama3.1-405b"), "gke-a4", "b200-180gb", 180, &diags);
  EXPECT_FALSE(diags.has_errors()) << RenderText(diags, {});
}

TEST(FitCheckExamples, Llama2_70bSftOnH100Fits) {
  // examples/llama2-70b-sft-vanilla.yaml: 4 × 8, TP 8 · PP 4 (DP 1).
  const json train = {{"mode", "sft"},
                      {"nodes", 4},
                      {"gpusPerNode", 8},
                      {"parallelism", {{"tensor", 8}, {"pipeline", 4}, {"sequenceParallel", true}}},
                      {"batch", {{"micro", 1}, {"global", 128}}},
                      {"seqLength", 4096}};
  const MemoryEstimate e = Estimate(train, Arch("llama2-70b"));
  EXPECT_LT(e.total_gb, 80);
  EXPECT_GT(e.total_gb, 30);
  // DP 1: the unsharded optimizer (12 B × 69 B / 32 ≈ 26 GB) dominates.
  EXPECT_GT(e.optimizer_gb, e.weights_gb + e.gradients_gb);
  Diagnostics diags;
  Fit(NoSource(), train, Arch("llama2-70b"), "onprem", "h100-80gb", 80, &diags);
  EXPECT_FALSE(diags.has_errors()) << RenderText(diags, {});
}

TEST(FitCheckExamples, Llama2_7bLoraOnA100_40gbFits) {
  // examples/llama2-7b-lora-eks.yaml: 1 × 8 (p4d, A100 40GB), no model parallelism.
  const json train = {{"mode", "lora"},
                      {"nodes", 1},
                      {"gpusPerNode", 8},
                      {"batch", {{"micro", 1}, {"global", 32}}},
                      {"seqLength", 2048}};
  const MemoryEstimate e = Estimate(train, Arch("llama2-7b"));
  EXPECT_LT(e.total_gb, 40);
  EXPECT_GT(e.weights_gb, 13);  // the whole bf16 model on every GPU
  EXPECT_EQ(e.optimizer_gb, 0.0);
  Diagnostics diags;
  Fit(NoSource(), train, Arch("llama2-7b"), "eks", "a100-40gb", 40, &diags);
  EXPECT_FALSE(diags.has_errors()) << RenderText(diags, {});
  // Full fine-tuning of the same model on the same GPUs does not fit.
  json full = train;
  full["mode"] = "sft";
  EXPECT_GT(Estimate(full, Arch("llama2-7b")).total_gb, 40);
}

TEST(FitCheckExamples, Llama31_405bOnTwoH100NodesDoesNotFit) {
  const json train = {{"mode", "pretrain"},
                      {"nodes", 2},
                      {"gpusPerNode", 8},
                      {"parallelism", {{"tensor", 8}, {"pipeline", 1}, {"sequenceParallel", true}}},
                      {"batch", {{"micro", 1}, {"global", 16}}},
                      {"seqLength", 8192}};
  const MemoryEstimate e = Estimate(train, Arch("llama3.1-405b"));
  EXPECT_GT(e.weights_gb, 80);  // 405.9 B / 8 × 2 B ≈ 101 GB of weights alone
  EXPECT_GT(e.total_gb, 80);
  Diagnostics diags;
  Fit(NoSource(), train, Arch("llama3.1-405b"), "h100", "h100-80gb", 80, &diags);
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].severity, Severity::kError);
  EXPECT_EQ(diags.items()[0].code, "train.memory");
  EXPECT_FALSE(diags.items()[0].location.known());  // no source map
}

// ---------------------------------------------------------------------------
// AcceleratorTable

TEST(FitCheckAcceleratorTable, RealTableMemory) {
  AcceleratorTable table;
  std::string err;
  ASSERT_TRUE(AcceleratorTable::Load(kAcceleratorsPath, &table, &err)) << err;
  const struct {
    const char* name;
    double memory_gb;
  } cases[] = {{"a100-40gb", 40},   {"a100-80gb", 80},   {"h100-80gb", 80},
               {"h200-141gb", 141}, {"b200-180gb", 180}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const json* gpu = table.Find(c.name);
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ((*gpu)["memoryGB"].get<double>(), c.memory_gb);
  }
}

TEST(FitCheckAcceleratorTable, RealTablePeakTflops) {
  AcceleratorTable table;
  std::string err;
  ASSERT_TRUE(AcceleratorTable::Load(kAcceleratorsPath, &table, &err)) << err;
  const json* b200 = table.Find("b200-180gb");
  const json* h100 = table.Find("h100-80gb");
  const json* a100 = table.Find("a100-80gb");
  const json* a100_40 = table.Find("a100-40gb");
  ASSERT_NE(b200, nullptr);
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(a100, nullptr);
  ASSERT_NE(a100_40, nullptr);
  EXPECT_EQ((*b200)["peakTflops"]["bf16"].get<double>(), 2250);
  EXPECT_EQ((*b200)["peakTflops"]["fp8"].get<double>(), 4500);
  EXPECT_EQ((*h100)["peakTflops"]["bf16"].get<double>(), 989);
  EXPECT_EQ((*h100)["peakTflops"]["fp8"].get<double>(), 1978);
  EXPECT_EQ((*a100)["peakTflops"]["bf16"].get<double>(), 312);
  EXPECT_FALSE((*a100)["peakTflops"].contains("fp8"));
  EXPECT_EQ((*a100_40)["peakTflops"]["bf16"].get<double>(), 312);
  EXPECT_FALSE((*a100_40)["peakTflops"].contains("fp8"));
}

TEST(FitCheckAcceleratorTable, UnknownNameIsNull) {
  AcceleratorTable table;
  std::string err;
  ASSERT_TRUE(AcceleratorTable::Load(kAcceleratorsPath, &table, &err)) << err;
  EXPECT_EQ(table.Find("h100"), nullptr);
  EXPECT_EQ(table.Find("H100-80GB"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  EXPECT_EQ(table.Find("_comment"), nullptr);
  // An empty table finds nothing.
  EXPECT_EQ(AcceleratorTable().Find("h100-80gb"), nullptr);
}

TEST(FitCheckAcceleratorTable, BadPathFailsWithMessage) {
  AcceleratorTable table;
  std::string err;
  const std::string path = NEMOC_SOURCE_DIR "/libsonnet/no-such-accelerators.json";
  EXPECT_FALSE(AcceleratorTable::Load(path, &table, &err));
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("accelerator table"), std::string::npos) << err;
}

TEST(FitCheckAcceleratorTable, NotATableFailsWithMessage) {
  // Valid JSON without an "accelerators" object, and a non-JSON file.
  for (const char* path : {kModelsPath, NEMOC_SOURCE_DIR "/CMakeLists.txt"}) {
    SCOPED_TRACE(path);
    AcceleratorTable table;
    std::string err;
    EXPECT_FALSE(AcceleratorTable::Load(path, &table, &err));
    EXPECT_NE(err.find(path), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace nemoc
