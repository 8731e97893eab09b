// 35-merge-lora: a NeMo 1 LoRA fine-tune saves a .nemo that holds only the
// adapter (and its config); evaluation and the NeMo -> Hugging Face
// conversion load a whole model. This Job merges the adapter into the base
// model with NeMo's own script, and the later stages read the merged .nemo
// (paths.nemoCheckpoint). Implied: it runs when the train stage's mode is
// lora and evaluate or convert reads the training run's checkpoint;
// spec.stages.mergeLora only changes where it runs (gpus, resources).
//
// NVIDIA/NeMo scripts/nlp_language_modeling/merge_lora_weights/merge.py,
// read at r2.0.0rc1, v2.0.0, v2.1.0, v2.2.1, v2.3.0 and v2.4.0
// (libsonnet/nemo/merge_lora.json holds its Hydra config per tag):
//   - a Hydra struct config: only its keys may be overridden;
//   - gpt_model_file defaults to the string 'null,' (a stray comma in the
//     YAML), so it is always passed: the base .nemo training started from;
//   - lora_model_path: the adapter .nemo; load_lora reads its own
//     tensor/pipeline parallelism from model_config.yaml, any TP/PP;
//   - v2.1.0+ restores the base with TP1 PP1 on trainer.devices; r2.0.0rc1
//     and v2.0.0 at the parallelism the base was saved with (an imported
//     Hugging Face model is TP1 PP1; a spec's source.nemo must be too:
//     diagnostics below);
//   - trainer.precision defaults to 16 (fp16): the model trains in bf16, so
//     bf16; the merged model is cast to it before save_to;
//   - trainer.accelerator=cpu restores and merges on the CPU (the script's
//     docstring: "use 'cpu' if model cannot fit in memory") and skips the
//     one-prompt generation it otherwise runs as a check.
local k8s = import 'nemoc/k8s.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';
local table = import 'nemoc/nemo/merge_lora.json';

