// Entry point. nemoc calls build() once per spec with the normalized spec,
// the profiles its targets name and the runtimes (every built-in one, plus
// those of --jpath directories its targets name); the result maps each
// target to its files ("<stage-dir>/<kind>-<name>.yaml" -> object), the
// diagnostics its profile raised (located by JSON pointer into the spec),
// summary facts and the pod-name suffix of each runtime workload file.
local gitops = import 'nemoc/gitops.libsonnet';
local health = import 'nemoc/health.libsonnet';
local platform = import 'nemoc/platform.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local hf = import 'nemoc/huggingface.libsonnet';
local kueue = import 'nemoc/kueue.libsonnet';
local nemo2 = import 'nemoc/nemo/nemo2.libsonnet';
local pod = import 'nemoc/stages/pod.libsonnet';
local chain = import 'nemoc/stages/chain.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local storage = import 'nemoc/storage.libsonnet';

// Stage key -> its library (stages/<key>.stage.json `library`): files(ctx),
// summary(ctx), and optionally enabled(ctx), diagnostics(ctx), state(ctx),
// stateDir(ctx) -- docs/stages.md.
local builders = order.libraries;
// What buildTarget's chain of states reads by name: the built-in stages whose
// output a later built-in stage hashes (F15) or reads as built objects.
local train = builders.train;
local mergeLora = builders.mergeLora;
local convert = builders.convert;
// Stage key -> its place in order.stages.
local stageIndex = { [order.stages[i].key]: i for i in std.range(0, std.length(order.stages) - 1) };
// A training stage is built with ctx.trainKey naming it (stages/chain.libsonnet).
local stageCtx(ctx, s) = if s.training then chain.at(ctx, s.key) else ctx;
// The stages whose library raises diagnostics, each library once (pretrain
// and train share theirs).
local diagnosing = [s for s in order.stages if !s.sharesLibrary && std.objectHasEx(builders[s.key], 'diagnostics', true)];
// The stages buildTarget's chain computes the states of, in order; a stage of
// your own (a --jpath description) that writes state gets it after them
// (ownStates). Both computed once per evaluation: std.member and `==` are
// Jsonnet code in libjsonnet 0.18 (bench/RESULTS.md, session 31).
local chained = { dataPrep: true, importModel: true, pretrain: true, train: true, mergeLora: true, evaluate: true, convert: true, tensorrtLLM: true };
local ownStates = [s for s in order.stages if !std.objectHasEx(chained, s.key, false) && std.objectHasEx(builders[s.key], 'state', true)];

