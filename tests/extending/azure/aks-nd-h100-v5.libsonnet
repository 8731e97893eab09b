// AKS with ND H100 v5 GPU nodes (Standard_ND96isr_H100_v5: 8 × H100 80GB,
// 8 × 400 Gb/s NDR InfiniBand), only under --jpath: the acceptance of issue
// #48, built by tests/extending_test.cc with the nemoc binary of the commit
// before it. It reads its own options (ib, identity) with schemas of its own,
// and contributes what shared libraries need: placement with Azure Workload
// Identity's pod label, its GPU node pool's taint, the InfiniBand devices and
// the platform the cluster needs (GPU Operator, Network Operator and its
// NicClusterPolicy).
//
// Sources: Azure/aks-rdma-infiniband@700dabb configs/nicclusterpolicy/
// rdma-shared-device-plugin/rdma.yaml (resource rdma/shared_ib, Mellanox
// vendor 15b3, link type infiniband) and configs/values/gpu-operator/values.yaml
// (driver.rdma.enabled, NFD off: the Network Operator's); Azure/azure-workload-
// identity docs/book/src/topics/service-account-labels-and-annotations.md (pod
// label azure.workload.identity/use: "true", required; service account
// annotation azure.workload.identity/client-id); AKS GPU node pools
// conventionally tainted sku=gpu:NoSchedule.
local fabrics = import 'nemoc/fabrics.libsonnet';
local profile = import 'nemoc/profile.libsonnet';

profile + {
  name: 'aks-nd-h100-v5',
  description:: 'AKS with ND H100 v5 nodes: InfiniBand through the Network Operator (ib), Azure Workload Identity (identity), NFS or PVC storage.',
  options:: {
    ib: {
      description: 'InfiniBand through the NVIDIA Network Operator\'s RDMA shared device plugin (aks-nd-h100-v5).',
      type: 'object',
      additionalProperties: false,
      properties: {
        devices: {
          description: 'rdma/shared_ib devices requested per pod (one shared device gives the pod every HCA).',
          type: 'integer',
          minimum: 1,
          maximum: 8,
          default: 1,
        },
      },
    },
    identity: {
      description: 'Azure Workload Identity: the client ID of the user-assigned managed identity the pods run as (aks-nd-h100-v5).',
      type: 'object',
      additionalProperties: false,
      required: ['clientId'],
      properties: {
        clientId: {
          type: 'string',
          pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
          description: 'A GUID, e.g. 00000000-0000-0000-0000-000000000000.',
        },
      },
    },
  },
  starter:: {
    target: 'aks',
    accelerator: 'h100-80gb',
    storage: '        nfs: {server: nfs.example.internal, path: /export/nemo}\n',
    targetLines: '      ib: {devices: 1}\n      identity: {clientId: 00000000-0000-0000-0000-000000000000}\n',
    fabric: '      # InfiniBand through the Network Operator (rdma/shared_ib).\n',
    clusterQueue: false,
  },
  defaults: { runtime: 'volcano-job' },
  storageBackends: ['nfs', 'pvc'],
  gpuNode:: { fixed: { accelerator: 'h100-80gb', gpus: 8, name: 'a Standard_ND96isr_H100_v5 node' } },
  // InfiniBand when the target requests devices (ib), TCP when not: nemoc's
  // own profile.tcp-fabric warns about multi-node training over TCP.
  nodeFabric:: { option: 'ib', set: 'infiniband', unset: 'tcp' },

  local ibOf(target) = if std.objectHasEx(target, 'ib', false) then target.ib else null,
  local identityOf(target) = if std.objectHasEx(target, 'identity', false) then target.identity else null,

  platform(ctx):: ['gpu-operator'] + (if std.primitiveEquals(ibOf(ctx.target), null) then [] else ['network-operator']),
  componentValues(ctx, name)::
    if std.primitiveEquals(name, 'gpu-operator') && !std.primitiveEquals(ibOf(ctx.target), null) then {
      driver: { rdma: { enabled: true, useHostMofed: false } },
    } else {},
  platformObjects(ctx):: if std.primitiveEquals(ibOf(ctx.target), null) then [] else [{
    apiVersion: 'mellanox.com/v1alpha1',
    kind: 'NicClusterPolicy',
    metadata: { name: 'nic-cluster-policy', labels: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': 'nemoc-platform' } },
    spec: {
      ofedDriver: { image: 'doca-driver', repository: 'nvcr.io/nvidia/mellanox', version: 'doca3.4.1-26.04-1.1.0.0-1' },
      rdmaSharedDevicePlugin: {
        image: 'k8s-rdma-shared-dev-plugin',
        repository: 'nvcr.io/nvidia/mellanox',
        version: 'network-operator-v26.4.1',
        config: '' + ({ configList: [{ resourceName: 'shared_ib', rdmaHcaMax: 63, selectors: { vendors: ['15b3'], linkTypes: ['infiniband'] } }] }),
      },
    },
  }],
  prerequisites(ctx):: [
    { what: 'an AKS node pool of Standard_ND96isr_H100_v5 nodes created with --skip-gpu-driver-install and tainted sku=gpu:NoSchedule, on one InfiniBand network (feature AKSInfinibandSupport)', provides: [] },
  ] + (if std.primitiveEquals(identityOf(ctx.target), null) then [] else [
    { what: 'the Workload Identity add-on and OIDC issuer on the cluster, and a federated credential of managed identity ' + identityOf(ctx.target).clientId + ' for service account system:serviceaccount:' + ctx.namespace + ':<project>', provides: [] },
  ]),

  localPlacement(ctx):: $.placementDefaults(ctx) + {
    nodeSelector: { 'node.kubernetes.io/instance-type': 'Standard_ND96isr_H100_v5' } + ctx.target.nodeSelector,
    tolerations: [{ key: 'sku', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    // Only pods with this label get the identity's token and environment from
    // the Workload Identity webhook.
    podLabels: if std.primitiveEquals(identityOf(ctx.target), null) then {} else { 'azure.workload.identity/use': 'true' },
  },
  placement(ctx, runtime)::
    local ib = ibOf(ctx.target);
    $.localPlacement(ctx) + { env: fabrics[$.fabricOf(ctx.target)] } + (if std.primitiveEquals(ib, null) then {
      fabric: 'TCP sockets on the pod network (no InfiniBand devices requested)',
    } else {
      resources: { 'rdma/shared_ib': ib.devices },
      capabilities: ['IPC_LOCK'],
      privilegeReason: 'registering RDMA memory pins pages (IPC_LOCK)',
      fabric: 'InfiniBand (NDR): ' + ib.devices + ' × rdma/shared_ib; IPC_LOCK to pin RDMA memory',
    }),
  serviceAccountAnnotations(ctx)::
    if std.primitiveEquals(identityOf(ctx.target), null) then {} else { 'azure.workload.identity/client-id': identityOf(ctx.target).clientId },
  workloadIdentity(ctx):: !std.primitiveEquals(identityOf(ctx.target), null),
}
