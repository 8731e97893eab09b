#include "architecture.h"

#include <string>

namespace nemoc {

ModelArchitecture ModelArchitecture::FromJson(const nlohmann::json& a) {
  ModelArchitecture m;
  if (!a.is_object()) return m;
  m.num_layers = a.value("numLayers", 0.0);
  m.hidden_size = a.value("hiddenSize", 0.0);
  m.ffn_hidden_size = a.value("ffnHiddenSize", 0.0);
  m.num_attention_heads = a.value("numAttentionHeads", 1.0);
  m.num_query_groups = a.value("numQueryGroups", m.num_attention_heads);
  m.vocab_size = a.value("vocabSize", 0.0);
  m.num_experts = a.value("numExperts", 0.0);
  m.has_experts = a.contains("numExperts");
  m.moe_top_k = a.value("moeTopK", 1.0);
  const std::string activation = a.value("activation", "fast-swiglu");
  m.gated_mlp = activation == "fast-swiglu" || activation == "swiglu";
  m.share_embeddings = a.value("shareEmbeddings", false);
  return m;
}

}  // namespace nemoc
