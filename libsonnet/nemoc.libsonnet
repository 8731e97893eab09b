// Entry point. nemoc calls build() once per spec with the normalized spec
// and the profiles its targets name; the result maps each target to its
// files ("<stage-dir>/<kind>-<name>.yaml" -> object), the diagnostics its
// profile raised (located by JSON pointer into the spec) and summary facts.
local gitops = import 'gitops.libsonnet';
local k8s = import 'k8s.libsonnet';
local runtimes = import 'runtimes/runtimes.libsonnet';
local base = import 'stages/base.libsonnet';
local train = import 'stages/train.libsonnet';
local storage = import 'storage.libsonnet';

{
  context(spec, profile, target, index):: {
    project: spec.metadata.name,
    namespace: spec.spec.namespace,
    spec: spec.spec,
    target: target,
    targetPointer: '/spec/targets/' + index,
    profile: profile,
    runtime: if std.objectHas(target, 'runtime') then target.runtime else profile.defaults.runtime,
    runtimeImpl: runtimes[self.runtime],
    storage: target.storage,
    storagePointer: target.storage.pointer,
    serviceAccountName: spec.spec.serviceAccount.name,
    annotations: spec.metadata.annotations,
    // nemoc's own labels win over the user's.
    labels: spec.metadata.labels {
      'app.kubernetes.io/managed-by': 'nemoc',
      'app.kubernetes.io/part-of': spec.metadata.name,
      'nemoc.dev/target': target.name,
    },
  },

  stages(ctx):: [base.files(ctx)]
                + (if std.objectHas(ctx.spec.stages, 'train') then [train.files(ctx)] else []),

  buildTarget(spec, profiles, target, index)::
    local ctx = $.context(spec, profiles[target.profile], target, index);
    local diagnostics = ctx.profile.diagnostics(ctx);
    // A target its profile rejected is not expanded further: its objects
    // would be built from facts that do not exist (an unknown instance type).
    local rejected = std.length([d for d in diagnostics if !std.objectHas(d, 'severity') || d.severity == 'error']) > 0;
    local stageFiles = if rejected then {} else k8s.files($.stages(ctx));
    {
      diagnostics: diagnostics,
      files: if rejected then {} else gitops.files(ctx, stageFiles),
      summary: if rejected then {} else {
        profile: target.profile,
        accelerator: ctx.profile.accelerator(ctx),
        storage: storage.describeAll(ctx),
      } + (if std.objectHas(ctx.spec.stages, 'train') then { train: train.summary(ctx) } else {})
      + (if gitops.enabled(ctx) then { gitops: gitops.summary(ctx, stageFiles) } else {}),
    },

  build(spec, profiles, only_target):: {
    local targets = spec.spec.targets,
    targets: {
      [targets[i].name]: $.buildTarget(spec, profiles, targets[i], i)
      for i in std.range(0, std.length(targets) - 1)
      if only_target == '' || targets[i].name == only_target
    },
  },
}
