// Entry point. nemoc calls build() once per spec with the normalized spec
// and the profiles its targets name; the result maps each target to its
// files ("<stage-dir>/<kind>-<name>.yaml" -> object), the diagnostics its
// profile raised (located by JSON pointer into the spec) and summary facts.
local k8s = import 'k8s.libsonnet';
local base = import 'stages/base.libsonnet';
local train = import 'stages/train.libsonnet';

{
  context(spec, profile, target, index):: {
    project: spec.metadata.name,
    namespace: spec.spec.namespace,
    spec: spec.spec,
    target: target,
    targetPointer: '/spec/targets/' + index,
    profile: profile,
    runtime: if std.objectHas(target, 'runtime') then target.runtime else profile.defaults.runtime,
    storage: target.storage,
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
    {
      files: k8s.files($.stages(ctx)),
      diagnostics: ctx.profile.diagnostics(ctx),
      summary: {
        profile: target.profile,
        storage: ctx.profile.describeStorage(ctx),
      } + (if std.objectHas(ctx.spec.stages, 'train') then { train: train.summary(ctx) } else {}),
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
