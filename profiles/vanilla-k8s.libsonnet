// vanilla-k8s: a self-managed cluster with the NVIDIA GPU Operator, the
// NVIDIA Network Operator for InfiniBand/RoCE (GPUDirect RDMA through an
// extended resource and Multus networks) and NFS or an existing PVC: the
// setup of the NeMo Framework Launcher's Kubernetes support.
local chain = import 'stages/chain.libsonnet';
local fabrics = import 'fabrics.libsonnet';
local kueue = import 'kueue.libsonnet';
local storage = import 'storage.libsonnet';

{
  name: 'vanilla-k8s',
  // What `nemoc schema` and `nemoc explain` say about this profile, and the target
  // fields only it reads (scripts/update-schema-catalogue; checks.cc refuses them on
  // the other built-in profiles: spec.wrong-profile).
  description:: 'Self-managed Kubernetes with the NVIDIA GPU Operator, InfiniBand/RoCE through the Network Operator (rdma), NFS, PVC or hostPath storage; GPU model from gpu (default h100-80gb).',
  targetFields:: ['rdma'],
  defaults: { runtime: 'pytorchjob' },
  gpuResource: 'nvidia.com/gpu',
  storageBackends: ['nfs', 'pvc', 'hostPath'],

  // The target's rdma block (schema defaults filled) or null.
  local rdmaOf(target) = if std.objectHasEx(target, 'rdma', false) then target.rdma else null,

  accelerator(ctx):: if std.objectHasEx(ctx.target, 'gpu', false) then ctx.target.gpu else 'h100-80gb',

  // Cluster components this profile assumes (gitops platform bundle,
  // versions in libsonnet/platform.libsonnet).
  platform(ctx):: ['gpu-operator'] + (if rdmaOf(ctx.target) != null then ['network-operator'] else []),

  // Placement of single-node stage pods (data preparation, evaluation,
  // conversion, engine build, serving): GPU nodes and shared storage, no
  // inter-node fabric.
  localPlacement(ctx)::
    local pod = storage.pod(ctx);
    {
      annotations: {},
      workloadLabels: kueue.workloadLabels(ctx),
      // Kueue admits the workload by flipping suspend to false.
      suspend: kueue.suspend(ctx),
      resources: {},
      capabilities: [],
      privilegeReason: '',
      privileged: false,
      hostNetwork: false,
      env: {},
      nodeSelector: ctx.target.nodeSelector,
      // GPU Operator clusters commonly taint GPU nodes; tolerating it is harmless elsewhere.
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      initContainers: [],
      volumes: pod.volumes,
      mounts: pod.mounts,
      prologue: null,
      fabric: 'none (single node)',
    },

  // Placement of multi-node workloads (training, NCCL preflight): the local
  // placement plus the RDMA fabric.
  placement(ctx, runtime)::
    local rdma = rdmaOf(ctx.target);
    local fabric = if rdma == null then 'tcp' else 'infiniband';
    local networks = if rdma != null && std.objectHasEx(rdma, 'networks', false) then rdma.networks else [];
    $.localPlacement(ctx) + {
      annotations: if std.length(networks) > 0
      then { 'k8s.v1.cni.cncf.io/networks': std.join(',', networks) }
      else {},
      resources: if rdma == null then {} else { [rdma.resourceName]: rdma.count },
      // Registering RDMA memory pins pages: IPC_LOCK is the one capability needed.
      capabilities: if rdma == null then [] else ['IPC_LOCK'],
      privilegeReason: 'registering RDMA memory pins pages (IPC_LOCK)',
      env: fabrics[fabric] + (
        if rdma != null && std.objectHasEx(rdma, 'hcas', false) then { NCCL_IB_HCA: rdma.hcas } else {}
      ),
      fabric: if rdma == null then 'TCP sockets on the pod network (no RDMA devices requested)'
      else 'InfiniBand/RoCE: ' + rdma.count + ' × ' + rdma.resourceName
           + (if std.length(networks) > 0 then ' on Multus networks ' + std.join(', ', networks) else '')
           + '; IPC_LOCK to pin RDMA memory',
    },

  serviceAccountAnnotations(ctx):: {},

  diagnostics(ctx)::
    (if std.length([k for k in chain.present(ctx) if ctx.spec.stages[k].nodes > 1]) > 0 && rdmaOf(ctx.target) == null then [{
       severity: 'warning',
       code: 'profile.no-rdma',
       pointer: ctx.targetPointer,
       message: 'multi-node training without RDMA devices: NCCL will use TCP sockets',
       hint: 'request InfiniBand/RoCE devices with rdma: {resourceName: nvidia.com/hostdev, count: 8}',
     }] else [])
    + storage.check(ctx, $.storageBackends),
}
