// vanilla-k8s: a self-managed cluster with the NVIDIA GPU Operator, the
// NVIDIA Network Operator for InfiniBand/RoCE (GPUDirect RDMA through an
// extended resource and Multus networks) and NFS or an existing PVC: the
// setup of the NeMo Framework Launcher's Kubernetes support.
local fabrics = import 'nemoc/fabrics.libsonnet';
local platform = import 'nemoc/platform.libsonnet';
local profile = import 'nemoc/profile.libsonnet';

profile + {
  name: 'vanilla-k8s',
  description:: 'Self-managed Kubernetes with the NVIDIA GPU Operator, InfiniBand/RoCE through the Network Operator (rdma), NFS, PVC or hostPath storage; GPU model from gpu (default h100-80gb).',
  options:: {
    rdma: {
      description: 'InfiniBand/RoCE through the NVIDIA Network Operator (vanilla-k8s).',
      type: 'object',
      additionalProperties: false,
      properties: {
        resourceName: {
          description: 'Extended resource of the RDMA devices, e.g. nvidia.com/hostdev or rdma/rdma_shared_device_a.',
          type: 'string',
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$',
          default: 'nvidia.com/hostdev',
        },
        count: {
          description: 'RDMA devices requested per pod (requests = limits).',
          type: 'integer',
          minimum: 1,
          maximum: 64,
          default: 8,
        },
        networks: {
          description: 'Multus networks for the k8s.v1.cni.cncf.io/networks annotation, e.g. [ib-sriov-0, ib-sriov-1]. At most 32.',
          type: 'array',
          maxItems: 32,
          uniqueItems: true,
          items: {
            type: 'string',
            description: 'NetworkAttachmentDefinition name, optionally namespace/name.',
            pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
            maxLength: 253,
          },
        },
        hcas: {
          description: 'NCCL_IB_HCA value, e.g. mlx5 or =mlx5_0,mlx5_1. Default: let NCCL pick.',
          type: 'string',
          maxLength: 512,
          pattern: '^[=^]?[A-Za-z0-9_,:]+$',
        },
      },
    },
  },
  starter:: {
    // `nemoc init` without --profile writes this starter.
    default: true,
    target: 'onprem',
    accelerator: 'h100-80gb',
    storage: '        nfs: {server: nfs.example.internal, path: /export/nemo}   # or pvc: {claimName: ...}\n',
    targetLines: '      gpu: h100-80gb                 # a100-40gb | a100-80gb | h100-80gb | h200-141gb | b200-180gb\n',
    fabric: '      # GPUDirect RDMA through the NVIDIA Network Operator; without it NCCL falls back to TCP.\n'
            + '      rdma: {resourceName: nvidia.com/hostdev, count: 8, networks: [ib-sriov-net]}\n',
    clusterQueue: false,
  },
  defaults: { runtime: 'pytorchjob' },
  storageBackends: ['nfs', 'pvc', 'hostPath'],

  // The target's rdma block (schema defaults filled) or null.
  local rdmaOf(target) = if std.objectHasEx(target, 'rdma', false) then target.rdma else null,

  // The target's gpu option names the GPU model (profile.libsonnet gpuNode);
  // the node's GPU count is the cluster's, unknown to nemoc.
  gpuNode:: { option: 'gpu', default: 'h100-80gb' },
  // InfiniBand/RoCE when the target requests RDMA devices (rdma), TCP sockets
  // when not (profile.libsonnet nodeFabric; profile.tcp-fabric warns).
  nodeFabric:: { option: 'rdma', set: 'infiniband', unset: 'tcp' },

  // Cluster components this profile assumes (gitops platform bundle,
  // versions in libsonnet/platform.libsonnet). The NeMo Framework Kubernetes
  // playbook lists the GPU Operator, the Network Operator and the Kubeflow
  // Training Operator as required, each installable with Helm
  // (docs.nvidia.com/nemo-framework/user-guide/latest/playbooks/Kubernetes.html,
  // support matrix): the bundle is that installation, with the
  // NicClusterPolicy the target's rdma option needs. No clusterHas default: a
  // cluster that runs them already says so (targets[].clusterHas, issue #43),
  // and then nemoc applies no NicClusterPolicy of its own.
  platform(ctx):: ['gpu-operator'] + (if !std.primitiveEquals(rdmaOf(ctx.target), null) then ['network-operator'] else []),
  // The Network Operator's NicClusterPolicy creating the RDMA resource the target requests.
  platformObjects(ctx):: platform.components['network-operator'].nicClusterPolicy(rdmaOf(ctx.target)),
  componentValues(ctx, name)::
    if std.primitiveEquals(name, 'gpu-operator') && !std.primitiveEquals(rdmaOf(ctx.target), null) then {
      // GPUDirect RDMA: nvidia-peermem against the Network Operator's MOFED
      // (NVIDIA/gpu-operator@v26.7.0:deployments/gpu-operator/values.yaml:164-166).
      driver: { rdma: { enabled: true, useHostMofed: false } },
    } else {},
  prerequisites(ctx)::
    local rdma = rdmaOf(ctx.target);
    [
      { what: 'a pod network (CNI) and, for RDMA targets, the Multus secondary networks named in rdma.networks (HostDeviceNetwork / NetworkAttachmentDefinition)',
        provides: if !std.primitiveEquals(rdma, null) && std.objectHasEx(rdma, 'networks', false) then ['network/' + n for n in rdma.networks] else [] },
      { what: 'the NFS servers, PersistentVolumeClaims or host paths the storage section names', provides: [] },
    ],

  // Placement of single-node stage pods (data preparation, evaluation,
  // conversion, engine build, serving): GPU nodes and shared storage, no
  // inter-node fabric.
  localPlacement(ctx)::
    $.placementDefaults(ctx) + {
      // GPU Operator clusters commonly taint GPU nodes; tolerating it is harmless elsewhere.
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    },

  // Placement of multi-node workloads (training, NCCL preflight): the local
  // placement plus the RDMA fabric.
  placement(ctx, runtime)::
    local rdma = rdmaOf(ctx.target);
    local fabric = $.fabricOf(ctx.target);
    local networks = if !std.primitiveEquals(rdma, null) && std.objectHasEx(rdma, 'networks', false) then rdma.networks else [];
    $.localPlacement(ctx) + {
      annotations: if std.length(networks) > 0
      then { 'k8s.v1.cni.cncf.io/networks': std.join(',', networks) }
      else {},
      resources: if std.primitiveEquals(rdma, null) then {} else { [rdma.resourceName]: rdma.count },
      // Registering RDMA memory pins pages: IPC_LOCK is the one capability needed.
      capabilities: if std.primitiveEquals(rdma, null) then [] else ['IPC_LOCK'],
      privilegeReason: 'registering RDMA memory pins pages (IPC_LOCK)',
      env: fabrics[fabric] + (
        if !std.primitiveEquals(rdma, null) && std.objectHasEx(rdma, 'hcas', false) then { NCCL_IB_HCA: rdma.hcas } else {}
      ),
      fabric: if std.primitiveEquals(rdma, null) then 'TCP sockets on the pod network (no RDMA devices requested)'
      else 'InfiniBand/RoCE: ' + rdma.count + ' × ' + rdma.resourceName
           + (if std.length(networks) > 0 then ' on Multus networks ' + std.join(', ', networks) else '')
           + '; IPC_LOCK to pin RDMA memory',
    },
}
