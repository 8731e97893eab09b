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
  placementFor(ctx, key)::
    local p = ctx.localPlacement;
    local all = if std.objectHasEx(ctx.target, 'stageNodes', false) then ctx.target.stageNodes else {};
    if !std.objectHasEx(all, key, false) then p
    else
      local nodes = all[key];
      p {
        nodeSelector: (if std.objectHasEx(nodes, 'instanceType', false) then { 'node.kubernetes.io/instance-type': nodes.instanceType } else {})
                      + (if std.objectHasEx(nodes, 'nodeSelector', false) then nodes.nodeSelector else {}),
      },

  // stageNodes rules: an engine runs on the GPU it was built on; nemoc's own
  // Kueue flavor holds the training nodes only; instanceType is EKS's label.
  stageNodesDiagnostics(ctx)::
    local all = if std.objectHasEx(ctx.target, 'stageNodes', false) then ctx.target.stageNodes else {};
    local pointer = ctx.targetPointer + '/stageNodes';
    local nodesOf(key) = if std.objectHasEx(all, key, false) then all[key] else null;
    local stages = ctx.spec.stages;
    (if std.objectHasEx(stages, 'serve', false) && std.objectHasEx(stages, 'tensorrtLLM', false) && nodesOf('serve') != nodesOf('tensorrtLLM') then [{
       code: 'spec.stage-nodes',
       pointer: pointer + (if nodesOf('serve') != null then '/serve' else '/tensorrtLLM'),
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
      [if std.length(all) > 0 then 'resources']: { requests: all, [if std.length(std.objectFields(all)) > (if std.objectHasEx(all, 'memory', false) then 1 else 0) then 'limits']: { [k]: all[k] for k in std.objectFields(all) if k != 'memory' } },
      [if std.length(envList) > 0 then 'env']: envList,
      securityContext: { allowPrivilegeEscalation: false }
                       + (if nonRoot != null then { capabilities: { drop: ['ALL'] } } else {}),
      volumeMounts: [{ name: 'dshm', mountPath: '/dev/shm' }] + placement.mounts + mounts,
    },

  // A pod template for one stage.
  template(ctx, component, placement, containers, volumes=[], nonRoot=null, restartPolicy=null, annotations={}, initContainers=[])::
    local allAnnotations = placement.annotations + annotations;
    {
      metadata: {
        labels: ctx.labels { 'app.kubernetes.io/component': component },
      } + (if std.length(allAnnotations) > 0 then { annotations: allAnnotations } else {}),
      spec: {
        serviceAccountName: ctx.serviceAccountName,
        enableServiceLinks: false,
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } } + (
          if nonRoot != null then { runAsNonRoot: true, runAsUser: nonRoot, runAsGroup: nonRoot } else {}
        ),
        volumes: [{ name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: $.shmSize } }] + placement.volumes + volumes,
        containers: containers,
      } + (
        if std.length(initContainers) > 0 then { initContainers: initContainers } else {}
      ) + (
        if restartPolicy != null then { restartPolicy: restartPolicy } else {}
      ) + (
        if std.length(ctx.spec.imagePullSecrets) > 0
        then { imagePullSecrets: [{ name: s } for s in ctx.spec.imagePullSecrets] }
        else {}
      ) + (
        if std.length(placement.nodeSelector) > 0 then { nodeSelector: placement.nodeSelector } else {}
      ) + (
        if std.length(placement.tolerations) > 0 then { tolerations: placement.tolerations } else {}
      ),
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
                                        + (if upstream == null then {} else { upstream: upstream }));
    job.stageJob(ctx, hashed.name, component, hashed.value.spec, hashed.value.labels, hashed.value.suspend),

  // The training workload a downstream stage consumes, for Job(upstream=).
  upstreamTraining(ctx):: if ctx.trainBuilt == null then null else [ctx.trainBuilt.name],
  // What makes the .nemo evaluate or convert reads (paths.nemoCheckpoint):
  // the LoRA merge Job when there is one (its name hashes training's), else
  // the training workload.
  upstreamCheckpoint(ctx, stage)::
    if !std.objectHasEx(stage, 'checkpoint', false) && std.objectHasEx(ctx, 'mergeBuilt', true) && ctx.mergeBuilt != null
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
