#include "metrics.h"

#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "fit_check.h"
#include "normalizer.h"

namespace nemoc {
namespace {

using nlohmann::json;

json Arch(const std::string& preset) {
  ModelCatalog catalog;
  std::string err;
  EXPECT_TRUE(ModelCatalog::Load(NEMOC_SOURCE_DIR "/libsonnet/models.json", &catalog, &err)) << err;
  const json* model = catalog.Find(preset);
  EXPECT_NE(model, nullptr) << preset;
  return model ? (*model)["architecture"] : json::object();
}

// ../shared/reference/gke-a4.md §6 checked the upstream constants against the
// formula with llama3.1-405b's shape as the recipe configures it (G 16) and a
// GPT-2 vocabulary: 2.16525e16, 0.99996 of the table's 2.16533e16; 2.1715e16
// with the real 128256-token vocabulary.
TEST(ModelFlops, ReproducesTheReferenceChecksOfTheUpstreamTable) {
  json recipe_405b = {{"numLayers", 126},        {"hiddenSize", 16384}, {"ffnHiddenSize", 53248},
                      {"numAttentionHeads", 128}, {"numQueryGroups", 16}, {"vocabSize", 50257},
                      {"activation", "fast-swiglu"}};
  EXPECT_NEAR(ModelFlopsPerSample(recipe_405b, 8192) / 2.16525e16, 1, 1e-4);
  EXPECT_NEAR(ModelFlopsPerSample(recipe_405b, 8192) / 2.16533e16, 1, 1e-4);
  recipe_405b["vocabSize"] = 128256;
  EXPECT_NEAR(ModelFlopsPerSample(recipe_405b, 8192) / 2.1715e16, 1, 1e-4);
}

// The table entries that use the models' real vocabularies match the formula
// on nemoc's catalog to the table's three significant digits.
TEST(ModelFlops, MatchesUpstreamTableEntriesFromTheCatalog) {
  const struct {
    const char* preset;
    int64_t seq;
    double upstream;
  } cases[] = {
      {"llama2-7b", 4096, 1.89e14},   {"llama2-70b", 4096, 1.82e15},
      {"llama3-70b", 8192, 3.94e15},  {"llama3.1-8b", 8192, 4.74e14},
      {"mixtral-8x7b", 4096, 3.4e14},  // two of eight experts per token
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(ModelFlopsPerSample(Arch(c.preset), c.seq) / c.upstream, 1, 0.005) << c.preset;
  }
}

TEST(ModelFlops, CatalogLlama31_405bHasEightQueryGroups) {
  // The real model has 8 KV heads (the recipe's table assumed 16): 0.7 % fewer FLOPs.
  EXPECT_NEAR(ModelFlopsPerSample(Arch("llama3.1-405b"), 8192), 2.150748e16, 1e11);
}

TEST(ModelFlops, UngatedMlpHasTwoMatrices) {
  json gelu = {{"numLayers", 1}, {"hiddenSize", 1}, {"ffnHiddenSize", 4}, {"numAttentionHeads", 1},
               {"numQueryGroups", 1}, {"vocabSize", 0}, {"activation", "gelu"}};
  // s·L·h²·(12 + 12 + 12·4 + 12·s) with s = 1: 84.
  EXPECT_DOUBLE_EQ(ModelFlopsPerSample(gelu, 1), 84);
  gelu["activation"] = "swiglu";
  EXPECT_DOUBLE_EQ(ModelFlopsPerSample(gelu, 1), 108);
  EXPECT_EQ(ModelFlopsPerSample(json::object(), 4096), 0);
}

// The README's worked example: 2.16533e16 FLOPs/sample, GBS 2016, 224 GPUs,
// 118.19 s per step: ~1649 TFLOPS per GPU, MFU ~0.366 against fp8's 4500.
TEST(Metrics, ReproducesTheWorkedExample) {
  std::vector<StepTiming> steps = {{12, 118.18969259262084}};
  MetricsInput input{2.16533e16, 2016, 8192, 224, 4500};
  Metrics m;
  std::string err;
  ASSERT_TRUE(ComputeMetrics(steps, 10, 30, input, &m, &err)) << err;
  EXPECT_NEAR(m.tflops_per_gpu, 1648.87, 0.01);
  EXPECT_NEAR(m.mfu, 0.36642, 1e-5);
  EXPECT_NEAR(m.samples_per_second, 2016 / 118.18969259262084, 1e-9);
  EXPECT_NEAR(m.tokens_per_second, 2016 * 8192 / 118.18969259262084, 1e-6);
  EXPECT_EQ(m.steps, 1);
}

TEST(Metrics, AveragesTheInclusiveWindowOnly) {
  std::vector<StepTiming> steps = {{9, 100}, {10, 2}, {11, 4}, {12, 6}, {13, 1000}};
  MetricsInput input{1e12, 10, 100, 2, 1};
  Metrics m;
  std::string err;
  ASSERT_TRUE(ComputeMetrics(steps, 10, 12, input, &m, &err));
  EXPECT_DOUBLE_EQ(m.step_seconds, 4);
  EXPECT_EQ(m.first_step, 10);
  EXPECT_EQ(m.last_step, 12);
  EXPECT_EQ(m.steps, 3);
  EXPECT_DOUBLE_EQ(m.tflops_per_gpu, 1e12 * 10 / 4 / 2 / 1e12);
  EXPECT_FALSE(ComputeMetrics(steps, 20, 30, input, &m, &err));
  EXPECT_EQ(err, "no training step in the window 20..30; the log has steps 9..13");
}

TEST(Dllogger, ParsesOneRecordPerLineAndSkipsParameters) {
  const std::string text =
      "DLLL {\"timestamp\": \"1.0\", \"type\": \"PARAMETER\", \"step\": \"PARAMETER\", \"data\": {\"x\": 1}}\n"
      "DLLL {\"type\": \"LOG\", \"step\": 0, \"data\": {\"train_step_timing in s\": 9.5}}\n"
      "DLLL {\"type\": \"LOG\", \"step\": 1, \"data\": {\"reduced_train_loss\": 11.0}}\n"
      "DLLL {\"type\": \"LOG\", \"step\": 1, \"data\": {\"train_step_timing in s\": 2.25}}\n";
  std::vector<StepTiming> steps;
  Diagnostics diags;
  ASSERT_TRUE(ParseDllogger(text, "d.json", &steps, &diags));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_DOUBLE_EQ(steps[0].seconds, 9.5);
  EXPECT_EQ(steps[1].step, 1);
  EXPECT_DOUBLE_EQ(steps[1].seconds, 2.25);
}

TEST(Dllogger, ParsesThePrettyPrintedRecordOfTheRecipeReadme) {
  const std::string text =
      "DLLL {\n  \"timestamp\": \"1741985729.870151\",\n  \"type\": \"LOG\",\n  \"step\": 12,\n"
      "  \"data\": {\n    \"train_step_timing in s\": 118.18969259262084,\n    \"epoch\": 0\n    }\n}\n";
  std::vector<StepTiming> steps;
  Diagnostics diags;
  ASSERT_TRUE(ParseDllogger(text, "d.json", &steps, &diags));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 12);
  EXPECT_DOUBLE_EQ(steps[0].seconds, 118.18969259262084);
}

TEST(Dllogger, LocatesBrokenRecordsAndRefusesEmptyLogs) {
  std::vector<StepTiming> steps;
  Diagnostics diags;
  EXPECT_FALSE(ParseDllogger("DLLL {\"step\": 1, \"data\": {}}\nDLLL {\"step\": 2,\n", "d.json", &steps,
                             &diags));
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].location.line, 2);
  EXPECT_EQ(diags.items()[0].code, "metrics.bad-record");

  Diagnostics empty;
  EXPECT_FALSE(ParseDllogger("{\"step\": 1}\n", "d.json", &steps, &empty));
  EXPECT_EQ(empty.items().at(0).code, "metrics.no-records");

  Diagnostics negative;
  EXPECT_FALSE(ParseDllogger("DLLL {\"step\": 1, \"data\": {\"train_step_timing in s\": -1}}\n",
                             "d.json", &steps, &negative));
}

