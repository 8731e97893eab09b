// Entry point. nemoc calls build() once per spec with the normalized spec
// and the profiles its targets name; the result maps each target to its
// files ("<stage-dir>/<kind>-<name>.yaml" -> object), the diagnostics its
// profile raised (located by JSON pointer into the spec) and summary facts.
local k8s = import 'k8s.libsonnet';
local runtimes = import 'runtimes/runtimes.libsonnet';
local base = import 'stages/base.libsonnet';
local train = import 'stages/train.libsonnet';
local storage = import 'storage.libsonnet';

{
  // libjsonnet 0.18 re-evaluates an object field on every access; values
  // bound to function locals are evaluated once. ctx is read everywhere, so
  // every field that computes something is a local here.
  context(spec, profile, target, index)::
    local runtime = if std.objectHas(target, 'runtime') then target.runtime else profile.defaults.runtime;
    // nemoc's own labels win over the user's.
    local labels = spec.metadata.labels {
      'app.kubernetes.io/managed-by': 'nemoc',
      'app.kubernetes.io/part-of': spec.metadata.name,
      'nemoc.dev/target': target.name,
    };
    {
      project: spec.metadata.name,
      namespace: spec.spec.namespace,
      spec: spec.spec,
      target: target,
      targetPointer: '/spec/targets/' + index,
      profile: profile,
      runtime: runtime,
      runtimeImpl: runtimes[runtime],
      storage: target.storage,
      storagePointer: target.storage.pointer,
      serviceAccountName: spec.spec.serviceAccount.name,
      annotations: spec.metadata.annotations,
      labels: labels,
    },

  stages(ctx):: [base.files(ctx)]
                + (if std.objectHas(ctx.spec.stages, 'train') then [train.files(ctx)] else []),

  buildTarget(spec, profiles, target, index)::
    local ctx = $.context(spec, profiles[target.profile], target, index);
    local diagnostics = ctx.profile.diagnostics(ctx);
    // A target its profile rejected is not expanded further: its objects
    // would be built from facts that do not exist (an unknown instance type).
    local rejected = std.length([d for d in diagnostics if !std.objectHas(d, 'severity') || d.severity == 'error']) > 0;
    {
      diagnostics: diagnostics,
      files: if rejected then {} else k8s.files($.stages(ctx)),
      summary: if rejected then {} else {
        profile: target.profile,
        accelerator: ctx.profile.accelerator(ctx),
        storage: storage.describeAll(ctx),
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
