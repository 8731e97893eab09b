// LoRA target-module names: what users write (HuggingFace or NeMo 2 names)
// -> the NeMo 1 (Hydra) name. One table.
{
  nemo1: {
    q_proj: 'attention_qkv',
    k_proj: 'attention_qkv',
    v_proj: 'attention_qkv',
    o_proj: 'attention_dense',
    gate_proj: 'mlp_fc1',
    up_proj: 'mlp_fc1',
    down_proj: 'mlp_fc2',
    linear_qkv: 'attention_qkv',
    linear_proj: 'attention_dense',
    linear_fc1: 'mlp_fc1',
    linear_fc2: 'mlp_fc2',
    attention_qkv: 'attention_qkv',
    attention_dense: 'attention_dense',
    mlp_fc1: 'mlp_fc1',
    mlp_fc2: 'mlp_fc2',
  },
  // Unique NeMo 1 names for a list of user names, in first-seen order.
  toNemo1(modules)::
    std.foldl(function(acc, m)
      local name = $.nemo1[m];
      if std.member(acc, name) then acc else acc + [name], modules, []),
}
