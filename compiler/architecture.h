// The model architecture as C++ computes with it: the fit check's memory
// estimate (fit_check.h) and the plan's model FLOPs (metrics.h). Read once
// from the normalized spec's spec.model.architecture (filled from
// libsonnet/models.json for a preset; schemas/contracts/normalized-spec.schema.json
// says which fields normalization guarantees); the defaults for a field a
// custom architecture leaves out live here and nowhere else.
#ifndef NEMOC_ARCHITECTURE_H_
#define NEMOC_ARCHITECTURE_H_

#include <nlohmann/json.hpp>

namespace nemoc {

struct ModelArchitecture {
  double num_layers = 0;
  double hidden_size = 0;
  double ffn_hidden_size = 0;
  double num_attention_heads = 1;
  double num_query_groups = 1;  // default: num_attention_heads (no GQA)
  double vocab_size = 0;
  double num_experts = 0;       // 0: a dense model
  bool has_experts = false;     // numExperts is given (MoE)
  double moe_top_k = 1;         // experts per token (MoE only)
  bool gated_mlp = true;        // activation fast-swiglu or swiglu (the default): three MLP matrices
  bool share_embeddings = false;  // tied input and output embeddings

  static ModelArchitecture FromJson(const nlohmann::json& architecture);
};

}  // namespace nemoc

#endif  // NEMOC_ARCHITECTURE_H_
