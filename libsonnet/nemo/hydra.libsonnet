// The NeMo 1.x Megatron-GPT Hydra config (run, trainer, exp_manager, model),
// for megatron_gpt_pretraining.py and megatron_gpt_finetuning.py.
// Section layout follows the gpu-recipes / NeMo launcher configs.
local chain = import 'nemoc/stages/chain.libsonnet';
local loraModules = import 'nemoc/nemo/lora_modules.libsonnet';
local defaultsTable = std.parseJson(importstr 'nemoc/nemo/nemo1_defaults.json');  // data, not code: issue #47
local versions = import 'nemoc/nemo/versions.libsonnet';
local paths = import 'nemoc/paths.libsonnet';

// One table row as an overlay: "model.optim.lr" = v -> {model+: {optim+: {lr: v}}}.
local overlay(path, i, value) =
  if std.primitiveEquals(i, std.length(path) - 1) then { [path[i]]: value } else { [path[i]]+: overlay(path, i + 1, value) };

// b laid over a, recursively for objects; null is a value (std.mergePatch
// would delete the key). Only b's fields are visited (native inheritance
// keeps the rest of a): a is NeMo's whole default config, b nemoc's values
// (issue #47: visiting every default key per target was a fifth of a
// target's evaluation).
local deepMerge(a, b) =
  if std.primitiveEquals(std.type(b), 'object') && std.primitiveEquals(std.type(a), 'object') then a + {
    [k]: if std.objectHasEx(a, k, false) then deepMerge(a[k], b[k]) else b[k]
    for k in std.objectFields(b)
  } else b;

// NeMo's defaults per (tag, kind), each computed at most once per evaluation:
// the elements of an array are evaluated once and kept (an object's fields
// are evaluated on every access), and every target of a spec asks for the
// same few.
local defaultsKinds = ['finetune', 'pretrain'];
local defaultsTags = defaultsTable.tags;  // every tag a row's 'at' names
local defaultsKeys = [[tag, kind] for tag in defaultsTags for kind in defaultsKinds];
local defaultsIndex = std.parseJson('' + { [defaultsKeys[i][0] + ' ' + defaultsKeys[i][1]]: i for i in std.range(0, std.length(defaultsKeys) - 1) });
local computeDefaults(tag, kind) = std.parseJson('' + std.foldl(
  function(acc, row) acc + overlay(std.split(row.key, '.'), 0, row.value),
  [row for row in defaultsTable[kind] if std.objectHasEx(row.at, tag, false)],
  {}
));
local defaultsCache = std.makeArray(std.length(defaultsKeys), function(i) computeDefaults(defaultsKeys[i][0], defaultsKeys[i][1]));