{
  // libjsonnet 0.18 re-evaluates an object field on every access; values
  // bound to function locals are evaluated once. ctx is read everywhere, so
  // every field that computes something is a local here.
  context(spec, profile, runtimes, target, index, kinds=null)::
    local runtime = if std.objectHasEx(target, 'runtime', false) then target.runtime else profile.defaults.runtime;
    local runtimeImpl = if std.objectHasEx(runtimes, runtime, false) then runtimes[runtime]
    else error ('profile ' + profile.name + ' runs runtime ' + runtime + ' by default, which no library root has '
                + '(nemoc checks a --jpath profile\'s default before expanding)');
    local workloadKinds = if std.primitiveEquals(kinds, null) then $.workloadKindsOf(runtimes) else kinds;
    local platformKinds = platform.byKind + std.foldl(function(acc, r) acc + runtimes[r].platform, std.objectFields(runtimes), {});
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
      runtimeImpl: runtimeImpl,
      runtimes: runtimes,
      workloadKinds: workloadKinds,
      platformKinds: platformKinds,
      storage: target.storage,
      storagePointer: target.storage.pointer,
      serviceAccountName: spec.spec.serviceAccount.name,
      annotations: spec.metadata.annotations,
      labels: labels,
    },

  // The stages this spec asks for, in pipeline order: 00-base always; a
  // builder with enabled(ctx) decides itself (implied stages), the others
  // run when spec.stages names them.
  present(ctx, key)::
    local s = order.stages[stageIndex[key]];
    if std.primitiveEquals(s.present, 'always') then true
    else if std.primitiveEquals(s.present, 'implied') then builders[key].enabled(ctx)
    else std.objectHasEx(ctx.spec.stages, key, false),

  stages(ctx):: [builders[s.key].files(stageCtx(ctx, s)) for s in order.stages if $.present(ctx, s.key)],

  // One line per stage for SUMMARY.md (training has its own rows).
  // A training chain's stages get a line each (train.chainSummary).
  stageSummaries(ctx):: {
    [s.dir]: builders[s.key].summary(ctx)
    for s in order.stages
    if s.summaryLine && $.present(ctx, s.key)
  } + (if std.length(chain.present(ctx)) > 1 then {
         [order.dir[k]]: train.chainSummary(chain.at(ctx, k))
         for k in chain.present(ctx)
       } else {}),

  // Stage directory -> the directory it writes (paths.libsonnet state hashes,
  // F15): SUMMARY.md's "State directories".
  stateDirs(ctx):: {
    [s.dir]: builders[s.key].stateDir(stageCtx(ctx, s))
    for s in order.stages
    if std.objectHasEx(ctx.states, s.key, false)
  },

  // What GitOps and the platform bundle read about every runtime's kinds
  // (runtime.libsonnet: workload.health, platform), with the core kinds'.
  // Two runtimes may emit one kind (a runtime of your own reusing JobSet),
  // judged the same way: one Argo CD health check serves the cluster.
  // Computed once per spec by build() (per target it was +0.7 % of an
  // evaluation's instructions); context() computes it when called alone.
  workloadKindsOf(runtimes)::
    std.foldl(
      function(acc, r)
        local w = runtimes[r].workload;
        local h = health.normalized(r, w.health);
        if std.primitiveEquals(h, null) then acc
        else if std.objectHasEx(acc, w.kind, false) && acc[w.kind] != h
        then error ('runtime ' + r + ' judges ' + w.kind + ' otherwise than another runtime or gitops.libsonnet: '
                    + 'one kind has one health (workload.health)')
        else acc + { [w.kind]: h },
      std.objectFields(runtimes),
      gitops.coreWorkloads
    ),

  buildTarget(spec, profiles, runtimes, target, index, kinds=null)::
    local base = $.context(spec, profiles[target.profile], runtimes, target, index, kinds);
    // What several stages read, computed once per target: a local is
    // evaluated once, an object field (or function call) on every access.
    // The profile's placements are plain data (std.parseJson of their
    // serialisation: reading their fields again costs nothing); the training
    // workload is hashed and built once (the train stage emits it, monitoring
    // selects its pods by its name).
    local localPlacement = std.parseJson('' + base.profile.localPlacement(base));
    local placement = std.parseJson('' + base.profile.placement(base, base.runtimeImpl));
    local placed = base { localPlacement: localPlacement, placement: placement };
    // F15: each stage's state hash (paths.libsonnet), in pipeline order: a
    // stage's state hashes the directories it reads, which carry the states
    // before it. Bound once (ctx.states); every path reads it from there.
    // Each state is a local (computed once) and ctx.states plain data: an
    // object field that calls a function calls it on every access.
    local stateOf(ctx, key) = if $.present(ctx, key) then (local state = builders[key].state(ctx); { [key]: state }) else {};
    local states0 = stateOf(placed, 'dataPrep');
    local withData = placed { states: states0 };
    local states1 = states0 + stateOf(withData, 'importModel');
    local withPlacements = placed { states: states1 };
    // A chain's stages in order: a stage's name hashes its predecessor's.
    // Each stage gets the profile's placement for its own image (gke-a4's gIB
    // plugin must match the image's NCCL, B12).
    local pretrainBuilt = if !std.objectHasEx(spec.spec.stages, 'pretrain', false) then null else
      local at = chain.at(base, 'pretrain');
      train.built(chain.at(withPlacements, 'pretrain') { placement: std.parseJson('' + base.profile.placement(at, base.runtimeImpl)) });
    local states2 = states1 + (if std.primitiveEquals(pretrainBuilt, null) then {} else { pretrain: pretrainBuilt.state });
    local withPretrain = withPlacements { trainingBuilt: { pretrain: pretrainBuilt }, states: states2 };
    local trainBuilt = if std.objectHasEx(spec.spec.stages, 'train', false) then train.built(chain.at(withPretrain, 'train')) else null;
    local states3 = states2 + (if std.primitiveEquals(trainBuilt, null) then {} else { train: trainBuilt.state });
    local trained = withPretrain { trainBuilt: trainBuilt, trainingBuilt: { pretrain: pretrainBuilt, train: trainBuilt }, states: states3 };
    local states4 = states3 + stateOf(trained, 'mergeLora');
    local withTrain = trained { states: states4 };
    // The LoRA merge Job, built once: it emits it, evaluate and convert hash
    // its name and read its output (paths.nemoCheckpoint).
    local mergeBuilt = if $.present(withTrain, 'mergeLora') then mergeLora.built(withTrain) else null;
    local merged = withTrain { mergeBuilt: mergeBuilt };
    local states5 = states4 + stateOf(merged, 'evaluate') + stateOf(merged, 'convert');
    local withMerge = merged { states: states5 };
    // The conversion Job, built once: the convert stage emits it, the engine
    // build hashes its name.
    local convertBuilt = if $.present(withMerge, 'convert') then convert.built(withMerge) else null;
    local converted = withMerge { convertBuilt: convertBuilt };
    local states6 = states5 + stateOf(converted, 'tensorrtLLM');
    // The stages of your own that write state, after the built-in chain, in
    // order (each sees the states before it).
    local states7 = std.foldl(
      function(acc, s) acc + stateOf(converted { states: acc }, s.key),
      ownStates,
      states6
    );
    local ctx = converted { states: states7 };
    local diagnostics = ctx.profile.diagnostics(ctx) + platform.diagnostics(ctx) + kueue.diagnostics(ctx) + hf.diagnostics(ctx)
                        + std.flattenArrays([builders[s.key].diagnostics(ctx) for s in diagnosing])
                        + nemo2.diagnostics(ctx)
                        + pod.stageNodesDiagnostics(ctx) + pod.schedulingDiagnostics(ctx)
                        + gitops.diagnostics(ctx);
    // A target its profile rejected is not expanded further: its objects
    // would be built from facts that do not exist (an unknown instance type).
    local isError(d) = !std.objectHasEx(d, 'severity', false) || std.primitiveEquals(d.severity, 'error');
    local rejected = std.length([d for d in diagnostics if isError(d)]) > 0;
    local workloadFiles = if rejected then {} else k8s.files($.stages(ctx));
    // The Kueue objects sized from the queued workloads (kueue.libsonnet) join 00-base.
    local stageFiles = workloadFiles + std.foldl(function(acc, o) acc + k8s.file(order.dir.base, o), kueue.objects(ctx, workloadFiles), {});
    {
      diagnostics: diagnostics,
      files: if rejected then {} else gitops.files(ctx, stageFiles),
      // Kustomize roots without objects of their own: dir -> resources.
      kustomizations: if rejected then {} else gitops.kustomizations(ctx, stageFiles),
      // File -> what the controllers append to its object's name in pod
      // hostnames, for every file of a runtime's workload kind whose runtime
      // says (runtime.libsonnet podNameSuffix; output_verifier.cc checks it).
      podNameSuffixes: if rejected then {} else
        local owners = $.workloadOwners(runtimes, ctx.runtime);
        local suffixes = [[p, $.podNameSuffixBy(runtimes, owners, stageFiles[p])] for p in std.objectFields(stageFiles)];
        { [s[0]]: s[1] for s in suffixes if !std.primitiveEquals(s[1], null) },
      // A rejected target has no facts. The accelerator is nemoc's (the
      // profile's gpuNode data, read before expansion: compiler/gpu_node.h).
      summary: if rejected then {} else {
        profile: target.profile,
        storage: storage.describeAll(ctx),
        stages: $.stageSummaries(ctx),
        stateDirs: $.stateDirs(ctx),
        // Stage key -> its directory (stages/order.libsonnet): where
        // compiler/object_patches.cc finds the objects a patch names.
        stageDirs: order.dir,
        platform: platform.summary(ctx, stageFiles, gitops.enabled(ctx) && ctx.spec.gitops.platform),
      } + (if std.objectHasEx(ctx.spec.stages, 'train', false) then { train: train.summary(ctx) } else {})
      + (if gitops.enabled(ctx) then { gitops: gitops.summary(ctx, stageFiles) } else {}),
    },

  // A target with overrides (spec.targets[i].overrides) compiles from its
  // own merged, normalized spec, which nemoc passes as spec.targetSpecs[name].
  // The suffix the runtime emitting `o` declares for its pods, or null: the
  // target's runtime when it emits that kind, else the first that does.
  podNameSuffix(runtimes, targetRuntime, o)::
    $.podNameSuffixBy(runtimes, $.workloadOwners(runtimes, targetRuntime), o),
  // Workload kind -> the runtime that emits it (the target's first), as
  // plain data: computed once per target, not once per file and runtime
  // (issue #47).
  workloadOwners(runtimes, targetRuntime)::
    std.parseJson('' + std.foldl(
      function(acc, r)
        local kind = runtimes[r].workload.kind;
        if !std.isString(kind) || std.objectHasEx(acc, kind, false) then acc else acc + { [kind]: r },
      [targetRuntime] + std.objectFields(runtimes), {})),
  podNameSuffixBy(runtimes, owners, o)::
    local key = gitops.workloadKey(o);
    if std.objectHasEx(owners, key, false) then runtimes[owners[key]].podNameSuffix(o) else null,

  build(spec, profiles, runtimes, only_target):: {
    local targets = spec.spec.targets,
    local specs = if std.objectHasEx(spec, 'targetSpecs', false) then spec.targetSpecs else {},
    local specFor(name) = if std.objectHasEx(specs, name, false) then specs[name] else spec,
    local kinds = $.workloadKindsOf(runtimes),
    targets: {
      [targets[i].name]: $.buildTarget(specFor(targets[i].name), profiles, runtimes, specFor(targets[i].name).spec.targets[i], i, kinds)
      for i in std.range(0, std.length(targets) - 1)
      if std.primitiveEquals(only_target, '') || targets[i].name == only_target
    },
  },
}
