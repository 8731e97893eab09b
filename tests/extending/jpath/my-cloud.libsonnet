// A profile that exists only under --jpath: the worked example of
// docs/extending.md, built by tests/extending_test.cc. It uses every member
// of the profile contract (libsonnet/profile.libsonnet); each has an effect
// the test looks for.
local profile = import 'nemoc/profile.libsonnet';

profile + {
  // Identity: the file name without .libsonnet.
  name: 'my-cloud',
  description:: 'A cloud of GPU nodes in two zones (zone), NFS storage and a Kueue flavor per zone.',

  // Target options: spec.targets[].zone, validated by nemoc with this schema,
  // its default filled, refused on targets of other profiles.
  options:: {
    zone: {
      description: 'The zone of the GPU nodes (my-cloud): a or b.',
      type: 'string',
      enum: ['a', 'b'],
      default: 'a',
    },
  },

  // nemoc init --jpath DIR --profile my-cloud NAME.
  starter:: {
    target: 'lab',
    accelerator: 'a100-80gb',
    storage: '        nfs: {server: nfs.lab.internal, path: /export/nemo}\n',
    targetLines: '      zone: b                        # a | b\n',
    fabric: '      # Several nodes talk over TCP on eth0 (placement env).\n',
    clusterQueue: false,
  },

  defaults: { runtime: 'jobset' },
  gpuResource: 'example.com/gpu',
  storageBackends: ['nfs'],
  gpuNode:: { fixed: { accelerator: 'a100-80gb' } },
  // Its nodes talk over TCP on eth0: nemoc warns about multi-node training
  // (profile.tcp-fabric) as for every profile whose fabric is 'tcp'.
  nodeFabric:: { fixed: 'tcp' },

  // Placement: every field of the record from placementDefaults, plus the
  // zone's nodes and their taint.
  localPlacement(ctx):: $.placementDefaults(ctx) + {
    nodeSelector: { 'example.com/zone': ctx.target.zone } + ctx.target.nodeSelector,
    tolerations: [{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    // A pod label the cloud's identity webhook selects pods by (as Azure
    // Workload Identity's azure.workload.identity/use: "true").
    podLabels: { 'example.com/workload-identity': 'true' },
  },
  placement(ctx, runtime):: $.localPlacement(ctx) + {
    // What the runtime says about itself reaches the pods.
    annotations: { 'example.com/pod-sets': if runtime.multiplePodSets then 'several' else 'one' },
    env: { NCCL_SOCKET_IFNAME: 'eth0' },
    fabric: 'TCP sockets on eth0 in zone ' + ctx.target.zone,
  },
  serviceAccountAnnotations(ctx):: { 'example.com/zone': ctx.target.zone },

  // Platform needs: the GPU Operator (without its driver: the node image has
  // one), a Kueue ResourceFlavor per zone, and what the cluster must have.
  platform(ctx):: ['gpu-operator'],
  shipsGpuDriver:: true,
  // The cloud's own chart values: its nodes run containerd.
  componentValues(ctx, name):: if name == 'gpu-operator' then { operator: { defaultRuntime: 'containerd' } } else {},
  platformObjects(ctx):: [{
    apiVersion: 'kueue.x-k8s.io/v1beta1',
    kind: 'ResourceFlavor',
    metadata: {
      name: 'my-cloud-zone-' + ctx.target.zone,
      labels: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': 'nemoc-platform' },
    },
    spec: { nodeLabels: { 'example.com/zone': ctx.target.zone } },
  }],
  prerequisites(ctx):: [
    { what: 'GPU nodes labelled example.com/zone=' + ctx.target.zone + ' with an NVIDIA driver', provides: ['example.com/gpu'] },
  ],

  // Checks: located at the spec's own lines.
  checks(ctx)::
    (if ctx.target.zone == 'b' && std.objectHasEx(ctx.spec.stages, 'train', false) && ctx.spec.stages.train.nodes > 1 then [{
       severity: 'warning',
       code: 'profile.zone',
       pointer: ctx.targetPointer + '/zone',
       message: 'multi-node training in zone b crosses its two racks over TCP',
     }] else [])
    + (if !ctx.runtimeImpl.supportsInitContainers then [{
         code: 'profile.runtime',
         pointer: ctx.targetPointer + '/runtime',
         message: 'my-cloud pods need init containers',
       }] else []),
}
