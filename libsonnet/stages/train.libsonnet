// 30-train: NeMo pretraining or fine-tuning. The profile supplies placement,
// fabric and storage; the runtime supplies the workload object and torchrun's
// rendezvous. Nothing here tests which cloud it is.
local fabrics = import 'fabrics.libsonnet';
local k8s = import 'k8s.libsonnet';
local hydra = import 'nemo/hydra.libsonnet';
local paths = import 'paths.libsonnet';
local runtimes = {
  pytorchjob: import 'runtimes/pytorchjob.libsonnet',
};

{
  dir: '30-train',
  component: 'train',

  configMapName(ctx):: ctx.project + '-train-config',
  jobName(ctx):: ctx.project + '-train',

  // Environment the NeMo process needs whatever the cloud.
  nemoEnv(train):: {
    // Megatron's comm/compute overlap needs one hardware queue per device.
    [if train.parallelism.tensor > 1 || train.parallelism.context > 1 then 'CUDA_DEVICE_MAX_CONNECTIONS']: '1',
  },

  // Hydra overrides are single argv entries: no shell ever sees them.
  program(ctx):: [
    hydra.script(ctx.spec.stages.train),
    '--config-path=' + paths.configDir,
    '--config-name=config.yaml',
  ] + ctx.spec.stages.train.overrides,

  container(ctx, placement):: {
    local train = ctx.spec.stages.train,
    local gpus = { [ctx.profile.gpuResource]: train.gpusPerNode },
    local cpuMemory = train.resources,
    // Extended resources must be limits; requests = limits everywhere.
    local resources = gpus + placement.resources + cpuMemory,
    image: k8s.imageRef(train.image),
    imagePullPolicy: train.image.pullPolicy,
    env: k8s.envList(fabrics.common + placement.env + $.nemoEnv(train) + train.env),
    resources: { requests: resources, limits: resources },
    securityContext: {
      allowPrivilegeEscalation: false,
    } + (
      if std.length(placement.capabilities) > 0
      then { capabilities: { add: placement.capabilities } }
      else {}
    ),
    volumeMounts: [
      { name: 'dshm', mountPath: '/dev/shm' },
      { name: 'nemo-config', mountPath: paths.configDir, readOnly: true },
    ] + placement.storage.mounts,
  },

  pod(ctx, placement):: {
    local train = ctx.spec.stages.train,
    metadata: {
      labels: ctx.labels { 'app.kubernetes.io/component': $.component },
    } + (if std.length(placement.annotations) > 0 then { annotations: placement.annotations } else {}),
    spec: {
      serviceAccountName: ctx.serviceAccountName,
      enableServiceLinks: false,
      volumes: [
        // NCCL and data loaders need far more than the 64Mi container default.
        { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: train.shmSize } },
        { name: 'nemo-config', configMap: { name: $.configMapName(ctx) } },
      ] + placement.storage.volumes,
    } + (
      if std.length(ctx.spec.imagePullSecrets) > 0
      then { imagePullSecrets: [{ name: s } for s in ctx.spec.imagePullSecrets] }
      else {}
    ) + (
      if std.length(placement.nodeSelector) > 0 then { nodeSelector: placement.nodeSelector } else {}
    ) + (
      if std.length(placement.tolerations) > 0 then { tolerations: placement.tolerations } else {}
    ),
  },

  files(ctx)::
    local train = ctx.spec.stages.train;
    local placement = ctx.profile.placement(ctx);
    local runtime = runtimes[ctx.runtime];
    local config = k8s.configMap(ctx,
                                 $.configMapName(ctx),
                                 { 'config.yaml': k8s.yamlDocument(hydra.config(ctx)) },
                                 $.component);
    k8s.file('00-base', config)
    + k8s.file($.dir, runtime.workload(ctx, {
      name: $.jobName(ctx),
      component: $.component,
      nodes: train.nodes,
      gpusPerNode: train.gpusPerNode,
      restarts: train.restarts,
      pod: $.pod(ctx, placement),
      container: $.container(ctx, placement),
      program: $.program(ctx),
    })),

  summary(ctx):: {
    runtime: runtimes[ctx.runtime].describe,
    fabric: ctx.profile.placement(ctx).describe,
  },
}
