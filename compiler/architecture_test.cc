#include "architecture.h"

#include <gtest/gtest.h>

#include "fit_check.h"

namespace nemoc {
namespace {

TEST(ModelArchitecture, DefaultsForWhatACustomArchitectureLeavesOut) {
  const ModelArchitecture a = ModelArchitecture::FromJson(
      {{"numLayers", 32}, {"hiddenSize", 4096}, {"numAttentionHeads", 32}, {"ffnHiddenSize", 11008},
       {"vocabSize", 32000}});
  EXPECT_EQ(32, a.num_query_groups);  // no GQA: one group per head
  EXPECT_TRUE(a.gated_mlp);           // fast-swiglu
  EXPECT_FALSE(a.has_experts);
  EXPECT_EQ(1, a.moe_top_k);
  EXPECT_FALSE(a.share_embeddings);
}

TEST(ModelArchitecture, ReadsEveryField) {
  const ModelArchitecture a = ModelArchitecture::FromJson(
      {{"numLayers", 2}, {"hiddenSize", 8}, {"numAttentionHeads", 4}, {"numQueryGroups", 2},
       {"ffnHiddenSize", 16}, {"vocabSize", 100}, {"numExperts", 8}, {"moeTopK", 2},
       {"activation", "gelu"}, {"shareEmbeddings", true}});
  EXPECT_EQ(2, a.num_query_groups);
  EXPECT_FALSE(a.gated_mlp);
  EXPECT_TRUE(a.has_experts);
  EXPECT_EQ(8, a.num_experts);
  EXPECT_EQ(2, a.moe_top_k);
  EXPECT_TRUE(a.share_embeddings);
}

TEST(ModelArchitecture, TheJsonAndTheStructCountTheSame) {
  const nlohmann::json llama = {{"numLayers", 32},          {"hiddenSize", 4096}, {"numAttentionHeads", 32},
                                {"numQueryGroups", 8},      {"ffnHiddenSize", 14336}, {"vocabSize", 128256}};
  EXPECT_EQ(CountParameters(llama).total, CountParameters(ModelArchitecture::FromJson(llama)).total);
  // Llama 3.1 8B: about 8.0e9 parameters.
  EXPECT_NEAR(8.03e9, CountParameters(llama).total, 0.05e9);
}

}  // namespace
}  // namespace nemoc
