// 50-convert: the .nemo checkpoint -> a HuggingFace checkpoint with NeMo's
// per-family converter (libsonnet/models.json; seed 001's "NeMo to HuggingFace" step), for the
// TensorRT-LLM build and for users who want the weights elsewhere.
local hf = import 'huggingface.libsonnet';
local k8s = import 'k8s.libsonnet';
local paths = import 'paths.libsonnet';
local order = import 'stages/order.libsonnet';
local pod = import 'stages/pod.libsonnet';

{
  dir: order.dir.convert,
  component: 'convert',

  jobName(ctx):: k8s.boundedName(ctx.project + '-convert', 63),

  args(ctx)::
    local convert = ctx.spec.stages.convert;
    local model = ctx.spec.model;
    local out = paths.huggingfaceDir(ctx);
    [
      'python3',
      model.converters.toHuggingface,
      '--input_name_or_path=' + paths.nemoCheckpoint(ctx, convert),
      '--output_path=' + out + '/pytorch_model.bin',
      // Config and tokenizer of the original HuggingFace model; the weights are ours.
      '--hf_input_path=' + model.huggingface,
      '--hf_output_path=' + out,
      '--input_tokenizer=' + model.huggingface,
      '--hf_output_tokenizer=' + out,
      '--precision=' + convert.precision,
    ] + (if convert.gpus == 0 then ['--cpu-only'] else []),

  files(ctx)::
    local convert = ctx.spec.stages.convert;
    local placement = pod.placementFor(ctx, 'convert');
    local run = pod.mkdirThenExec([paths.huggingfaceDir(ctx)], $.args(ctx));
    local container = pod.container(ctx,
                                    'convert',
                                    convert.image,
                                    placement,
                                    gpus=convert.gpus,
                                    resources=convert.resources,
                                    envRefs=hf.env(ctx)) + run;
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container, upstream=pod.upstreamTraining(ctx))),

  summary(ctx)::
    local convert = ctx.spec.stages.convert;
    paths.nemoCheckpoint(ctx, convert) + ' -> HuggingFace ' + paths.huggingfaceDir(ctx),
}
