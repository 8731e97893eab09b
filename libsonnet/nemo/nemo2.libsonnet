// NeMo 2 launch: a Python recipe module, described here as data and written
// as Python by nemoc's C++ emitter (the {'$nemoc.python': module} marker,
// compiler/python_emitter.h). The module starts from the catalog model's
// NeMo recipe (llm.recipes.<model>.pretrain_recipe / finetune_recipe) and
// sets every value the spec implies, nothing more; torchrun runs it as
// `recipe.py --factory "recipe()" <overrides>` through NeMo-Run's CLI.
local chain = import 'nemoc/stages/chain.libsonnet';
local loraModules = import 'nemoc/nemo/lora_modules.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';

{
  moduleFile: 'recipe.py',

  // Precision -> the NeMo 2 mixed-precision plugin factory
  // (nemo.collections.llm.recipes.precision.mixed_precision). fp8 is
  // Transformer Engine's hybrid delayed-scaling FP8 on top of bf16, as in the
  // NeMo 1 path (fp8: true, fp8_hybrid: true).
  precisionPlugins: {
    bf16: 'bf16_mixed',
    fp8: 'bf16_with_fp8_mixed',
  },
  precisionModule: 'nemo.collections.llm.recipes.precision.mixed_precision',

  // Python expression helpers (see compiler/python_emitter.h).
  name(n):: { '$name': n },
  call(fn, args=[], kwargs={}):: { '$call': fn } + (if std.length(args) > 0 then { args: args } else {})
                                 + (if std.length(kwargs) > 0 then { kwargs: kwargs } else {}),
  set(target, value, comment=null):: { assign: target, value: value }
                                     + (if std.primitiveEquals(comment, null) then {} else { comment: comment }),
  comment(text):: { comment: text },
  blank:: { blank: true },

  // torchrun's program: the module, NeMo-Run's factory flag, then the user's
  // NeMo-Run overrides (key=value, one argv entry each, never through a shell).
  // From NeMo-Run v0.3.0 (NeMo 25.04 on) the CLI catches every exception of
  // the run and exits 0 (versions.json nemoRun, NVIDIA-NeMo/Run issue #52):
  // a crashed training would be a complete Job, and the stages after it
  // would run. --verbose makes it re-raise (nemo_run/cli/api.py v0.3.0:889,
  // 945-958; v0.4.0:895, 951-964), so the pod fails and the Job retries or
  // fails.
  verboseFlag:: '--verbose',
  program(ctx)::
    local run = versions.nemoRun(chain.stage(ctx).image);
    [paths.configDir + '/' + $.moduleFile, '--factory', 'recipe()']
    + (if !std.primitiveEquals(run, null) && std.primitiveEquals(run.cli, 'swallows-unless-verbose') then [$.verboseFlag] else [])
    + chain.stage(ctx).overrides,

  // NeMo 24.12's NeMo-Run CLI swallows a failed run's exception and has no
  // --verbose (versions.json nemoRun): warned at the stage's framework.
  diagnostics(ctx)::
    std.flattenArrays([
      local t = ctx.spec.stages[key];
      local run = versions.nemoRun(t.image);
      if std.primitiveEquals(t.framework, 'nemo2') && !std.primitiveEquals(run, null) && std.primitiveEquals(run.cli, 'swallows') then [{
        code: 'train.nemo-run-exit',
        severity: 'warning',
        pointer: '/spec/stages/' + key + '/framework',
        message: 'NeMo ' + versions.release(t.image) + "'s NeMo-Run CLI (" + std.substr(run.ref, 0, 7)
                 + ') prints a failed run\'s error and exits 0: Kubernetes reports spec.stages.' + key
                 + ' complete when it crashed, and the stages after it run',
        hint: 'use a NeMo 25.02 or later image (25.02 exits 1; 25.04 on with --verbose, which nemoc passes)',
      }] else []
      for key in chain.present(ctx)
    ]),

  entry(train):: if std.primitiveEquals(train.mode, 'pretrain') then 'pretrain' else 'finetune',

  // Megatron's even pipeline split (NVIDIA/Megatron-LM core_v0.13.0
  // megatron/core/transformer/transformer_config.py:993-1040 and
  // transformer_block.py:133-166; the same in core_v0.11.0 and core_v0.12.0):
  // with account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
  // the embedding and the loss count as one layer each, and
  // (num_layers + counted) % PP == 0, then ((num_layers + counted) / PP) % VPP == 0
  // when VPP is set.
  splitFits(layers, pp, vpp)::
    layers % pp == 0 && (std.primitiveEquals(vpp, null) || std.primitiveEquals(pp, 1) || std.floor(layers / pp) % vpp == 0),

  // True when the recipe's trainer() counts embedding and loss in the split:
  // llama31_405b.pretrain_recipe from NeMo 25.02 (NVIDIA/NeMo v2.2.1, v2.4.0
  // nemo/collections/llm/recipes/llama31_405b.py:72-73 default both to True;
  // finetune_recipe builds its own trainer without them). models.json says
  // since when (accountForEmbeddingAndLossSince).
  recipeCountsEmbeddingAndLoss(ctx, train)::
    local nemo2 = ctx.spec.model.nemo2;
    std.primitiveEquals(train.mode, 'pretrain')
    && std.objectHasEx(nemo2, 'accountForEmbeddingAndLossSince', false)
    && versions.atLeast(train.image, nemo2.accountForEmbeddingAndLossSince),

  // The recipe's counted split is kept when Megatron accepts it with nemoc's
  // PP and VPP; else both flags are set False (the plain split, which
  // nemoc's checks require: compiler/checks.cc train.layers). Llama 3.1 405B
  // on PP 14: (126 + 2) % 14 != 0, 126 = 14 × 9 (field-review.md A13).
  pipelineSplit(ctx, train)::
    local p = train.parallelism;
    local layers = ctx.spec.model.architecture.numLayers;
    local vpp = if std.objectHasEx(p, 'virtualPipeline', false) then p.virtualPipeline else null;
    if !$.recipeCountsEmbeddingAndLoss(ctx, train) then []
    else if $.splitFits(layers + 2, p.pipeline, vpp) then [
      $.comment("The recipe counts embedding and loss as pipeline layers: Megatron splits "
                + (layers + 2) + ' over ' + p.pipeline + ' stages'),
    ] else [
      $.comment('Megatron cannot split ' + layers + ' layers + embedding + loss = ' + (layers + 2)
                + ' over ' + p.pipeline + ' stages'
                + (if std.primitiveEquals(vpp, null) then '' else ' × ' + vpp + ' virtual')
                + "; split the model's " + layers + ' layers only'),
      $.set('recipe.trainer.strategy.account_for_embedding_in_pipeline_split', false),
      $.set('recipe.trainer.strategy.account_for_loss_in_pipeline_split', false),
    ],

  parallelism(ctx, train)::
    local p = train.parallelism;
    [
      $.comment('Parallelism (' + train.derived.modelParallel + '-way model parallel, data parallel '
                + train.derived.dataParallel + ')'),
      $.set('recipe.trainer.strategy.tensor_model_parallel_size', p.tensor),
      $.set('recipe.trainer.strategy.pipeline_model_parallel_size', p.pipeline),
      $.set('recipe.trainer.strategy.virtual_pipeline_model_parallel_size',
            if std.objectHasEx(p, 'virtualPipeline', false) then p.virtualPipeline else null),
      $.set('recipe.trainer.strategy.context_parallel_size', p.context),
      $.set('recipe.trainer.strategy.expert_model_parallel_size', p.expert),
      $.set('recipe.trainer.strategy.sequence_parallel', p.sequenceParallel),
    ] + (
      // Megatron needs the dtype of activations passed between stages.
      if p.pipeline > 1 then [$.set('recipe.trainer.strategy.pipeline_dtype', $.name('torch.bfloat16'))] else []
    ) + $.pipelineSplit(ctx, train),

  precision(train):: [
    $.comment('Precision: ' + train.precision),
    $.set('recipe.trainer.plugins', $.call($.precisionPlugins[train.precision])),
  ],

  steps(train):: [
    $.comment('Steps, logging and validation'),
    $.set('recipe.trainer.max_steps', train.maxSteps),
    $.set('recipe.trainer.log_every_n_steps', train.logEveryNSteps),
  ] + (
    if std.objectHasEx(train, 'valCheckInterval', false) then [
      $.set('recipe.trainer.val_check_interval', train.valCheckInterval),
      $.set('recipe.trainer.limit_val_batches', 32),
    ] else [
      $.set('recipe.trainer.limit_val_batches', 0.0),
    ]
  ),

  // Sequence length lives in the model config and the data module; they must agree.
  data(ctx, train)::
    local batch = {
      seq_length: train.seqLength,
      micro_batch_size: train.batch.micro,
      global_batch_size: train.batch.global,
    };
    [$.comment('Data and batch sizes (sequence length must agree in model and data)')]
    + [$.set('recipe.model.config.seq_length', train.seqLength)]
    + (
      if std.primitiveEquals(train.mode, 'pretrain') && std.objectHasEx(train.data, 'mock', false) then
        [$.set('recipe.data', $.call('run.Config', [$.name('llm.MockDataModule')], batch))]
      else if std.primitiveEquals(train.mode, 'pretrain') then
        // Megatron indexed datasets (NVIDIA/NeMo v2.1.0-v2.4.0
        // nemo/collections/llm/gpt/data/pre_training.py PreTrainingDataModule.__init__:
        // paths, seq_length, tokenizer, micro/global_batch_size, split). Without a
        // tokenizer it would tokenize as GPT2BPE (:213 get_nmt_tokenizer("megatron",
        // "GPT2BPETokenizer")), not as the data was prepared: the model's own is
        // passed, as NeMo's tutorials do (v2.2.1 tutorials/llm/llama/slimpajama/
        // pretraining.ipynb, domain-adaptive-pretraining_nemo2.0.ipynb). The split
        // is NeMo 1's splits_string; validate_dataset_asset_accessibility checks
        // <prefix>.bin/.idx at start-up.
        [$.set('recipe.data', $.call('run.Config', [$.name('llm.PreTrainingDataModule')], batch {
          paths: paths.dataPrefix(ctx, train.data),
          tokenizer: $.tokenizer(ctx.spec.model.tokenizer),
          split: '99990,8,2',
        }))]
      else
        local jsonl = train.data.jsonl;
        // llm.FineTuningDataModule reads <dataset_root>/training.jsonl and
        // validation.jsonl (nemoc's checks enforce those names).
        local file = paths.dataFile(ctx, jsonl.train);
        local root = std.substr(file, 0, std.length(file) - std.length('/training.jsonl'));
        [$.set('recipe.data', $.call('run.Config', [$.name('llm.FineTuningDataModule')], batch {
          dataset_root: root,
          dataset_kwargs: { '$dict': { prompt_template: jsonl.promptTemplate } },
        }))]
    ),

  optimizer(train)::
    local o = train.optimizer;
    [
      $.comment('Optimizer and learning-rate schedule'),
      $.set('recipe.optim.config.lr', o.lr),
      $.set('recipe.optim.config.weight_decay', o.weightDecay),
      $.set('recipe.optim.config.clip_grad', o.gradientClip),
      $.set('recipe.optim.lr_scheduler.warmup_steps', o.warmupSteps),
      $.set('recipe.optim.lr_scheduler.min_lr', o.minLr),
    ],

  logging(ctx, train):: [
    $.comment('Logs, TensorBoard and checkpoints under one directory on shared storage'),
    $.set('recipe.log.explicit_log_dir', paths.trainDir(ctx)),
    // DLLogger JSON for `nemoc metrics`; each rank writes its own file (rank 0
    // holds the step timings), so no rank truncates another's.
    $.set('recipe.log.extra_loggers', [
      $.call('run.Config', [$.name('DLLogger')], {
        json_file: $.call('os.path.join', [
          paths.dlloggerDir(ctx),
          { '$concat': ['rank-', $.call('os.environ.get', ['RANK', '0'])] },
          'dllogger.json',
        ]),
        stdout: true,
        verbose: true,
      }),
    ]),
  ],

  checkpoint(ctx, train)::
    local c = train.checkpoint;
    if c.enabled then [
      $.comment('Checkpoints: every ' + c.every + ' steps, newest ' + c.keep + ' kept'),
      $.set('recipe.log.ckpt.every_n_train_steps', c.every),
      $.set('recipe.log.ckpt.train_time_interval', null),
      $.set('recipe.log.ckpt.save_top_k', c.keep),
      $.set('recipe.log.ckpt.save_last', c.saveLast),
      $.set('recipe.log.ckpt.monitor', 'step'),
      $.set('recipe.log.ckpt.mode', 'max'),
    ] else [
      $.comment('Checkpoints disabled'),
      $.set('recipe.log.ckpt', null),
      $.set('recipe.trainer.enable_checkpointing', false),
    ],

  // The checkpoint the stage restores its weights from (AutoResume's
  // restore_config, used only when the stage's own log directory holds no
  // checkpoint to resume): after another training stage of the chain, that
  // stage's last checkpoint, picked when the recipe is built (the function
  // below); else the spec's NeMo 2 checkpoint directory or where the import
  // stage's llm.import_ckpt writes model.source.huggingface; null for
  // pretraining from random weights. A pretraining with a source continues
  // pretraining, as NeMo's DAPT tutorial does (NVIDIA/NeMo v2.2.1
  // tutorials/llm/llama/domain-adaptive-pretraining/code/domain_adaptive_pretraining_nemo2.0.ipynb:
  // AutoResume(restore_config=RestoreConfig(path=...)) on pretrain_recipe).
  restorePath(ctx, train)::
    local source = if std.objectHasEx(ctx.spec.model, 'source', false) then ctx.spec.model.source else {};
    if !std.primitiveEquals(chain.upstream(ctx), null) then $.call($.upstreamFunction)
    else if std.objectHasEx(source, 'nemo', false) then paths.resultsFile(ctx, source.nemo)
    else if std.objectHasEx(source, 'huggingface', false) then paths.importedNemo2(ctx)
    else null,

  restoreComment(ctx, train)::
    local upstream = chain.upstream(ctx);
    if !std.primitiveEquals(upstream, null) then "; start from spec.stages." + upstream + "'s last checkpoint"
    else if std.primitiveEquals(train.mode, 'pretrain') then '; continue pretraining from the NeMo 2 checkpoint'
    else '; start from the NeMo 2 checkpoint',

  resume(ctx, train)::
    local auto = std.primitiveEquals(train.checkpoint.resume, 'auto');
    local restore = $.restorePath(ctx, train);
    [
      $.comment(
        (if auto then 'Resume from the newest checkpoint in the log directory, if any'
         else 'Always start fresh')
        + (if std.primitiveEquals(restore, null) then '' else $.restoreComment(ctx, train))
      ),
      $.set('recipe.resume', $.call('run.Config', [$.name('nl.AutoResume')], {
        resume_if_exists: auto,
        resume_ignore_no_checkpoint: true,
      } + (
        if !std.primitiveEquals(restore, null) then {
          restore_config: $.call('run.Config', [$.name('nl.RestoreConfig')], { path: restore }),
        } else {}
      ))),
    ],

  // After another training stage of the chain, the checkpoint to start from
  // is the one that stage's AutoResume would resume: its newest finished
  // *last directory (NVIDIA/NeMo nemo/lightning/resume.py
  // AutoResume._find_trainer_ckpt_path with resume_from_directory,
  // v2.1.0:180-257, v2.4.0:185-265: unfinished checkpoints are skipped, the
  // newest by mtime wins, none raises NotFoundError naming the directory).
  // Its name holds the validation loss and step, known only at run time, so
  // recipe() asks NeMo for it on every rank when the run starts, after the
  // GitOps engine has waited for the upstream stage to finish.
  upstreamFunction:: 'upstream_checkpoint',
  upstreamCheckpoint(ctx)::
    local upstream = chain.upstream(ctx);
    local dir = paths.checkpointDir(chain.at(ctx, upstream));
    {
      name: $.upstreamFunction,
      docstring: 'The last checkpoint of spec.stages.' + upstream + ', the one its AutoResume would resume.',
      body: [
        $.set('upstream', $.call('nl.AutoResume', [], {
          resume_from_directory: dir,
          resume_if_exists: true,
        })),
      ],
      returns: $.call('str', [$.call('upstream._find_trainer_ckpt_path')]),
    },

  peft(train)::
    if std.primitiveEquals(train.mode, 'lora') then
      local lora = train.peft;
      [
        $.comment('LoRA on ' + std.join(', ', lora.targetModules)),
        $.set('recipe.peft', $.call('run.Config', [$.name('llm.peft.LoRA')], {
          target_modules: loraModules.toNemo2(lora.targetModules),
          dim: lora.adapterDim,
          alpha: lora.alpha,
          dropout: lora.dropout,
        })),
      ]
    else [],

  factory(ctx, train)::
    local recipeModule = ctx.spec.model.nemo2.recipe;
    local fn = recipeModule + '.' + $.entry(train) + '_recipe';
    $.call(fn, [], {
      name: ctx.project,
      num_nodes: train.nodes,
      num_gpus_per_node: train.gpusPerNode,
    } + (
      if std.primitiveEquals(train.mode, 'pretrain') then {}
      else { peft_scheme: if std.primitiveEquals(train.mode, 'lora') then 'lora' else null }
    )),

  section(statements):: [$.blank] + statements,

  // The data module's tokenizer, from spec.model.tokenizer: Hugging Face's
  // AutoTokenizer(pretrained_model_name) or SentencePieceTokenizer(model_path)
  // (nemo/collections/common/tokenizers/huggingface/auto_tokenizer.py,
  // sentencepiece_tokenizer.py at v2.1.0-v2.4.0). compiler/framework_check.cc
  // refuses the other libraries.
  tokenizers:: {
    huggingface: { class: 'AutoTokenizer', module: 'nemo.collections.common.tokenizers.huggingface.auto_tokenizer', arg: 'pretrained_model_name', field: 'type' },
    sentencepiece: { class: 'SentencePieceTokenizer', module: 'nemo.collections.common.tokenizers.sentencepiece_tokenizer', arg: 'model_path', field: 'model' },
  },
  tokenizer(t)::
    local k = $.tokenizers[t.library];
    $.call('run.Config', [$.name(k.class)], { [k.arg]: t[k.field] }),
  readsPreparedData(train):: std.primitiveEquals(train.mode, 'pretrain') && !std.objectHasEx(train.data, 'mock', false),

  // The whole module as data.
  module(ctx)::
    local train = chain.stage(ctx);
    local model = ctx.spec.model;
    local recipeModule = model.nemo2.recipe;
    {
      docstring: 'NeMo 2 ' + train.mode + ' recipe for ' + ctx.project + ', target ' + ctx.target.name
                 + '. Generated by nemoc; do not edit.\n\n'
                 + 'torchrun runs it as: ' + $.moduleFile + ' --factory "recipe()" [key=value ...]\n'
                 + "(NeMo-Run overrides from the spec's overrides come last and win).",
      imports: [
        { module: 'os' },
        { module: 'nemo_run', as: 'run' },
      ] + (if train.parallelism.pipeline > 1 then [{ module: 'torch' }] else []) + [
        { module: 'nemo.lightning', as: 'nl' },
        { from: 'nemo.collections', 'import': ['llm'] },
        { from: 'nemo.collections.llm.recipes', 'import': [recipeModule] },
        { from: $.precisionModule, 'import': [$.precisionPlugins[train.precision]] },
        { from: 'nemo.utils.loggers.dllogger', 'import': ['DLLogger'] },
      ] + (if $.readsPreparedData(train) then
             local k = $.tokenizers[model.tokenizer.library];
             [{ from: k.module, 'import': [k.class] }] else []),
      functions: (if !std.primitiveEquals(chain.upstream(ctx), null) then [$.upstreamCheckpoint(ctx)] else []) + [{
        name: 'recipe',
        docstring: "NeMo's " + recipeModule + ' recipe with the values of the nemoc spec.',
        body:
          [$.set('recipe', $.factory(ctx, train))]
          + $.section($.parallelism(ctx, train))
          + $.section($.precision(train))
          + $.section($.data(ctx, train))
          + $.section($.steps(train))
          + $.section($.optimizer(train))
          + $.section($.logging(ctx, train))
          + $.section($.checkpoint(ctx, train))
          + $.section($.resume(ctx, train))
          + (if std.primitiveEquals(train.mode, 'lora') then $.section($.peft(train)) else []),
        returns: $.name('recipe'),
      }],
      main: $.call('run.cli.main', [$.name('llm.' + $.entry(train))], { default_factory: $.name('recipe') }),
    },

  // ConfigMap data: the module file.
  configData(ctx):: { [$.moduleFile]: { '$nemoc.python': $.module(ctx) } },
}
