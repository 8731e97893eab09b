// 25-import-model: a HuggingFace model (spec.model.source.huggingface) ->
// the .nemo fine-tuning starts from, with NeMo's per-family converter
// (libsonnet/models.json), before training. The output path comes from
// paths.libsonnet, where the NeMo config's restore_from_path points.
local hf = import 'huggingface.libsonnet';
local k8s = import 'k8s.libsonnet';
local paths = import 'paths.libsonnet';
local order = import 'stages/order.libsonnet';
local pod = import 'stages/pod.libsonnet';

{
  dir: order.dir.importModel,
  component: 'import-model',

  jobName(ctx):: k8s.boundedName(ctx.project + '-import-model', 63),

  enabled(ctx)::
    std.objectHasEx(ctx.spec.stages, 'train', false)
    && std.objectHasEx(ctx.spec.model, 'source', false)
    && std.objectHasEx(ctx.spec.model.source, 'huggingface', false),

  args(ctx)::
    local model = ctx.spec.model;
    [
      'python3',
      model.converters.fromHuggingface,
      '--input_name_or_path=' + model.source.huggingface,
      '--output_path=' + paths.importedNemo(ctx),
      '--precision=bf16',
    ],

  files(ctx)::
    local placement = pod.placementFor(ctx, 'importModel');
    local run = pod.mkdirThenExec([paths.importDir(ctx)], $.args(ctx));
    local container = pod.container(ctx,
                                    'import-model',
                                    ctx.spec.stages.train.image,
                                    placement,
                                    envRefs=hf.env(ctx)) + run;
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container)),

  summary(ctx):: 'HuggingFace ' + ctx.spec.model.source.huggingface + ' -> ' + paths.importedNemo(ctx),
}