{
  dir: order.dir.mergeLora,
  component: 'merge-lora',
  script: table.script,

  jobName(ctx):: k8s.boundedName(ctx.project + '-merge-lora', 63),

  // The stages that read the training run's .nemo (no checkpoint of their own).
  readers(ctx):: [
    s
    for s in ['evaluate', 'convert']
    if std.objectHasEx(ctx.spec.stages, s, false) && !std.objectHasEx(ctx.spec.stages[s], 'checkpoint', false)
  ],

  enabled(ctx)::
    std.objectHasEx(ctx.spec.stages, 'train', false)
    && std.primitiveEquals(ctx.spec.stages.train.mode, 'lora')
    && std.primitiveEquals(ctx.spec.stages.train.framework, 'nemo1')
    && std.length($.readers(ctx)) > 0,

  // spec.stages.mergeLora with the schema's defaults when the spec leaves it out.
  settings(ctx)::
    { gpus: 1, resources: {} }
    + (if std.objectHasEx(ctx.spec.stages, 'mergeLora', false) then ctx.spec.stages.mergeLora else {}),

  // Hydra overrides, in the order the conf lists the keys.
  overrides(ctx)::
    local m = $.settings(ctx);
    [
      'trainer.devices=1',
      'trainer.accelerator=' + (if std.primitiveEquals(m.gpus, 0) then 'cpu' else 'gpu'),
      'trainer.precision=bf16',
      'gpt_model_file=' + paths.restoreNemo(ctx),
      'lora_model_path=' + paths.trainedNemo(ctx),
      'merged_model_path=' + paths.mergedNemo(ctx),
    ],

  args(ctx):: ['python3', $.script] + $.overrides(ctx),

  // The tag's conf, or null when nemoc cannot tell the image's NeMo release.
  confFor(ctx)::
    local tag = versions.tag(ctx.spec.stages.train.image);
    if !std.primitiveEquals(tag, null) && std.objectHasEx(table.tags, tag, false) then table.tags[tag] else null,

  // Located errors instead of a Hydra exit in the cluster: an override of a
  // key the tag's conf lacks. A warning where the merge restores the base at
  // its saved parallelism and nemoc cannot know it (the spec's source.nemo).
  diagnostics(ctx)::
    if !$.enabled(ctx) then [] else
      local row = $.confFor(ctx);
      local tag = versions.tag(ctx.spec.stages.train.image);
      local has(conf, key) =
        local parts = std.split(key, '.');
        std.objectHasEx(conf, parts[0], false)
        && (std.primitiveEquals(std.length(parts), 1) || std.objectHasEx(conf[parts[0]], parts[1], false));
      local keys = [std.split(o, '=')[0] for o in $.overrides(ctx)];
      (if std.primitiveEquals(row, null) then [] else [{
         code: 'mergeLora.arguments',
         pointer: '/spec/stages/train/mode',
         message: 'the LoRA merge (' + table.confPath + ') at NeMo ' + tag + ' has no key ' + k,
       } for k in keys if !has(row.conf, k)])
      + (if !std.primitiveEquals(row, null) && std.primitiveEquals(row.loadsBaseAt, 'base') && !std.objectHasEx(ctx.spec.stages, 'pretrain', false) && std.objectHasEx(ctx.spec.model, 'source', false) && std.objectHasEx(ctx.spec.model.source, 'nemo', false) then [{
           code: 'mergeLora.base-parallelism',
           severity: 'warning',
           pointer: '/spec/model/source/nemo',
           message: 'NeMo ' + tag + "'s LoRA merge restores the base model at the tensor and pipeline "
                    + 'parallelism it was saved with, on one GPU: ' + ctx.spec.model.source.nemo
                    + ' must be saved with tensor and pipeline parallelism 1',
           hint: 'use a NeMo 24.12 (v2.1.0) or newer image, which merges any base at TP1 PP1',
         }] else [])
      // The base is the chain's pretraining output, saved at the
      // parallelism nemoc generated: known, so a certain failure.
      + (if !std.primitiveEquals(row, null) && std.primitiveEquals(row.loadsBaseAt, 'base') && std.objectHasEx(ctx.spec.stages, 'pretrain', false)
            && ctx.spec.stages.pretrain.parallelism.tensor * ctx.spec.stages.pretrain.parallelism.pipeline > 1 then [{
           code: 'mergeLora.base-parallelism',
           pointer: '/spec/stages/pretrain/parallelism',
           atKey: true,
           message: 'NeMo ' + tag + "'s LoRA merge restores the base model at the tensor and pipeline "
                    + 'parallelism it was saved with, on one GPU, and spec.stages.pretrain saves it at tensor '
                    + ctx.spec.stages.pretrain.parallelism.tensor + ' x pipeline ' + ctx.spec.stages.pretrain.parallelism.pipeline,
           hint: 'use a NeMo 24.12 (v2.1.0) or newer image, which merges any base at TP1 PP1',
         }] else []),

  // The merge Job, built once per target: nemoc.libsonnet binds it as
  // ctx.mergeBuilt, which files() emits and the readers hash (C5: a new
  // adapter re-runs what reads the merged model).
  // State of the merged model (paths.libsonnet, F15): the overrides (base,
  // adapter) with the output left out, the image.
  state(ctx):: paths.stateHash({ image: k8s.imageRef(ctx.spec.stages.train.image), argv: $.args(paths.drafting(ctx, 'mergeLora')) }),

  built(ctx)::
    local m = $.settings(ctx);
    local placement = pod.placementFor(ctx, 'mergeLora');
    local run = pod.runOnce(paths.doneMarker(paths.mergeDir(ctx)), [paths.mergeDir(ctx)], $.args(ctx));
    local container = pod.container(ctx,
                                    'merge-lora',
                                    ctx.spec.stages.train.image,
                                    placement,
                                    gpus=m.gpus,
                                    resources=m.resources) + run;
    pod.job(ctx, $.jobName(ctx), $.component, placement, container, upstream=pod.upstreamTraining(ctx)),

  files(ctx):: k8s.file($.dir, ctx.mergeBuilt),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.mergeDir(ctx),

  summary(ctx)::
    'LoRA adapter ' + paths.trainedNemo(ctx) + ' merged into ' + paths.restoreNemo(ctx) + ' -> '
    + paths.mergedNemo(ctx) + ' (on ' + (if std.primitiveEquals($.settings(ctx).gpus, 0) then 'CPU' else '1 GPU')
    + '; read by ' + std.join(' and ', $.readers(ctx)) + ')',
}
