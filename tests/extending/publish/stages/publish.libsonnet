// 55-publish, a stage of your own (docs/stages.md): the HuggingFace checkpoint
// 50-convert wrote, uploaded to a Hugging Face Hub repository with
// huggingface_hub's CLI: `huggingface-cli upload <repo_id> <local_path>
// <path_in_repo>` with path_in_repo `.` (the repository's root) and
// --private (huggingface_hub v0.27.1 src/huggingface_hub/commands/upload.py:
// 68-99: --private applies when the upload creates the repository, "Ignored
// if the repo already exists"); the token from HF_TOKEN (utils/_auth.py:42,
// read before any token file). Described by publish.stage.json beside it;
// built with the helpers every built-in stage uses.
local k8s = import 'nemoc/k8s.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';

{
  dir: order.dir.publish,
  component: 'publish',

  jobName(ctx):: k8s.boundedName(ctx.project + '-publish', 63),

  args(ctx)::
    local p = ctx.spec.stages.publish;
    ['huggingface-cli', 'upload', p.repo, paths.huggingfaceDir(ctx), '.']
    + (if p.private then ['--private'] else []),

  // Content-addressed (F15): a new checkpoint (its directory hashes the
  // conversion's state) or another repository is a new record directory, so
  // the upload runs once per checkpoint and a revert does not upload again.
  state(ctx):: paths.stateHash({ image: k8s.imageRef(ctx.spec.stages.publish.image), argv: $.args(ctx) }),
  stateDir(ctx):: paths.stateDir(ctx, 'publish', 'publish'),

  files(ctx)::
    local p = ctx.spec.stages.publish;
    local placement = pod.placementFor(ctx, 'publish');
    local record = $.stateDir(ctx);
    local run = pod.runOnce(paths.doneMarker(record), [record], ['bash', '-c', 'set -o pipefail; "$@" | tee "$0/upload.log"', record] + $.args(ctx));
    local token = { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: p.tokenSecret, key: 'token' } } };
    local container = pod.container(ctx, 'publish', p.image, placement, envRefs=[token]) + run;
    // Its name hashes the conversion Job's: a new checkpoint is a new Job.
    k8s.file($.dir, pod.job(ctx, $.jobName(ctx), $.component, placement, container, upstream=[ctx.convertBuilt.metadata.name])),

  diagnostics(ctx)::
    if !std.objectHasEx(ctx.spec.stages, 'publish', false) || ctx.spec.stages.publish.private then [] else [{
      pointer: '/spec/stages/publish/private',
      severity: 'warning',
      code: 'publish.public',
      message: 'spec.stages.publish.private is false: if the upload creates huggingface.co/' + ctx.spec.stages.publish.repo + ', the weights of ' + ctx.project + ' are public',
      hint: 'remove it to create the repository private (an existing repository keeps its visibility)',
    }],

  summary(ctx)::
    local p = ctx.spec.stages.publish;
    paths.huggingfaceDir(ctx) + ' -> https://huggingface.co/' + p.repo + (if p.private then ' (private)' else ' (public)'),
}