{
  scripts: {
    pretrain: '/opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py',
    finetune: '/opt/NeMo/examples/nlp/language_modeling/tuning/megatron_gpt_finetuning.py',
  },

  script(train):: if std.primitiveEquals(train.mode, 'pretrain') then $.scripts.pretrain else $.scripts.finetune,

  // The NVIDIA/NeMo tag whose base config the run's container carries
  // (nemo/versions.json): the image's release, else the newest table release
  // not after it (an unknown or local image: the newest).
  nemoTag(train)::
    local release = versions.release(train.image);
    local known = std.objectFields(versions.releases);  // sorted
    local older = if std.primitiveEquals(release, null) then known else [r for r in known if r <= release];
    versions.releases[if std.length(older) > 0 then older[std.length(older) - 1] else known[0]].nemo,

  // NeMo's own defaults for that tag and script (nemo/nemo1_defaults.json,
  // rows citing the base config line): pretraining reads
  // megatron_gpt_config.yaml's keys, SFT/LoRA megatron_gpt_finetuning_config.yaml's.
  // The rows are summed as overlays (native object inheritance) and the result
  // is made concrete once (std.parseJson of the native string form): libjsonnet
  // re-evaluates object fields on every access, and a row-grouping comprehension
  // here cost ~4 s per build (measured; the summed overlays ~15 ms).
  defaults(tag, kind)::
    local key = tag + ' ' + kind;
    if std.objectHasEx(defaultsIndex, key, false) then defaultsCache[defaultsIndex[key]] else computeDefaults(tag, kind),

  // Hydra's safe form: `++key=value` adds or overrides, so a user override of
  // a key nemoc's config does not carry (model.ub_tp_comm_overlap) works
  // instead of failing with "Key not in struct". Explicit +, ++ and ~ stay.
  safeOverride(override)::
    if std.startsWith(override, '+') || std.startsWith(override, '~') then override else '++' + override,

  local nullable(obj, field) = if std.objectHasEx(obj, field, false) then obj[field] else null,

  trainer(train):: {
    num_nodes: train.nodes,
    devices: train.gpusPerNode,
    accelerator: 'gpu',
    precision: 'bf16',  // fp8 is a model flag on top of bf16 (Transformer Engine)
    logger: false,  // exp_manager owns logging
    enable_checkpointing: false,  // exp_manager owns checkpointing
    use_distributed_sampler: false,
    max_epochs: null,
    max_steps: train.maxSteps,
    max_time: null,
    log_every_n_steps: train.logEveryNSteps,
    val_check_interval: nullable(train, 'valCheckInterval'),
    limit_val_batches: if std.objectHasEx(train, 'valCheckInterval', false) then 32 else 0.0,
    limit_test_batches: 0,
    accumulate_grad_batches: 1,
    gradient_clip_val: train.optimizer.gradientClip,
  },

  // The fields of exp_manager that name the stage's own directory, in one
  // place: expManager() sets them, and the state hash is taken from the config
  // built with paths.draftState before withOwnDirectories sets the real ones
  // (stages/train.libsonnet built(): one config evaluation, not two).
  // DLLogger's JSON on shared storage, one file per rank (every rank opens
  // json_file; NeMo's DLLoggerParams default is ./dllogger.json in the pod:
  // NVIDIA/NeMo r2.0.0rc1..v2.4.0 nemo/utils/loggers/dllogger.py:48). Same
  // layout as NeMo 2 (nemo2.libsonnet), where `nemoc metrics` reads rank 0.
  // exp_manager resolves the interpolation (OmegaConf.to_container(cfg,
  // resolve=True), exp_manager.py:402 at r2.0.0rc1, :572 at v2.4.0); torchrun
  // sets RANK.
  ownDirectories(ctx):: {
    explicit_log_dir: paths.trainDir(ctx),
    dllogger_logger_kwargs+: {
      json_file: paths.dlloggerDir(ctx) + '/rank-${oc.env:RANK,0}/dllogger.json',
    },
  },
  withOwnDirectories(config, ctx):: config { exp_manager+: $.ownDirectories(ctx) },

  expManager(ctx, train):: $.ownDirectories(ctx) + {
    local checkpoint = train.checkpoint,
    exp_dir: null,
    name: paths.checkpointName,
    create_wandb_logger: false,
    create_tensorboard_logger: true,
    create_dllogger_logger: true,
    // json_file: ownDirectories.
    dllogger_logger_kwargs+: {
      verbose: true,
      stdout: true,
    },
    resume_if_exists: std.primitiveEquals(checkpoint.resume, 'auto'),
    resume_ignore_no_checkpoint: true,
    create_checkpoint_callback: checkpoint.enabled,
    checkpoint_callback_params: {
      monitor: 'step',
      mode: 'max',
      save_top_k: checkpoint.keep,
      save_last: checkpoint.saveLast,
      every_n_train_steps: checkpoint.every,
      // NeMo's CallbackParams defaults every_n_epochs to 1 (NVIDIA/NeMo
      // r2.0.0rc1..v2.4.0 nemo/utils/exp_manager.py:117 / :133) and Lightning's
      // ModelCheckpoint refuses both intervals at once: step checkpoints only.
      every_n_epochs: 0,
      always_save_nemo: false,
      // Field review A23. With save_best_model, on_train_end restores the
      // best top-k checkpoint before saving the .nemo (NVIDIA/NeMo
      // nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:269-282,
      // r2.0.0rc1..v2.4.0 alike); with monitor 'step' that is the newest
      // every_n_train_steps save, so 1100 steps saved every 1000 gave a .nemo
      // of step 1000. The fine-tuning conf sets it true
      // (megatron_gpt_finetuning_config.yaml). Off, the .nemo every reader
      // loads is the final step's weights.
      save_best_model: false,
      // Evaluation and conversion read the final .nemo (paths.trainedNemo),
      // and so does the next stage of a training chain (paths.restoreNemo).
      save_nemo_on_train_end: !std.primitiveEquals(train.mode, 'pretrain')
                              || !std.primitiveEquals(chain.key(ctx), 'train')
                              || std.objectHasEx(ctx.spec.stages, 'evaluate', false)
                              || std.objectHasEx(ctx.spec.stages, 'convert', false),
      filename: 'megatron_gpt--{step}-{consumed_samples}',
      model_parallel_size: train.parallelism.tensor * train.parallelism.pipeline,
    },
    log_step_timing: true,
    step_timing_kwargs: { sync_cuda: true, buffer_size: 5 },
  },

  parallelism(train)::
    local p = train.parallelism;
    {
      tensor_model_parallel_size: p.tensor,
      pipeline_model_parallel_size: p.pipeline,
      virtual_pipeline_model_parallel_size: nullable(p, 'virtualPipeline'),
      context_parallel_size: p.context,
      sequence_parallel: p.sequenceParallel,
      micro_batch_size: train.batch.micro,
      global_batch_size: train.batch.global,
      rampup_batch_size: null,
    } + (if p.expert > 1 then { expert_model_parallel_size: p.expert } else {}),

  precision(train):: {
    megatron_amp_O2: true,
    transformer_engine: true,
    fp8: std.primitiveEquals(train.precision, 'fp8'),
    fp8_e4m3: false,
    fp8_hybrid: true,
    fp8_margin: 0,
    fp8_interval: 1,
    fp8_amax_history_len: 1024,
    fp8_amax_compute_algo: 'max',
  },

  architecture(model, train)::
    local a = model.architecture;
    {
      mcore_gpt: true,
      encoder_seq_length: train.seqLength,
      max_position_embeddings: train.seqLength,
      num_layers: a.numLayers,
      hidden_size: a.hiddenSize,
      ffn_hidden_size: a.ffnHiddenSize,
      num_attention_heads: a.numAttentionHeads,
      num_query_groups: a.numQueryGroups,
      init_method_std: 0.02,
      use_scaled_init_method: true,
      hidden_dropout: 0.0,
      attention_dropout: 0.0,
      ffn_dropout: 0.0,
      kv_channels: null,
      apply_query_key_layer_scaling: false,
      normalization: a.normalization,
      layernorm_epsilon: 1.0e-05,
      do_layer_norm_weight_decay: false,
      make_vocab_size_divisible_by: 128,
      pre_process: true,
      post_process: true,
      persist_layer_norm: true,
      // Megatron's TransformerConfig refuses gelu bias-activation fusion
      // without add_bias_linear (Megatron-LM core_r0.8.0
      // megatron/core/transformer/transformer_config.py:408, core_r0.13.0
      // :1049); GPT-style gelu models carry biases (NeMo's base config:
      // bias: True with activation: gelu).
      bias: $.gelu(a.activation),
      activation: a.activation,
      headscale: false,
      transformer_block_type: 'pre_ln',
      openai_gelu: false,
      normalize_attention_scores: true,
      position_embedding_type: a.positionEmbedding,
      rotary_percentage: 1.0,
      rotary_base: a.rotaryBase,
      share_embeddings_and_output_weights: a.shareEmbeddings,
    } + (
      if std.objectHasEx(a, 'numExperts', false) then {
        num_moe_experts: a.numExperts,
        moe_router_topk: a.moeTopK,
        // The router's load-balancing loss (A24): NeMo copies the key into Megatron's
        // TransformerConfig (nemo1_extra_keys.json cites where, per tag), whose default is 0
        // (Megatron core_r0.10.0 transformer_config.py:278); the launcher's Mixtral configs
        // and NeMo 2's recipes use 0.01.
        moe_aux_loss_coeff: 0.01,
      } else {}
    ),

  // activation_to_func (NeMo megatron_base_model.py) maps gelu/geglu to
  // F.gelu and swiglu/fast-swiglu to F.silu; Megatron fuses bias+activation
  // only for those two (core_r0.8.0 transformer_config.py:404, core_r0.13.0
  // :1044: "activation function should be either gelu or swiglu").
  gelu(activation):: std.primitiveEquals(activation, 'gelu'),
  fusableActivation(activation)::
    std.member(['gelu', 'geglu', 'fast-geglu', 'swiglu', 'fast-swiglu'], activation),

  // A fine-tuning config restores the architecture from the .nemo file; the
  // activation nemoc knows (preset or architecture) decides the fusion still.
  fusions(model):: {
    grad_div_ar_fusion: true,
    gradient_accumulation_fusion: true,
    bias_activation_fusion: $.fusableActivation(model.architecture.activation),
    bias_dropout_add_fusion: true,
    masked_softmax_fusion: true,
    apply_rope_fusion: true,
    use_flash_attention: true,
    seed: 1234,
  },

  tokenizer(model):: {
    local t = model.tokenizer,
    library: t.library,
    type: nullable(t, 'type'),
    model: nullable(t, 'model'),
    vocab_file: null,
    merge_file: null,
    delimiter: null,
    sentencepiece_legacy: false,
  },

  // The optimizer NeMo accepts for the run:
  // - PEFT: fused_adam; nlp_adapter_mixins.add_adapter raises "distributed_fused_adam
  //   is not supported for PEFT" (NVIDIA/NeMo r2.0.0rc1
  //   nemo/collections/nlp/parts/mixins/nlp_adapter_mixins.py:221, v2.4.0 :233).
  // - expert parallelism: mcore_distributed_optim; megatron_gpt_model.py refuses
  //   the Apex distributed optimizer (r2.0.0rc1
  //   nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py:322,
  //   v2.4.0 :367); NeMo-Framework-Launcher conf/training/mixtral/mixtral_8x7b.yaml uses it.
  // - otherwise Apex distributed_fused_adam (the launcher's GPT/Llama configs).
  optimizerName(train)::
    if std.primitiveEquals(train.mode, 'lora') then 'fused_adam'
    else if train.parallelism.expert > 1 then 'mcore_distributed_optim'
    else 'distributed_fused_adam',

  optim(train)::
    local o = train.optimizer;
    local name = $.optimizerName(train);
    {
      name: name,
      lr: o.lr,
      weight_decay: o.weightDecay,
      betas: [0.9, 0.95],
      sched: {
        name: 'CosineAnnealing',
        warmup_steps: o.warmupSteps,
        constant_steps: 0,
        min_lr: o.minLr,
      },
    } + (
      // fused_adam (apex FusedAdam) takes every remaining optim key as a
      // constructor argument: it gets none of the distributed ones.
      if std.primitiveEquals(name, 'distributed_fused_adam') then {
        bucket_cap_mb: 125,
        overlap_grad_sync: true,
        overlap_param_sync: true,
        contiguous_grad_buffer: true,
        contiguous_param_buffer: true,
        grad_sync_dtype: 'bf16',
      } else if std.primitiveEquals(name, 'mcore_distributed_optim') then {
        // modelPT.setup_megatron_optimization reads these two from cfg.optim.
        overlap_grad_sync: true,
        overlap_param_sync: true,
      } else {}
    ),

  pretrainData(ctx, train):: {
    local data = train.data,
    data_impl: if std.objectHasEx(data, 'mock', false) then 'mock' else 'mmap',
    splits_string: '99990,8,2',
    seq_length: train.seqLength,
    skip_warmup: true,
    num_workers: 2,
    dataloader_type: 'single',
    reset_position_ids: false,
    reset_attention_mask: false,
    eod_mask_loss: false,
    index_mapping_dir: null,
    data_prefix: paths.dataPrefix(ctx, data),
  },

  finetuneDataset(ctx, train, file, training):: {
    local jsonl = train.data.jsonl,
    file_names: [paths.dataFile(ctx, file)],
    global_batch_size: train.batch.global,
    micro_batch_size: train.batch.micro,
    shuffle: training,
    num_workers: 0,
    memmap_workers: 2,
    pin_memory: true,
    max_seq_length: train.seqLength,
    min_seq_length: 1,
    drop_last: training,
    label_key: 'output',
    add_eos: true,
    add_sep: false,
    add_bos: false,
    truncation_field: 'input',
    index_mapping_dir: null,
    prompt_template: jsonl.promptTemplate,
  } + (if training then { concat_sampling_probabilities: [1.0] } else {
         names: ['validation'],
         write_predictions_to_file: false,
         tokens_to_generate: 32,
         metric: { name: 'loss', average: null, num_classes: null },
       }),

  finetuneData(ctx, train)::
    local jsonl = train.data.jsonl;
    {
      train_ds: $.finetuneDataset(ctx, train, jsonl.train, true),
    } + (if std.objectHasEx(jsonl, 'validation', false)
         then { validation_ds: $.finetuneDataset(ctx, train, jsonl.validation, false) }
         else {}),

  peft(train)::
    if std.primitiveEquals(train.mode, 'lora') then {
      local lora = train.peft,
      peft_scheme: 'lora',
      restore_from_path: null,
      lora_tuning: {
        target_modules: loraModules.toNemo1(lora.targetModules),
        adapter_dim: lora.adapterDim,
        alpha: lora.alpha,
        adapter_dropout: lora.dropout,
        column_init_method: 'xavier',
        row_init_method: 'zero',
        layer_selection: null,
        weight_tying: false,
        position_embedding_strategy: null,
      },
    } else { peft_scheme: 'none', restore_from_path: null },

  // Llama 3.1's RoPE frequency scaling: NeMo 1 applies it when
  // model.scale_positional_embedding is set (NVIDIA/NeMo v2.0.0
  // nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py:182,
  // v2.4.0 :197; NeMo-Framework-Launcher conf/training/llama/llama3_1_8b.yaml
  // sets it). r2.0.0rc1 (24.07) lacks it: compiler/framework_check.cc refuses
  // Llama 3.1 there. Fine-tuning sets it too: cfg.model is merged over the
  // restored config (megatron_gpt_finetuning.py:62).
  ropeScaling(ctx)::
    local preset = if std.objectHasEx(ctx.spec.model, 'preset', false) then ctx.spec.model.preset else '';
    if std.startsWith(preset, 'llama3.1-') then { scale_positional_embedding: true } else {},

  // The whole config.yaml as a JSON value (rendered to YAML by nemoc's C++
  // emitter): NeMo's defaults for the container's NeMo version with nemoc's
  // values laid over them, so every key NeMo reads without a default exists.
  config(ctx)::
    local train = chain.stage(ctx);
    deepMerge($.defaults($.nemoTag(train), if std.primitiveEquals(train.mode, 'pretrain') then 'pretrain' else 'finetune'), $.values(ctx)),

  // What nemoc decides.
  values(ctx):: {
    local train = chain.stage(ctx),
    local model = ctx.spec.model,
    local finetune = !std.primitiveEquals(train.mode, 'pretrain'),
    trainer: $.trainer(train),
    exp_manager: $.expManager(ctx, train),
    model:
      $.parallelism(train)
      + $.precision(train)
      + $.fusions(model)
      + {
        // MegatronTrainerBuilder._training_strategy reads it unconditionally
        // (NVIDIA/NeMo r2.0.0rc1 nemo/collections/nlp/parts/megatron_trainer_builder.py:89,
        // v2.4.0 :90).
        gradient_as_bucket_view: true,
      }
      + { optim: $.optim(train) }
      + $.ropeScaling(ctx)
      + (
        if finetune then {
          restore_from_path: paths.restoreNemo(ctx),
          data: $.finetuneData(ctx, train),
          peft: $.peft(train),
        } else $.architecture(model, train) + {
          tokenizer: $.tokenizer(model),
          data: $.pretrainData(ctx, train),
        } + (
          // Continued pretraining: megatron_gpt_pretraining.py restores the
          // weights of model.restore_from_path with this model config laid
          // over the checkpoint's (NVIDIA/NeMo r2.0.0rc1
          // examples/nlp/language_modeling/megatron_gpt_pretraining.py:44-52,
          // v2.4.0 :44-55, merge_cfg_with); the optimizer starts fresh.
          local restore = paths.restoreNemo(ctx);
          if !std.primitiveEquals(restore, null) then { restore_from_path: restore } else {}
        )
      ),
  },
}
