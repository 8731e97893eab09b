// LoRA target modules: every name users may write (HuggingFace, NeMo 2 or
// NeMo 1 names) -> the module it means in NeMo 1 (Hydra lora_tuning) and in
// NeMo 2 (llm.peft.LoRA target_modules). One table for both frameworks.
// Megatron fuses q/k/v into one projection and gate/up into one fc1, so
// several HuggingFace names select the same module.
{
  modules: {
    q_proj: { nemo1: 'attention_qkv', nemo2: 'linear_qkv' },
    k_proj: { nemo1: 'attention_qkv', nemo2: 'linear_qkv' },
    v_proj: { nemo1: 'attention_qkv', nemo2: 'linear_qkv' },
    o_proj: { nemo1: 'attention_dense', nemo2: 'linear_proj' },
    gate_proj: { nemo1: 'mlp_fc1', nemo2: 'linear_fc1' },
    up_proj: { nemo1: 'mlp_fc1', nemo2: 'linear_fc1' },
    down_proj: { nemo1: 'mlp_fc2', nemo2: 'linear_fc2' },
    linear_qkv: { nemo1: 'attention_qkv', nemo2: 'linear_qkv' },
    linear_proj: { nemo1: 'attention_dense', nemo2: 'linear_proj' },
    linear_fc1: { nemo1: 'mlp_fc1', nemo2: 'linear_fc1' },
    linear_fc2: { nemo1: 'mlp_fc2', nemo2: 'linear_fc2' },
    attention_qkv: { nemo1: 'attention_qkv', nemo2: 'linear_qkv' },
    attention_dense: { nemo1: 'attention_dense', nemo2: 'linear_proj' },
    mlp_fc1: { nemo1: 'mlp_fc1', nemo2: 'linear_fc1' },
    mlp_fc2: { nemo1: 'mlp_fc2', nemo2: 'linear_fc2' },
  },
  // Unique framework names for a list of user names, in first-seen order.
  local convert(modules, framework) =
    std.foldl(function(acc, m)
      local name = $.modules[m][framework];
      if std.member(acc, name) then acc else acc + [name], modules, []),
  toNemo1(modules):: convert(modules, 'nemo1'),
  toNemo2(modules):: convert(modules, 'nemo2'),
}
