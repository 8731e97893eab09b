// 40-evaluate: lm-evaluation-harness tasks against the trained .nemo with
// the NeMo Framework Launcher's eval_harness adapter, which ships in the NeMo
// Framework container. The checkpoint path comes from paths.libsonnet (the
// .nemo training saves at the end, or the stage's own `checkpoint`).
local hf = import 'huggingface.libsonnet';
local k8s = import 'k8s.libsonnet';
local paths = import 'paths.libsonnet';
local order = import 'stages/order.libsonnet';
local pod = import 'stages/pod.libsonnet';

{
  dir: order.dir.evaluate,
  component: 'evaluate',
  script: '/opt/NeMo-Framework-Launcher/launcher_scripts/nemo_launcher/collections/eval_harness/evaluate.py',

  // The adapter's model class per model family (lm_eval/models/__init__.py);
  // nemo-gpt3 loads any other Megatron GPT .nemo.
  harnessModels: { llama: 'nemo-llama' },
  harnessModel(model)::
    if std.objectHasEx(model, 'family', false) && std.objectHasEx($.harnessModels, model.family, false)
    then $.harnessModels[model.family] else 'nemo-gpt3',

  jobName(ctx):: k8s.boundedName(ctx.project + '-evaluate', 63),

  gpus(evaluate):: evaluate.tensorParallel * evaluate.pipelineParallel,

  args(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    [
      'torchrun',
      '--standalone',
      '--nproc-per-node=' + $.gpus(evaluate),
      $.script,
      '--name=' + ctx.project,
      '--model=' + $.harnessModel(ctx.spec.model),
      '--nemo_model=' + paths.nemoCheckpoint(ctx, evaluate),
      '--tasks=' + std.join(',', evaluate.tasks),
      '--batch_size=' + evaluate.batchSize,
      '--tensor_model_parallel_size=' + evaluate.tensorParallel,
      '--pipeline_model_parallel_size=' + evaluate.pipelineParallel,
      '--precision=bf16',
      '--output_path=' + paths.evaluateDir(ctx),
      '--cache_dir=' + paths.evaluateDir(ctx) + '/cache',
    ],

  files(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    local placement = pod.placementFor(ctx, 'evaluate');
    local run = pod.mkdirThenExec([paths.evaluateDir(ctx) + '/cache'], $.args(ctx));
    local container = pod.container(ctx,
                                    'evaluate',
                                    evaluate.image,
                                    placement,
                                    gpus=$.gpus(evaluate),
                                    resources=evaluate.resources,
                                    envRefs=hf.env(ctx)) + run;
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container, upstream=pod.upstreamCheckpoint(ctx, evaluate))),

  summary(ctx)::
    local evaluate = ctx.spec.stages.evaluate;
    'lm-eval-harness ' + std.join(', ', evaluate.tasks) + ' on ' + paths.nemoCheckpoint(ctx, evaluate)
    + ' (' + $.gpus(evaluate) + ' GPUs, results in ' + paths.evaluateDir(ctx) + ')',
}
