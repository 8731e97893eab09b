// 30-train: NeMo pretraining or fine-tuning. The profile supplies placement,
// fabric and storage; the runtime supplies the workload objects and torchrun's
// rendezvous. Nothing here tests which cloud it is.
local fabrics = import 'fabrics.libsonnet';
local k8s = import 'k8s.libsonnet';
local hydra = import 'nemo/hydra.libsonnet';
local paths = import 'paths.libsonnet';

{
  dir: '30-train',
  component: 'train',

  configMapName(ctx):: k8s.boundedName(ctx.project + '-train-config', 63),
  // Controllers derive pod hostnames and Services from the workload name
  // ("-worker-12", "-node-0-127"): 46 characters leave room for them.
  jobName(ctx):: k8s.boundedName(ctx.project + '-train', 46),

  // Environment the NeMo process needs whatever the cloud.
  nemoEnv(train):: {
    // Megatron's comm/compute overlap needs one hardware queue per device.
    [if train.parallelism.tensor > 1 || train.parallelism.context > 1 then 'CUDA_DEVICE_MAX_CONNECTIONS']: '1',
  },

  topologyEnv(ctx)::
    if std.objectHas(ctx.target, 'ncclTopologyConfigMap') then { NCCL_TOPO_FILE: '/etc/nccl/topology.xml' } else {},

  // Hydra overrides are single argv entries: no shell ever sees them.
  program(ctx):: [
    hydra.script(ctx.spec.stages.train),
    '--config-path=' + paths.configDir,
    '--config-name=config.yaml',
  ] + [hydra.safeOverride(o) for o in ctx.spec.stages.train.overrides],

  // Fabric defaults < profile < target env < stage env.
  env(ctx, placement)::
    local train = ctx.spec.stages.train;
    local targetEnv = if std.objectHas(ctx.target, 'env') then ctx.target.env else {};
    fabrics.common + placement.env + $.nemoEnv(train) + $.topologyEnv(ctx) + targetEnv + train.env,

  container(ctx, placement)::
    local train = ctx.spec.stages.train;
    local gpus = { [ctx.profile.gpuResource]: train.gpusPerNode };
    // Extended resources must be limits; requests = limits everywhere.
    local resources = gpus + placement.resources + train.resources;
    {
      image: k8s.imageRef(train.image),
      imagePullPolicy: train.image.pullPolicy,
      env: k8s.envList($.env(ctx, placement)),
      resources: { requests: resources, limits: resources },
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
        if std.objectHas(ctx.target, 'ncclTopologyConfigMap')
        then [{ name: 'nccl-topology', mountPath: '/etc/nccl', readOnly: true }] else []
      ),
    },

  pod(ctx, placement)::
    local train = ctx.spec.stages.train;
    {
      metadata: {
        labels: ctx.labels { 'app.kubernetes.io/component': $.component },
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
          if std.objectHas(ctx.target, 'ncclTopologyConfigMap')
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
      ),
    },

  // The contract every runtime implements objects(ctx, w) for.
  // Runtimes read w.pod, w.container... several times each: every field is a
  // local, evaluated once (libjsonnet re-evaluates field expressions).
  workload(ctx)::
    local train = ctx.spec.stages.train;
    local placement = ctx.profile.placement(ctx, ctx.runtimeImpl);
    local name = $.jobName(ctx);
    local pod = $.pod(ctx, placement);
    local container = $.container(ctx, placement);
    local program = $.program(ctx);
    local prologue = placement.prologue;
    local workloadLabels = placement.workloadLabels;
    local suspend = placement.suspend;
    {
      name: name,
      component: $.component,
      nodes: train.nodes,
      gpusPerNode: train.gpusPerNode,
      restarts: train.restarts,
      pod: pod,
      container: container,
      program: program,
      prologue: prologue,
      workloadLabels: workloadLabels,
      suspend: suspend,
    },

  files(ctx)::
    local config = k8s.configMap(ctx,
                                 $.configMapName(ctx),
                                 { 'config.yaml': k8s.yamlDocument(hydra.config(ctx)) },
                                 $.component);
    k8s.file('00-base', config)
    + std.foldl(function(acc, o) acc + k8s.file($.dir, o), ctx.runtimeImpl.objects(ctx, $.workload(ctx)), {}),

  summary(ctx)::
    local placement = ctx.profile.placement(ctx, ctx.runtimeImpl);
    {
      runtime: ctx.runtimeImpl.describe,
      fabric: placement.fabric,
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
