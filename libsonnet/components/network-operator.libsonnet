// Platform component network-operator (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';
local has(o, f) = std.objectHasEx(o, f, true);

component + {
  name: 'network-operator',
  repo: 'https://github.com/Mellanox/network-operator.git',
  tag: 'v26.4.1',
  version: 'v26.4.1',  // the released version targets default to (decision F2)
  path: 'deployment/network-operator',
  kind: 'helm',
  namespace: 'nvidia-network-operator',
  // GPUDirect RDMA: the GPU Operator's driver loads nvidia-peermem
  // against the MOFED the Network Operator installs; its NFD labels nodes.
  needs: ['gpu-operator'],
  provides:: ['mellanox.com/NicClusterPolicy'],
  kinds:: ['mellanox.com/NicClusterPolicy'],
  singletons:: ['mellanox.com/NicClusterPolicy'],
  // The RDMA resources a NicClusterPolicy's device plugin advertises.
  objectProvides(o)::
    if !std.primitiveEquals(o.kind, 'NicClusterPolicy') then []
    else if has(o.spec, 'sriovDevicePlugin') then [
      r.resourcePrefix + '/' + r.resourceName
      for r in std.parseJson(o.spec.sriovDevicePlugin.config).resourceList
    ] else [
      'rdma/' + r.resourceName
      for r in std.parseJson(o.spec.rdmaSharedDevicePlugin.config).configList
    ],

  // The Network Operator's NicClusterPolicy creating the RDMA resource `rdma`
  // requests ({resourceName, networks?}: vanilla-k8s's rdma option, given by
  // its platformObjects through platform.components['network-operator']), or
  // nothing for null.
  nicClusterPolicy(rdma)::
    local sriov = !std.primitiveEquals(rdma, null) && std.startsWith(rdma.resourceName, 'nvidia.com/');
    // RoCE/IB shared by all pods of a node: the RDMA shared device plugin
    // (resource prefix "rdma"), Mellanox/network-operator@v26.4.1:
    // example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-full-ocp.yaml:45-63.
    local shared = !std.primitiveEquals(rdma, null) && std.startsWith(rdma.resourceName, 'rdma/');
    if sriov || shared then [{
      // Mellanox/network-operator@v26.4.1:example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-full-ocp.yaml:63-80
      // (sriovDevicePlugin resourcePrefix nvidia.com, resourceName hostdev,
      // Mellanox vendor 15b3, RDMA-capable) and hack/release.yaml (images).
      apiVersion: 'mellanox.com/v1alpha1',
      kind: 'NicClusterPolicy',
      metadata: { name: 'nic-cluster-policy', labels: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': 'nemoc-platform' } },
      spec: {
        ofedDriver: {
          image: 'doca-driver',
          repository: 'nvcr.io/nvidia/mellanox',
          version: 'doca3.4.1-26.04-1.1.0.0-1',
        },
      } + (if shared then {
        rdmaSharedDevicePlugin: {
          image: 'k8s-rdma-shared-dev-plugin',
          repository: 'nvcr.io/nvidia/mellanox',
          version: 'network-operator-v26.4.1',
          config: '' + ({
            configList: [{
              resourceName: std.substr(rdma.resourceName, 5, std.length(rdma.resourceName) - 5),
              rdmaHcaMax: 63,
              selectors: { vendors: ['15b3'] },
            }],
          }),
        },
      } else {
        sriovDevicePlugin: {
          image: 'sriov-network-device-plugin',
          repository: 'nvcr.io/nvidia/mellanox',
          version: 'network-operator-v26.4.1',
          // '' + value: libjsonnet serialises natively (std.manifestJsonEx is
          // Jsonnet code; libsonnet_test.cc keeps such calls out).
          config: '' + ({
            resourceList: [{
              resourcePrefix: 'nvidia.com',
              resourceName: std.substr(rdma.resourceName, 11, std.length(rdma.resourceName) - 11),
              selectors: { vendors: ['15b3'], isRdma: true },
            }],
          }),
        },
      }) + (if has(rdma, 'networks') && std.length(rdma.networks) > 0 then {
             // Multus + CNI plugins for the secondary networks the pods attach
             // to (hack/release.yaml:76-87). The networks themselves
             // (HostDeviceNetwork/NetworkAttachmentDefinition) have no schema in
             // kube-schemas: a cluster prerequisite named in SUMMARY.md.
             secondaryNetwork: {
               multus: { image: 'multus-cni', repository: 'nvcr.io/nvidia/mellanox', version: 'network-operator-v26.4.1' },
               cniPlugins: { image: 'plugins', repository: 'nvcr.io/nvidia/mellanox', version: 'network-operator-v26.4.1' },
             },
           } else {}),
    }] else [],
}
