// 20-data-prep: JSONL on the data volume -> Megatron indexed datasets
// (.bin/.idx) with NeMo's preprocess_data_for_megatron.py, as the NeMo
// launcher's data preparation does. The output prefix comes from
// paths.libsonnet, where training reads it (data: {fromDataPrep: true}).
local hf = import 'nemoc/huggingface.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';

{
  dir: order.dir.dataPrep,
  component: 'data-prep',
  script: '/opt/NeMo/scripts/nlp_language_modeling/preprocess_data_for_megatron.py',

  jobName(ctx):: k8s.boundedName(ctx.project + '-data-prep', 63),

  tokenizerArgs(tokenizer)::
    ['--tokenizer-library=' + tokenizer.library]
    + (if std.objectHasEx(tokenizer, 'type', false) then ['--tokenizer-type=' + tokenizer.type] else [])
    + (if std.objectHasEx(tokenizer, 'model', false) then ['--tokenizer-model=' + tokenizer.model] else []),

  args(ctx)::
    local prep = ctx.spec.stages.dataPrep;
    [
      'python3',
      $.script,
      '--input=' + paths.dataFile(ctx, prep.input),
      '--json-keys=' + prep.jsonKey,
      '--dataset-impl=mmap',
      '--output-prefix=' + paths.preparedOutputPrefix(ctx),
      '--workers=' + prep.workers,
      '--append-eod',
    ] + $.tokenizerArgs(ctx.spec.model.tokenizer),

  // The prepared set's state (paths.libsonnet, F15/F16): the arguments with
  // its own directory left out, the image and the spec's version of the
  // input (nemoc cannot see the file's content: a new version is new data).
  state(ctx)::
    local prep = ctx.spec.stages.dataPrep;
    paths.stateHash({ image: k8s.imageRef(prep.image), argv: $.args(paths.drafting(ctx, 'dataPrep')) }
                    + (if std.objectHasEx(prep, 'version', false) then { version: prep.version } else {})),

  files(ctx)::
    local prep = ctx.spec.stages.dataPrep;
    local placement = pod.placementFor(ctx, 'dataPrep');
    local run = pod.runOnce(paths.doneMarker(paths.preparedDir(ctx)), [paths.preparedDir(ctx)], $.args(ctx));
    local container = pod.container(ctx,
                                    'data-prep',
                                    prep.image,
                                    placement,
                                    resources=prep.resources,
                                    envRefs=hf.env(ctx)) + run;
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container)),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.preparedDir(ctx),

  summary(ctx):: 'JSONL ' + paths.dataFile(ctx, ctx.spec.stages.dataPrep.input)
                 + ' -> Megatron indexed dataset ' + paths.preparedDataset(ctx, ctx.spec.stages.dataPrep),
}
