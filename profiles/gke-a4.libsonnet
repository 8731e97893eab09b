// gke-a4: Google Kubernetes Engine A4 nodes (a4-highgpu-8g, 8 × B200) with
// GPUDirect RDMA over RoCE through the gIB NCCL plugin, Kueue admission with
// Topology-Aware Scheduling, Cloud Storage FUSE and Workload Identity.
// Facts: AI-Hypercomputer/gpu-recipes (A4 charts) and Cluster Toolkit gke-a4.
local chain = import 'nemoc/stages/chain.libsonnet';
local fabrics = import 'nemoc/fabrics.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local nemoVersions = import 'nemoc/nemo/versions.libsonnet';
local profile = import 'nemoc/profile.libsonnet';
local storage = import 'nemoc/storage.libsonnet';

profile + {
  name: 'gke-a4',
  description:: 'Google Kubernetes Engine A4 (a4-highgpu-8g, 8 × B200): GPUDirect RDMA over RoCE with the gIB NCCL plugin, Kueue with Topology-Aware Scheduling, Cloud Storage FUSE, Workload Identity (gcpServiceAccount).',
  options:: {
    gcpServiceAccount: {
      description: 'Google service account for Workload Identity (gke-a4).',
      type: 'string',
      maxLength: 254,
      pattern: '^[a-z][a-z0-9-]*@[a-z][a-z0-9-]*\\.iam\\.gserviceaccount\\.com$',
    },
    hostNetwork: {
      description: "gke-a4: run with hostNetwork (the recipe's default) instead of GKE multi-networking.",
      type: 'boolean',
    },
  },
  starter:: {
    target: 'gke-a4',
    accelerator: 'b200-180gb',
    storage: '        gcs: {bucket: my-training-bucket}   # Cloud Storage FUSE; or pvc, nfs\n',
    targetLines: '      # Kueue gang admission with topology-aware placement on the cluster\'s ClusterQueue\n'
                 + '      # (nemoc init --cluster-queue, from `kubectl get clusterqueues`); covers: what it covers\n'
                 + '      # (Cluster Toolkit queues: GPUs only).\n'
                 + '      kueue: {clusterQueue: {QUEUE}, covers: [nvidia.com/gpu], topology: block}\n'
                 + '      # gcpServiceAccount: nemo-training@my-project.iam.gserviceaccount.com   # Workload Identity\n',
    fabric: '',
    clusterQueue: true,
  },
  defaults: { runtime: 'jobset' },
  storageBackends: ['gcs', 'pvc', 'nfs'],
  gpusPerNode: 8,
  // vCPUs and memory of one a4-highgpu-8g node: the Kueue quota for stage
  // pods that request cpu or memory (data preparation, conversion...).
  nodeCpu: 224,
  nodeMemoryGi: 3968,
  gkeAccelerator: 'nvidia-b200',

  gib: {
    repository: 'us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib',
    // The gIB plugin must match the NCCL of the training image (B12). The
    // pairs AI-Hypercomputer/gpu-recipes ships for A4 (@2e1fd5e), newest first;
    // a NeMo release takes the first row at or below it, an image whose
    // release nemoc cannot tell the newest.
    versions: [
      { release: '25.11', tag: 'v1.1.1', at: 'training/a4/wan_14b/nemo-gke/nemo2511/32gpus-bf16-gbs64/recipe/values.yaml:4; nemo2602 recipes values.yaml:30' },
      { release: '25.07', tag: 'v1.1.0', at: 'training/a4/llama31_405b/nemo-gke/nemo2507/128gpus-fp8-gbs128/recipe/recipe/values.yaml:4' },
      { release: '00.00', tag: 'v1.0.5', at: 'image pytorch-gpu-nemo-nccl:nemo25.02-gib1.0.5-A4 (training/a4/llama3-1-405b, shared/reference/gke-a4.md:38)' },
    ],
    dir: '/usr/local/gib',
    tunerConfig: '/usr/local/gib/configs/tuner_config_a4.txtpb',
  },

  // TAS level named in the spec -> the node label Kueue uses for it (the
  // Topology levels of Cluster Toolkit's gke-a4 blueprint, top to bottom).
  topologyLevels: {
    block: 'cloud.google.com/gce-topology-block',
    subblock: 'cloud.google.com/gce-topology-subblock',
    host: 'cloud.google.com/gce-topology-host',
    hostname: 'kubernetes.io/hostname',
  },
  topologyOrder: ['block', 'subblock', 'host', 'hostname'],
  // Levels whose every domain is one a4-highgpu-8g node (a VM takes its
  // whole host): a required topology there holds one pod (B4).
  singleNodeLevels: ['host', 'hostname'],

  // Multi-networking: eth0 default VPC, eth1 the second gVNIC, eth2..eth9 the
  // eight RoCE NICs (GKE Network objects gvnic-1 and rdma-0..rdma-7).
  interfaces:: [
    { interfaceName: 'eth0', network: 'default' },
    { interfaceName: 'eth1', network: 'gvnic-1' },
  ] + [{ interfaceName: 'eth' + (i + 2), network: 'rdma-' + i } for i in std.range(0, 7)],

  local hostNetworkOf(target) = !std.objectHasEx(target, 'hostNetwork', false) || target.hostNetwork,
  local kueueOf(target) = if std.objectHasEx(target, 'kueue', false) then target.kueue else null,

  // Every target's nodes (profile.libsonnet gpuNode).
  // gIB: GPUDirect RDMA over RoCE (profile.libsonnet nodeFabric).
  nodeFabric:: { fixed: 'gib' },
  gpuNode:: { fixed: { accelerator: 'b200-180gb', gpus: $.gpusPerNode, name: 'an a4-highgpu-8g node' } },

  // The gIB plugin tag for the training image (B12).
  gibTag(ctx)::
    // The training stage being placed (stages/chain.libsonnet; the last by default).
    local release = if std.objectHasEx(ctx.spec.stages, chain.key(ctx), false) then nemoVersions.release(chain.stage(ctx).image) else null;
    [v.tag for v in $.gib.versions if std.primitiveEquals(release, null) || v.release <= release][0],
  gibImage(ctx):: $.gib.repository + ':' + $.gibTag(ctx),

  // Placement of single-node stage pods (data preparation, evaluation,
  // conversion, engine build, serving): A4 nodes, shared storage and the
  // Kueue queue (Jobs only; Deployments ignore workloadLabels and suspend),
  // no gIB fabric.
  localPlacement(ctx)::
    local pod = storage.pod(ctx);
    $.placementDefaults(ctx) + {
      annotations: if pod.usesGcsFuse then {
        'gke-gcsfuse/volumes': 'true',
        // "0": no limit on the FUSE sidecar; training I/O must not be throttled.
        'gke-gcsfuse/cpu-limit': '0',
        'gke-gcsfuse/memory-limit': '0',
        'gke-gcsfuse/ephemeral-storage-limit': '0',
      } else {},
      nodeSelector: { 'cloud.google.com/gke-accelerator': $.gkeAccelerator } + ctx.target.nodeSelector,
      tolerations: [
        { key: 'nvidia.com/gpu', operator: 'Exists' },
        { key: 'cloud.google.com/impending-node-termination', operator: 'Exists' },
      ],
    },

  // Placement of multi-node workloads (training, NCCL preflight): the local
  // placement plus gIB, topology-aware admission and host networking.
  placement(ctx, runtime)::
    local target = ctx.target;
    local hostNetwork = hostNetworkOf(target);
    local kueue = kueueOf(target);
    local single = $.localPlacement(ctx);
    single {
      annotations:
        (if !std.primitiveEquals(kueue, null) && std.objectHasEx(kueue, 'topology', false) then {
           [if kueue.required then 'kueue.x-k8s.io/podset-required-topology'
           else 'kueue.x-k8s.io/podset-preferred-topology']: $.topologyLevels[kueue.topology],
         }
         // A workload of several pod sets (PyTorchJob's Master and Worker):
         // one group is placed in one domain (kueue v0.19.2
         // apis/kueue/v1beta1/topology_types.go:82-84; runtime.libsonnet).
         + (if ctx.runtimeImpl.multiplePodSets then { 'kueue.x-k8s.io/podset-group-name': 'training' } else {})
         else {})
        + (if hostNetwork then {} else {
             'networking.gke.io/default-interface': 'eth0',
             'networking.gke.io/interfaces': k8s.jsonDocument($.interfaces),
           })
        + single.annotations,
      // hostNetwork with the RDMA NICs needs a privileged container (recipe default).
      privilegeReason: 'gIB drives the 8 RoCE NICs of the host directly; the A4 recipe runs hostNetwork pods privileged',
      privileged: hostNetwork,
      hostNetwork: hostNetwork,
      env: fabrics[$.fabricOf(ctx.target)],
      initContainers: [{
        name: 'nccl-plugin-installer',
        image: $.gibImage(ctx),
        imagePullPolicy: 'IfNotPresent',
        command: ['/bin/sh', '-c'],
        args: [std.join('\n', [
          'set -ex',
          '/scripts/container_entry.sh install --install-nccl',
          'cp -R /var/lib/gib/lib64/. /target/usr/local/gib/lib64',
          'cp -R /var/lib/gib/. /target/usr/local/gib',
        ])],
        volumeMounts: [{ name: 'gib', mountPath: '/target' + $.gib.dir }],
      }],
      // Cloud Storage FUSE in a hostNetwork pod authenticates as the pod's
      // Kubernetes service account only with hostNetworkPodKSA (B11;
      // GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.0 docs/authentication.md:29-40,
      // pkg/csi_driver/utils.go:63); without it the node's identity is used.
      volumes: [{ name: 'gib', emptyDir: {} }] + [
        if hostNetwork && std.objectHasEx(v, 'csi', false) && std.primitiveEquals(v.csi.driver, 'gcsfuse.csi.storage.gke.io')
        then v { csi+: { volumeAttributes+: { hostNetworkPodKSA: 'true' } } }
        else v
        for v in single.volumes
      ],
      mounts: [{ name: 'gib', mountPath: $.gib.dir }] + single.mounts,
      // gIB's NCCL settings come as a shell script inside the plugin image.
      prologue: std.join('\n', [
        'set -e',
        'source ' + $.gib.dir + '/scripts/set_nccl_env.sh',
        'export NCCL_SOCKET_IFNAME=eth0,eth1',
        'export NCCL_TUNER_CONFIG_PATH=' + $.gib.tunerConfig,
      ]),
      fabric: 'GPUDirect RDMA over RoCE with the gIB NCCL plugin ' + $.gibTag(ctx) + ' ('
              + (if hostNetwork then 'hostNetwork' else 'GKE multi-networking eth0..eth9') + ')'
              + (if !std.primitiveEquals(kueue, null) && std.objectHasEx(kueue, 'topology', false)
                 then '; Kueue topology ' + kueue.topology + (if kueue.required then ' (required)' else ' (preferred)')
                 else ''),
    },

  serviceAccountAnnotations(ctx)::
    if std.objectHasEx(ctx.target, 'gcpServiceAccount', false) then { 'iam.gke.io/gcp-service-account': ctx.target.gcpServiceAccount } else {},

  // GKE GPU node pools install the driver.
  shipsGpuDriver:: true,
  // A4 clusters are built with Cluster Toolkit's A4 blueprint, which installs
  // Kueue and JobSet itself (field review B22): GoogleCloudPlatform/
  // cluster-toolkit v1.95.0 examples/gke-a4/gke-a4.yaml:288-295 (kueue and
  // jobset install: true), modules/management/kubectl-apply/main.tf:204-213,
  // 271-280 (Helm releases kueue in kueue-system, jobset in jobset-system,
  // the names nemoc's bundle would use: two installers would take turns
  // upgrading them), default versions variables.tf:151,186. A cluster built
  // otherwise says clusterHas: {kueue: false, jobset: false}.
  clusterHas(ctx):: { kueue: 'v0.17.1', jobset: 'v0.10.1' },
  clusterHasWhy:: "Cluster Toolkit's A4 blueprint installs it (cluster-toolkit v1.95.0 examples/gke-a4/gke-a4.yaml:288-295)",
  prerequisites(ctx):: [
    { what: 'GKE GPU node pool with automatic GPU driver installation (advertises nvidia.com/gpu)', provides: ['nvidia.com/gpu'] },
    { what: 'the RDMA networks created with the A4 node pool (GKE multi-networking)',
      local networks = if std.objectHasEx(ctx.target, 'hostNetwork', true) && !ctx.target.hostNetwork
      then [i.network for i in $.interfaces if !std.primitiveEquals(i.network, 'default')] else [],
      provides: ['network/' + n for n in networks],
      // GKE's own Network objects, not Multus attachments.
      checks: { ['network/' + n]: 'kubectl get networks.networking.gke.io ' + n for n in networks } },
  ] + (if storage.usesBackend(ctx.storage, 'gcs') then [
    { what: 'Cloud Storage FUSE CSI driver (GKE add-on GcsFuseCsiDriver, Workload Identity)', provides: ['gcsfuse.csi.storage.gke.io'] },
  ] else []),

  checks(ctx)::
    local target = ctx.target;
    local runtime = ctx.runtimeImpl;
    // gpusPerNode above a node's 8 GPUs: nemoc's own check (gpuNode above).
    (if std.objectHasEx(target, 'gpu', false) then [{
         code: 'profile.gpu',
         pointer: ctx.targetPointer + '/gpu',
         atKey: true,
         message: 'gke-a4 nodes are B200; remove gpu',
       }] else [])
    + (if !runtime.supportsInitContainers then [{
         code: 'profile.runtime',
         pointer: ctx.targetPointer + (if std.objectHasEx(target, 'runtime', false) then '/runtime' else ''),
         message: 'runtime ' + ctx.runtime + ' cannot add the gIB NCCL plugin init container that gke-a4 needs',
         hint: 'use runtime jobset (the default) or indexed-job',
       }] else [])
    + (if hostNetworkOf(target) && !runtime.supportsHostNetwork then [{
         code: 'profile.runtime',
         pointer: ctx.targetPointer + (if std.objectHasEx(target, 'runtime', false) then '/runtime' else ''),
         message: 'runtime ' + ctx.runtime + ' cannot run with hostNetwork',
         hint: 'set hostNetwork: false to use GKE multi-networking, or use runtime jobset',
       }] else [])
    + (if std.primitiveEquals(kueueOf(target), null) then [{
         severity: 'warning',
         code: 'profile.no-kueue',
         pointer: ctx.targetPointer,
         message: 'no kueue queue: pods go straight to kube-scheduler without gang admission or topology-aware placement',
         hint: 'set kueue: {clusterQueue: <kubectl get clusterqueues>, covers: [nvidia.com/gpu], topology: block} (Cluster Toolkit queues cover GPUs only), or clusterObjects: true',
       }] else []),
}