TEST(StepWindow, Forms) {
  int64_t a = 0, b = 0;
  std::string err;
  ASSERT_TRUE(ParseStepWindow("10:30", &a, &b, &err));
  EXPECT_EQ(a, 10);
  EXPECT_EQ(b, 30);
  ASSERT_TRUE(ParseStepWindow("5:", &a, &b, &err));
  EXPECT_EQ(a, 5);
  EXPECT_EQ(b, std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(ParseStepWindow("7", &a, &b, &err));
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 7);
  EXPECT_FALSE(ParseStepWindow("30:10", &a, &b, &err));
  EXPECT_FALSE(ParseStepWindow("x:1", &a, &b, &err));
  EXPECT_FALSE(ParseStepWindow(":3", &a, &b, &err));
  EXPECT_FALSE(ParseStepWindow("-1:3", &a, &b, &err));
}

// Peak TFLOPS live in one table, per accelerator and precision.
TEST(Accelerators, PeakTflopsPerPrecision) {
  AcceleratorTable table;
  std::string err;
  ASSERT_TRUE(AcceleratorTable::Load(NEMOC_SOURCE_DIR "/libsonnet/accelerators.json", &table, &err));
  const struct {
    const char* name;
    double bf16, fp8;  // 0 = none
  } cases[] = {{"a100-40gb", 312, 0},     {"a100-80gb", 312, 0},      {"h100-80gb", 989, 1978},
               {"h200-141gb", 989, 1978}, {"b200-180gb", 2250, 4500}};
  for (const auto& c : cases) {
    const json* gpu = table.Find(c.name);
    ASSERT_NE(gpu, nullptr) << c.name;
    EXPECT_EQ((*gpu)["peakTflops"]["bf16"].get<double>(), c.bf16) << c.name;
    if (c.fp8 > 0) {
      EXPECT_EQ((*gpu)["peakTflops"]["fp8"].get<double>(), c.fp8) << c.name;
    } else {
      EXPECT_FALSE((*gpu)["peakTflops"].contains("fp8")) << c.name;
    }
  }
}

}  // namespace
}  // namespace nemoc
