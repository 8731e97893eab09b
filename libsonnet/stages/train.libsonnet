// 30-train (and 28-pretrain before it): NeMo pretraining or fine-tuning. The
// profile supplies placement, fabric and storage; the runtime supplies the
// workload objects and torchrun's rendezvous. Nothing here tests which cloud
// it is. Every function builds the training stage chain.key(ctx) names
// (stages/chain.libsonnet): spec.stages.train unless ctx.trainKey says pretrain.
local chain = import 'nemoc/stages/chain.libsonnet';
local fabrics = import 'nemoc/fabrics.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local hf = import 'nemoc/huggingface.libsonnet';
local kueue = import 'nemoc/kueue.libsonnet';
local hydra = import 'nemoc/nemo/hydra.libsonnet';
local nemo2 = import 'nemoc/nemo/nemo2.libsonnet';
local paths = import 'nemoc/paths.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local podLib = import 'nemoc/stages/pod.libsonnet';

{
  // Field review A25. On a resume, the checkpoint callback rebuilds its top-k
  // from the checkpoint files by looking for the monitor's name in each file's
  // whole path: checkpoint.find(monitor) (NVIDIA/NeMo NeMo 1
  // nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:93,116-121; NeMo 2
  // nemo/lightning/pytorch/callbacks/model_checkpoint.py v2.3.0:146,233-241;
  // the same at every tag nemoc accepts) and float()s what follows. nemoc
  // monitors 'step'; a directory above the files whose name holds 'step'
  // (project multistep-qa) makes that float('') and every restart after a
  // preemption crashes. nemoc's own path parts (train, pretrain, checkpoints,
  // hex hashes) cannot hold it; the spec's can: the results mount path, the
  // project and the target name.
  monitor:: 'step',
  diagnostics(ctx)::
    local checkpoint(k) = if std.objectHasEx(ctx.spec.stages[k], 'checkpoint', false) then ctx.spec.stages[k].checkpoint else {};
    local resuming = [k for k in chain.present(ctx)
                      if std.objectHasEx(checkpoint(k), 'enabled', false) && checkpoint(k).enabled
                         && std.objectHasEx(checkpoint(k), 'resume', false) && std.primitiveEquals(checkpoint(k).resume, 'auto')];
    local parts = [
      { value: ctx.storage.results.mountPath, what: 'the results mount path', pointer: ctx.storagePointer + '/results/mountPath', hint: 'mount the results volume at a path without it (storage.results.mountPath)' },
      { value: ctx.project, what: 'the project name', pointer: '/metadata/name', hint: 'name the project without it' },
      { value: ctx.target.name, what: 'the target name', pointer: ctx.targetPointer + '/name', hint: 'name the target without it' },
    ];
    if std.primitiveEquals(std.length(resuming), 0) then [] else [{
      code: 'train.checkpoint-path',
      pointer: p.pointer,
      message: 'the checkpoint directory ' + paths.checkpointDir(chain.at(ctx, resuming[0])) + ' contains "' + $.monitor + '" ('
               + p.what + ' ' + p.value + '): on a resume NeMo parses the monitored value after the first "' + $.monitor
               + '" in the checkpoint path (nemo_model_checkpoint.py / model_checkpoint.py nemo_topk_check_previous_run), '
               + 'so spec.stages.' + resuming[0] + ' would crash at every restart',
      hint: p.hint + ', or set checkpoint.resume: never on spec.stages.' + std.join(', spec.stages.', resuming),
    } for p in parts
      // contains: std.findSubstr is Jsonnet code, strReplace native (issue #47)
      if !std.primitiveEquals(std.strReplace(p.value, $.monitor, ''), p.value)],

  // Output directory and app.kubernetes.io/component of the stage being built.
  dirOf(ctx):: order.dir[chain.key(ctx)],
  componentOf(ctx):: chain.key(ctx),

  // Content-addressed like the workload (field review C5): a changed config
  // is a new ConfigMap next to the old one, never an in-place update under a
  // running job (whose pods would read the new config on a restart); the
  // engines prune the old one with the old workload.
  // built() computes the config once and binds the name in ctx (trainConfigMap):
  // the NeMo 1 config (NeMo's defaults under nemoc's values) costs ~40 ms per
  // evaluation, and libjsonnet caches locals, not function results.
  configMapName(ctx)::
    if std.objectHasEx(ctx, 'trainConfigMap', false) then ctx.trainConfigMap
    else k8s.contentName(ctx.project + '-' + chain.key(ctx) + '-config', 63, $.configData(ctx)),
  // Controllers derive pod hostnames and Services from the workload name
  // ("-worker-12", "-node-0-127"): 46 characters leave room for them. The
  // name carries a content hash of what the workload runs (k8s.contentName):
  // the workload contract without its name, the runtime and the config the
  // pods read from their ConfigMap (Hydra config.yaml or NeMo 2 recipe.py).
  jobName(ctx):: $.builtOf(ctx).name,
  // nemoc.libsonnet binds each training stage's built() in ctx.trainingBuilt.
  builtOf(ctx):: ctx.trainingBuilt[chain.key(ctx)],

  // The workload hashed once (k8s.hashed): its name, the workload contract
  // without (content) and with that name, and the config data, as plain
  // data. nemoc.libsonnet binds it once per target as ctx.trainBuilt, which
  // files(), monitoring and the NCCL preflight read.
  // A stage that restores its predecessor's checkpoint hashes that
  // workload's name too (C5): new pretraining re-runs the fine-tuning.
  // The state hash (paths.libsonnet, F15) is taken first, from the config
  // and program with the stage's own directory left out: NeMo's config and
  // program, the image the pods run (a profile's own build included) and the
  // spec's data version. Node count and parallelism are in the config, so in
  // the state: nemoc does not rely on a checkpoint resuming across them.
  built(ctx)::
    local key = chain.key(ctx);
    local draft = paths.drafting(ctx, key);
    local train = chain.stage(ctx);
    local image = if std.objectHasEx(ctx.placement, 'image', false) then ctx.placement.image else train.image;
    // NeMo 1: the config is evaluated once (~40 ms), with the draft
    // directory, and hydra.withOwnDirectories sets the real one.
    local draftHydra = if $.nemo2(ctx) then null else std.parseJson('' + hydra.config(draft));
    local state = paths.stateHash({
      config: if $.nemo2(ctx) then $.configData(draft) else draftHydra,
      program: $.program(draft),
      image: k8s.imageRef(image),
    } + (if std.objectHasEx(train, 'dataVersion', false) then { dataVersion: train.dataVersion } else {}));
    local withState = ctx { states+: { [key]: state } };
    local config = if $.nemo2(ctx) then $.configData(withState)
    // draftHydra is plain data: only the two directories withOwnDirectories
    // lays over it are evaluated again when the config is read twice (hashed,
    // then emitted), cheaper than a serialise-and-parse round trip of the
    // whole config (issue #47).
    else { 'config.yaml': k8s.yamlDocument(hydra.withOwnDirectories(draftHydra, withState)) };
    $.builtWithState(withState, config) { state: state },

  builtWithState(ctx, config)::
    local key = chain.key(ctx);
    local configMap = k8s.contentName(ctx.project + '-' + key + '-config', 63, config);
    local withConfig = ctx { trainConfigMap: configMap };
    local upstream = chain.upstream(ctx);
    local patches = podLib.patchesOf(ctx, key);
    local hashed = k8s.hashed(ctx.project + '-' + key, 46, {
      runtime: ctx.runtime,
      workload: $.workloadContent(withConfig),
      config: config,
    } + (if !std.primitiveEquals(upstream, null) then { upstream: ctx.trainingBuilt[upstream].name } else {})
      + (if std.length(patches) > 0 then { patches: patches } else {}));
    local workload = hashed.value.workload { name: hashed.name };
    { name: hashed.name, content: hashed.value.workload, workload: workload, config: hashed.value.config, configMap: configMap },

  // Environment the NeMo process needs whatever the cloud.
  nemoEnv(train):: {
    // Megatron's comm/compute overlap needs one hardware queue per device.
    [if train.parallelism.tensor > 1 || train.parallelism.context > 1 then 'CUDA_DEVICE_MAX_CONNECTIONS']: '1',
  },

  topologyEnv(ctx)::
    if std.objectHasEx(ctx.target, 'ncclTopologyConfigMap', false) then { NCCL_TOPO_FILE: '/etc/nccl/topology.xml' } else {},

  // The framework hook: NeMo 1 runs a Hydra script with config.yaml, NeMo 2
  // a generated recipe module (nemo/nemo2.libsonnet). Overrides are single
  // argv entries either way: no shell ever sees them.
  nemo2(ctx):: std.primitiveEquals(chain.stage(ctx).framework, 'nemo2'),

  program(ctx):: if $.nemo2(ctx) then nemo2.program(ctx) else [
    hydra.script(chain.stage(ctx)),
    '--config-path=' + paths.configDir,
    '--config-name=config.yaml',
  ] + [hydra.safeOverride(o) for o in chain.stage(ctx).overrides],

  configData(ctx)::
    if $.nemo2(ctx) then nemo2.configData(ctx)
    else
      // A local is evaluated once; an object field on every access (and the
      // data is read twice: hashed, then written). parseJson makes it plain data.
      local config = std.parseJson('' + hydra.config(ctx));
      { 'config.yaml': k8s.yamlDocument(config) },

  // Fabric defaults < profile < target env < stage env.
  env(ctx, placement)::
    local train = chain.stage(ctx);
    local targetEnv = if std.objectHasEx(ctx.target, 'env', false) then ctx.target.env else {};
    fabrics.common + placement.env + $.nemoEnv(train) + $.topologyEnv(ctx) + targetEnv + train.env,

  // What a training pod's container would request: GPUs, the fabric's
  // devices, memory for /dev/shm, the stage's own resources.
  requested(ctx, placement)::
    local train = chain.stage(ctx);
    { [ctx.profile.gpuResource]: train.gpusPerNode } + placement.resources + { memory: train.shmSize } + train.resources,

  // What it does request: a queued pod only what its ClusterQueue covers.
  resources(ctx, placement):: kueue.admissible(ctx, $.requested(ctx, placement)),

  container(ctx, placement)::
    local train = chain.stage(ctx);
    // Extended resources must be limits; requests = limits everywhere.
    // Memory: the spec's, else the size of /dev/shm, whose pages are charged
    // to the pod: a pod requesting less (or nothing: BestEffort, first to be
    // evicted) is scheduled on memory it will use (B13).
    // A queued pod requests only what its ClusterQueue covers (kueue.libsonnet, B3).
    local resources = $.resources(ctx, placement);
    {
      // A profile may run the multi-node pods on its own build of the image
      // (eks-efa: the EFA-capable image, B8).
      local image = if std.objectHasEx(placement, 'image', false) then placement.image else train.image,
      image: k8s.imageRef(image),
      imagePullPolicy: if std.objectHasEx(image, 'pullPolicy', false) then image.pullPolicy else train.image.pullPolicy,
      // The tokenizer (and NeMo 2 recipes' model files) come from the Hub:
      // HF_HOME on shared storage so the ranks share one download, HF_TOKEN
      // for gated repositories (field-review.md A3); the stage's own env wins.
      local env = $.env(ctx, placement),
      env: k8s.envList(env) + [e for e in hf.env(ctx) if !std.objectHasEx(env, e.name, false)],
      // B6: /dev/shm is a Memory emptyDir of train.shmSize, and memory-backed
      // emptyDir pages count against the container's memory limit, so a limit
      // equal to the request (32000Mi on EKS under a 256Gi /dev/shm) OOM-kills
      // the trainer. Memory is requested, not limited, like the awsome-distributed-
      // training PyTorchJobs; extended resources stay requests = limits.
      // (k8s.io/api core/v1 types.go EmptyDirVolumeSource.SizeLimit: usage of a memory
      // medium emptyDir is bounded by "the sum of memory limits of all containers in a pod".)
      resources: { requests: resources, [if std.length(std.objectFields(resources)) > (if std.objectHasEx(resources, 'memory', false) then 1 else 0) then 'limits']: { [k]: resources[k] for k in std.objectFields(resources) if !std.primitiveEquals(k, 'memory') } },
      securityContext: if placement.privileged then { privileged: true } else {
        allowPrivilegeEscalation: false,
      } + (
        if std.length(placement.capabilities) > 0
        then { capabilities: { add: placement.capabilities } }
        else {}
      ),
      volumeMounts: [
        { name: 'dshm', mountPath: '/dev/shm' },
        { name: 'nemo-config', mountPath: paths.configDir, readOnly: true },
      ] + placement.mounts + (
        if std.objectHasEx(ctx.target, 'ncclTopologyConfigMap', false)
        then [{ name: 'nccl-topology', mountPath: '/etc/nccl', readOnly: true }] else []
      ),
    },

  pod(ctx, placement)::
    local train = chain.stage(ctx);
    {
      metadata: {
        // The spec's pod labels (scheduling.labels) never replace nemoc's.
        labels: std.get(placement, 'podLabels', {}) + ctx.labels { 'app.kubernetes.io/component': $.componentOf(ctx) },
      } + (if std.length(placement.annotations) > 0 then { annotations: placement.annotations } else {}),
      spec: {
        serviceAccountName: ctx.serviceAccountName,
        enableServiceLinks: false,
        // The container runtime's default seccomp filter (privileged pods are exempt anyway).
        [if !placement.privileged then 'securityContext']: { seccompProfile: { type: 'RuntimeDefault' } },
        volumes: [
          // NCCL and data loaders need far more than the 64Mi container default.
          { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: train.shmSize } },
          { name: 'nemo-config', configMap: { name: $.configMapName(ctx) } },
        ] + placement.volumes + (
          if std.objectHasEx(ctx.target, 'ncclTopologyConfigMap', false)
          then [{ name: 'nccl-topology', configMap: { name: ctx.target.ncclTopologyConfigMap } }] else []
        ),
      } + (
        if std.length(ctx.spec.imagePullSecrets) > 0
        then { imagePullSecrets: [{ name: s } for s in ctx.spec.imagePullSecrets] }
        else {}
      ) + (
        if std.length(placement.nodeSelector) > 0 then { nodeSelector: placement.nodeSelector } else {}
      ) + (
        if std.length(placement.tolerations) > 0 then { tolerations: placement.tolerations } else {}
      ) + (
        if std.length(placement.initContainers) > 0 then { initContainers: placement.initContainers } else {}
      ) + (
        if placement.hostNetwork then { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } else {}
      ) + podLib.schedulingSpec(placement),
    },

  // The contract every runtime implements objects(ctx, w) for (the name is
  // added by built(): what determines the workload, hashed into the name).
  workloadContent(ctx)::
    local train = chain.stage(ctx);
    // The profile's placement with the spec's scheduling additions for this
    // stage (stages/pod.libsonnet scheduled; Kueue's flavor keeps the
    // profile's node labels).
    local placement = podLib.scheduled(ctx, ctx.placement, chain.key(ctx));
    local pod = $.pod(ctx, placement);
    local container = $.container(ctx, placement);
    local program = $.program(ctx);
    local prologue = placement.prologue;
    local workloadLabels = placement.workloadLabels;
    local suspend = placement.suspend;
    {
      component: $.componentOf(ctx),
      nodes: train.nodes,
      gpusPerNode: train.gpusPerNode,
      restarts: train.restarts,
      pod: pod,
      container: container,
      program: program,
      prologue: prologue,
      workloadLabels: workloadLabels,
      suspend: suspend,
      // F17: stages.<train>.timeout bounds the run itself (each runtime's
      // activeDeadlineSeconds). Flux only polls.
      // Absent without a timeout: the content (and so the name) of every
      // workload without one stays what it was.
    } + (if std.objectHasEx(train, 'timeout', false) then { deadlineSeconds: k8s.durationSeconds(train.timeout) } else {}),

  files(ctx)::
    local built = $.builtOf(ctx);
    local dir = $.dirOf(ctx);
    local config = k8s.configMap(ctx, built.configMap, built.config, $.componentOf(ctx));
    k8s.file(order.dir.base, config)
    + std.foldl(function(acc, o) acc + k8s.file(order.dir.base, o), ctx.runtimeImpl.baseObjects(ctx, built.workload), {})
    + std.foldl(function(acc, o) acc + k8s.file(dir, o), ctx.runtimeImpl.objects(ctx, built.workload), {}),

  describeResources(ctx, placement)::
    local train = chain.stage(ctx);
    local requested = $.requested(ctx, placement);
    local resources = kueue.admissible(ctx, requested);
    local dropped = kueue.dropped(ctx, requested);
    local list(o) = std.join(', ', [k + ' ' + o[k] for k in std.objectFields(o)]);
    local limits = { [k]: resources[k] for k in std.objectFields(resources) if !std.primitiveEquals(k, 'memory') };
    // core/v1 QoS: Guaranteed needs cpu and memory limits = requests (memory is
    // never limited here), BestEffort has no request at all.
    local qos = if !std.objectHasEx(resources, 'memory', false) && !std.objectHasEx(resources, 'cpu', false) then 'BestEffort' else 'Burstable';
    'requests ' + (if std.length(resources) > 0 then list(resources) else 'none')
    + '; limits ' + (if std.length(limits) > 0 then list(limits) else 'none')
    + (if std.objectHasEx(resources, 'memory', false) then '; memory not limited (/dev/shm ' + train.shmSize + ' is memory-backed, B6)' else '')
    + '; QoS ' + qos
    + (if std.length(dropped) > 0 then '; RISK: ' + std.join(', ', dropped) + ' not requested because ClusterQueue ' + kueue.of(ctx.target).clusterQueue
                                        + ' covers only ' + std.join(', ', kueue.of(ctx.target).covers)
                                        + (if std.primitiveEquals(qos, 'BestEffort') then ' -- BestEffort pods are evicted first under memory pressure' else '')
       else ''),

  // The stage-table line of a training chain's stage (SUMMARY.md): what
  // it starts from and what it hands on. A lone train stage has its own rows.
  chainSummary(ctx)::
    local t = chain.stage(ctx);
    local p = t.parallelism;
    local nemo2Run = std.primitiveEquals(t.framework, 'nemo2');
    local restore = if nemo2Run then nemo2.restorePath(ctx, t) else paths.restoreNemo(ctx);
    local upstream = chain.upstream(ctx);
    local last = 'the newest finished *-last checkpoint in ';
    t.mode + ' (' + (if nemo2Run then 'NeMo 2' else 'NeMo 1') + ', ' + t.nodes + ' × ' + t.gpusPerNode + ' GPUs, TP '
    + p.tensor + ' · PP ' + p.pipeline + ', ' + t.maxSteps + ' steps) '
    + (if !std.primitiveEquals(upstream, null) then
         'restores ' + (if nemo2Run then last + paths.checkpointDir(chain.at(ctx, upstream)) + ', the last checkpoint'
                        else restore + ', the final checkpoint')
         + ' of ' + order.dir[upstream]
       else if !std.primitiveEquals(restore, null) then 'continues from ' + restore
       else 'from random weights')
    + (if !std.primitiveEquals(chain.key(ctx), 'train') then
         '; saves ' + (if nemo2Run then 'checkpoints in ' + paths.checkpointDir(ctx) else paths.trainedNemo(ctx))
         + ' for ' + order.dir.train
       else ''),

  // The directory it writes (SUMMARY.md "State directories"; F15).
  stateDir(ctx):: paths.trainDir(ctx),

  summary(ctx)::
    local placement = ctx.placement;
    {
      runtime: ctx.runtimeImpl.describe,
      fabric: placement.fabric,
      // Requests, limits and QoS class of a training pod's container, and the
      // queue it waits in.
      resources: $.describeResources(ctx, placement),
      queue: kueue.describe(ctx),
      // Every privilege the pods get, with the reason; reviewers see it in SUMMARY.md.
      privileges: (
                    if placement.privileged then [
                      (if placement.hostNetwork then 'privileged container on the host network: ' else 'privileged container: ')
                      + placement.privilegeReason,
                    ] else [
                             'no privilege escalation, RuntimeDefault seccomp',
                           ] + [c + ' capability: ' + placement.privilegeReason for c in placement.capabilities]
                           + (if placement.hostNetwork then ['hostNetwork: ' + placement.privilegeReason] else [])
                  )
                  + ['runs as the image user (root in NGC NeMo images, which define no other user)'],
    },
}
