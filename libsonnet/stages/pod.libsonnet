// Pods of the single-node stages (data preparation, evaluation, conversion,
// the TensorRT-LLM build and Triton): the profile's localPlacement gives
// node selection, tolerations, storage and the Kueue queue; this file adds
// the hardening every stage pod gets. Training and the NCCL preflight build
// their pods in stages/train.libsonnet instead (multi-node fabric).
local job = import 'nemoc/job.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local kueue = import 'nemoc/kueue.libsonnet';

{
  // NCCL inside one node and PyTorch data loaders need more than the 64Mi default.
  shmSize:: '64Gi',
  // Stage Jobs retry twice: each one redoes its whole work from shared storage.
  backoffLimit:: 2,

  // The placement of one single-node stage (stages/order.libsonnet key): the
  // profile's localPlacement on the target's stageNodes for it, if any (B19:
  // a 1-GPU stage need not hold a training instance).
  placementFor(ctx, key):: $.scheduled(ctx, $.nodesFor(ctx, key), key),

  // The profile's localPlacement on the target's stageNodes for stage `key`.
  nodesFor(ctx, key)::
    local p = ctx.localPlacement;
    local all = if std.objectHasEx(ctx.target, 'stageNodes', false) then ctx.target.stageNodes else {};
    if !std.objectHasEx(all, key, false) then p
    else
      // The profile turns the entry into node labels (stageNodeSelector:
      // eks-efa's instanceType is its node.kubernetes.io/instance-type).
      p { nodeSelector: ctx.profile.stageNodeSelector(ctx, all[key]) },

  // D3: the spec's scheduling additions for stage `key` (schemas/
  // project.schema.json scheduling): spec.scheduling, then
  // stages.<key>.scheduling -- tolerations appended, maps merged with the
  // stage's value winning, priorityClassName and affinity the stage's if it
  // has them. A target's overrides and environment reach both through its
  // merged spec.
  scheduling(ctx, key)::
    local all = std.get(ctx.spec, 'scheduling', {});
    local stage = std.get(std.get(ctx.spec.stages, key, {}), 'scheduling', {});
    {
      tolerations: std.get(all, 'tolerations', []) + std.get(stage, 'tolerations', []),
      nodeSelector: std.get(all, 'nodeSelector', {}) + std.get(stage, 'nodeSelector', {}),
      labels: std.get(all, 'labels', {}) + std.get(stage, 'labels', {}),
      annotations: std.get(all, 'annotations', {}) + std.get(stage, 'annotations', {}),
      priorityClassName: std.get(stage, 'priorityClassName', std.get(all, 'priorityClassName', null)),
      affinity: std.get(stage, 'affinity', std.get(all, 'affinity', null)),
    },

  // `placement` (the profile's) with the scheduling additions of stage
  // `key`, and the spec's patches of that stage, which the stage's workload
  // name hashes (F15: the object-name hash covers everything in the object,
  // and compiler/object_patches.cc patches the objects after expansion).
  // Neither reaches a state hash (paths.libsonnet): a scheduling-only change
  // replaces the workload and resumes in the same directory.
  scheduled(ctx, placement, key)::
    local s = $.scheduling(ctx, key);
    placement {
      nodeSelector: placement.nodeSelector + s.nodeSelector,
      tolerations: placement.tolerations + s.tolerations,
      annotations: placement.annotations + s.annotations,
      podLabels: std.get(placement, 'podLabels', {}) + s.labels,
      affinity: s.affinity,
      priorityClassName: s.priorityClassName,
      patches: $.patchesOf(ctx, key),
    },

  // The spec's patches of stage `key`'s objects: name -> patch.
  patchesOf(ctx, key)::
    local all = std.get(ctx.spec, 'patches', {});
    { [n]: all[n] for n in std.objectFields(all) if all[n].target.stage == key },

  // What a workload's name hashes besides its content: its stage's patches,
  // absent when there are none (names of unpatched workloads stay).
  patchDeterminants(placement)::
    local patches = std.get(placement, 'patches', {});
    if std.primitiveEquals(std.length(patches), 0) then {} else { patches: patches },

  // The scheduling fields of a pod spec from a placement.
  schedulingSpec(placement)::
    (if !std.primitiveEquals(std.get(placement, 'affinity', null), null) then { affinity: placement.affinity } else {})
    + (if !std.primitiveEquals(std.get(placement, 'priorityClassName', null), null) then { priorityClassName: placement.priorityClassName } else {}),

  // Scheduling additions that would undo what nemoc or the profile set: a
  // node selector or annotation the placement has with another value, a
  // label nemoc's own (ownership, component, Kueue's queue).
  schedulingDiagnostics(ctx)::
    local escape(k) = std.strReplace(std.strReplace(k, '~', '~0'), '/', '~1');
    local ownLabel(k) = std.startsWith(k, 'app.kubernetes.io/') || std.startsWith(k, 'nemoc.dev/') || std.startsWith(k, 'kueue.x-k8s.io/')
                        || std.objectHasEx(ctx.labels, k, false);
    local training = ['pretrain', 'train'];
    local placementOf(key) = if std.member(training, key) then ctx.placement else $.nodesFor(ctx, key);
    // [pointer of the scheduling block, the placements it applies to]
    local stages = ctx.spec.stages;
    local keyed = [k for k in std.objectFields(stages) if std.isObject(stages[k]) && std.objectHasEx(stages[k], 'scheduling', false)];
    local blocks = (if std.objectHasEx(ctx.spec, 'scheduling', false)
                    then [['/spec/scheduling', ctx.spec.scheduling, [ctx.localPlacement, ctx.placement]]] else [])
                   + [['/spec/stages/' + k + '/scheduling', stages[k].scheduling, [placementOf(k)]] for k in keyed];
    std.flattenArrays([
      local pointer = b[0], s = b[1], placements = b[2];
      [
        {
          code: 'spec.scheduling-conflict',
          pointer: pointer + '/labels/' + escape(k),
          atKey: true,
          message: 'label ' + k + ' is one nemoc sets itself (ownership, the stage component or the Kueue queue) and cannot be set here',
          hint: 'spec.metadata.labels adds labels to every object; pod labels here need another key',
        }
        for k in std.objectFields(std.get(s, 'labels', {}))
        if ownLabel(k)
      ] + [
        {
          code: 'spec.scheduling-conflict',
          pointer: pointer + '/nodeSelector/' + escape(k),
          atKey: true,
          message: 'node selector ' + k + ' is ' + std.join(' or ', k8s.stringSet([p.nodeSelector[k] for p in placements if std.objectHasEx(p.nodeSelector, k, false)]))
                   + " in the target's placement; " + s.nodeSelector[k] + ' would move the pods off the nodes nemoc sized them for',
          hint: "set the target's nodeSelector (or stageNodes) instead",
        }
        for k in std.objectFields(std.get(s, 'nodeSelector', {}))
        if std.length([p for p in placements if std.objectHasEx(p.nodeSelector, k, false) && p.nodeSelector[k] != s.nodeSelector[k]]) > 0
      ] + [
        {
          code: 'spec.scheduling-conflict',
          pointer: pointer + '/annotations/' + escape(k),
          atKey: true,
          message: 'annotation ' + k + ' is set by profile ' + ctx.profile.name + ' (the pods need its value) and cannot be changed here',
        }
        for k in std.objectFields(std.get(s, 'annotations', {}))
        if std.length([p for p in placements if std.objectHasEx(p.annotations, k, false) && p.annotations[k] != s.annotations[k]]) > 0
      ] + [
        {
          code: 'spec.scheduling-conflict',
          pointer: pointer + '/labels/' + escape(k),
          atKey: true,
          message: 'pod label ' + k + ' is set by profile ' + ctx.profile.name + ' (the pods need its value) and cannot be changed here',
        }
        for k in std.objectFields(std.get(s, 'labels', {}))
        if !ownLabel(k)
           && std.length([p for p in placements if std.objectHasEx(std.get(p, 'podLabels', {}), k, false) && p.podLabels[k] != s.labels[k]]) > 0
      ]
      for b in blocks
    ]),

  // stageNodes rules: an engine runs on the GPU it was built on; nemoc's own
  // Kueue flavor holds the training nodes only; instanceType is EKS's label.
  stageNodesDiagnostics(ctx)::
    local all = if std.objectHasEx(ctx.target, 'stageNodes', false) then ctx.target.stageNodes else {};
    local pointer = ctx.targetPointer + '/stageNodes';
    local nodesOf(key) = if std.objectHasEx(all, key, false) then all[key] else null;
    local stages = ctx.spec.stages;
    (if std.objectHasEx(stages, 'serve', false) && std.objectHasEx(stages, 'tensorrtLLM', false) && nodesOf('serve') != nodesOf('tensorrtLLM') then [{
       code: 'spec.stage-nodes',
       pointer: pointer + (if !std.primitiveEquals(nodesOf('serve'), null) then '/serve' else '/tensorrtLLM'),
       message: 'serve and tensorrtLLM run on different nodes, but a TensorRT-LLM engine runs only on the GPU model it was built on',
       hint: 'give tensorrtLLM the same stageNodes as serve',
     }] else [])
    + (if std.length(std.objectFields(all)) > 0 && std.objectHasEx(ctx.target, 'kueue', false) && ctx.target.kueue.clusterObjects then [{
         code: 'spec.stage-nodes',
         pointer: pointer,
         atKey: true,
         message: "nemoc's Kueue ResourceFlavor covers the training nodes only; a stage on other nodes would never be admitted",
         hint: "use the cluster's ClusterQueue (kueue.covers) or remove stageNodes",
       }] else [])
    + [
      {
        code: 'spec.stage-nodes',
        pointer: pointer + '/' + k + '/instanceType',
        atKey: true,
        message: 'instanceType applies to targets whose profile has an instanceType option (profile ' + ctx.profile.name + ' has none); use nodeSelector',
      }
      for k in std.objectFields(all)
      if std.objectHasEx(all[k], 'instanceType', false) && !std.objectHasEx(ctx.profile.options, 'instanceType', true)
    ],

  // gpus: GPUs of the container (0: none); resources: the stage's cpu/memory.
  // nonRoot: the image has a fixed non-root user (uid), so the pod runs as it.
  // queued: the container runs in a Job that Kueue queues, so it requests
  // only what its ClusterQueue covers (kueue.libsonnet, B3); a Deployment's
  // container is not queued and keeps everything.
  container(ctx, name, image, placement, gpus=0, resources={}, env={}, envRefs=[], mounts=[], nonRoot=null, queued=true)::
    local wanted = (if gpus > 0 then { [ctx.profile.gpuResource]: gpus } else {}) + placement.resources + resources;
    local all = if queued then kueue.admissible(ctx, wanted) else wanted;
    local envList = k8s.envList(placement.env + env) + envRefs;
    {
      name: name,
      image: k8s.imageRef(image),
      imagePullPolicy: image.pullPolicy,
      // Extended resources must be limits; requests = limits everywhere.
      // Memory is requested, not limited: /dev/shm is a Memory emptyDir that counts
      // against a memory limit (B6, see stages/train.libsonnet container()).
      [if std.length(all) > 0 then 'resources']: { requests: all, [if std.length(std.objectFields(all)) > (if std.objectHasEx(all, 'memory', false) then 1 else 0) then 'limits']: { [k]: all[k] for k in std.objectFields(all) if !std.primitiveEquals(k, 'memory') } },
      [if std.length(envList) > 0 then 'env']: envList,
      securityContext: { allowPrivilegeEscalation: false }
                       + (if !std.primitiveEquals(nonRoot, null) then { capabilities: { drop: ['ALL'] } } else {}),
      volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }] + placement.mounts + mounts,
    },

  // A pod template for one stage.
  template(ctx, component, placement, containers, volumes=[], nonRoot=null, restartPolicy=null, annotations={}, initContainers=[])::
    local allAnnotations = placement.annotations + annotations;
    {
      metadata: {
        // The spec's pod labels (scheduling.labels) never replace nemoc's.
        labels: std.get(placement, 'podLabels', {}) + ctx.labels { 'app.kubernetes.io/component': component },
      } + (if std.length(allAnnotations) > 0 then { annotations: allAnnotations } else {}),
      spec: {
        serviceAccountName: ctx.serviceAccountName,
        enableServiceLinks: false,
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } } + (
          if !std.primitiveEquals(nonRoot, null) then { runAsNonRoot: true, runAsUser: nonRoot, runAsGroup: nonRoot } else {}
        ),
        volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: $.shmSize } }] + placement.volumes + volumes,
        containers: containers,
      } + (
        if std.length(initContainers) > 0 then { initContainers: initContainers } else {}
      ) + (
        if !std.primitiveEquals(restartPolicy, null) then { restartPolicy: restartPolicy } else {}
      ) + (
        if std.length(ctx.spec.imagePullSecrets) > 0
        then { imagePullSecrets: [{ name: s } for s in ctx.spec.imagePullSecrets] }
        else {}
      ) + (
        if std.length(placement.nodeSelector) > 0 then { nodeSelector: placement.nodeSelector } else {}
      ) + (
        if std.length(placement.tolerations) > 0 then { tolerations: placement.tolerations } else {}
      ) + $.schedulingSpec(placement),
    },

  // A Job of one pod running `container` to completion. Jobs are immutable:
  // the name is `base` plus a content hash of the Job spec (k8s.contentName),
  // so a changed stage gives a new Job under GitOps and an unchanged one keeps
  // its name (and is never re-run).
  // `upstream`: names of the workloads whose output this Job consumes (the
  // training workload for evaluate and convert, the conversion Job for the
  // engine build: tensorrt-llm.libsonnet upstream). They are
  // hashed into the name, so retraining re-runs what reads the checkpoint
  // (field review C5); null for stages that read no workload's output.
  // `container` is built by container(queued=true), `initContainers` too.
  job(ctx, base, component, placement, container, volumes=[], upstream=null, initContainers=[])::
    local spec = {
      backoffLimit: $.backoffLimit,
      template: $.template(ctx, component, placement, [container], volumes, restartPolicy='Never', initContainers=initContainers),
    };
    local bound = if job.wrapsInJobSet(ctx, placement.suspend) then job.maxNameInJobSet else 63;
    local hashed = k8s.hashed(base, bound, { spec: spec, labels: placement.workloadLabels, suspend: placement.suspend }
                                        + (if std.primitiveEquals(upstream, null) then {} else { upstream: upstream })
                                        + $.patchDeterminants(placement));
    job.stageJob(ctx, hashed.name, component, hashed.value.spec, hashed.value.labels, hashed.value.suspend),

  // The training workload a downstream stage consumes, for Job(upstream=).
  upstreamTraining(ctx):: if std.primitiveEquals(ctx.trainBuilt, null) then null else [ctx.trainBuilt.name],
  // What makes the .nemo evaluate or convert reads (paths.nemoCheckpoint):
  // the LoRA merge Job when there is one (its name hashes training's), else
  // the training workload.
  upstreamCheckpoint(ctx, stage)::
    if !std.objectHasEx(stage, 'checkpoint', false) && std.objectHasEx(ctx, 'mergeBuilt', true) && !std.primitiveEquals(ctx.mergeBuilt, null)
    then [ctx.mergeBuilt.metadata.name] else $.upstreamTraining(ctx),

  // The run of a stage that produces a state directory once (everything but
  // training, which resumes by itself): when `marker` (paths.doneMarker,
  // beside the state directory) exists, the state is complete and the Job
  // exits at once -- a revert re-creates a pruned Job for an earlier state,
  // and rebuilding its engine, conversion or prepared set would take hours
  // (NeMo 2's export even refuses an existing output). Otherwise `dirs` are
  // created, `stale` and `scratch` files removed (what a killed try left: no
  // trap runs on SIGKILL), the program runs, `scratch` is removed again when
  // it ends, and the marker is written only when it exited 0. bash stays the
  // program's parent and forwards SIGTERM/SIGINT to it (PID 1 ignores
  // signals it has no handler for, so the program would otherwise only see
  // SIGKILL). Arguments stay argv entries and never pass through the shell
  // as text.
  runOnce(marker, dirs, argv, stale=[], scratch=[])::
    local d = std.length(dirs), s = std.length(stale), c = std.length(scratch);
    {
      command: ['bash', '-c', std.join('\n', [
        'set -e',
        'marker=$1',
        'if [ -e "$marker" ]; then',
        '  echo "nemoc: $marker exists: this state is complete, nothing to do (remove the file to run the stage again)"',
        '  exit 0',
        'fi',
        'mkdir -p -- "${@:2:' + d + '}"',
      ] + (if s + c == 0 then [] else [
        'stale=("${@:' + (d + 2) + ':' + s + '}")',
        'scratch=("${@:' + (d + s + 2) + ':' + c + '}")',
        'rm -f -- "${stale[@]}" "${scratch[@]}"',
        'trap \'rm -f -- "${scratch[@]}"\' EXIT',
      ]) + [
        'shift ' + (1 + d + s + c),
        '"$@" &',
        'child=$!',
        'trap \'kill -TERM "$child" 2>/dev/null || true\' TERM INT',
        'status=0',
        'wait "$child" || status=$?',
        'while kill -0 "$child" 2>/dev/null; do status=0; wait "$child" || status=$?; done',
        'if [ "$status" -ne 0 ]; then exit "$status"; fi',
        'touch -- "$marker"',
      ]), 'nemoc'],
      args: [marker] + dirs + stale + scratch + argv,
    },
}
