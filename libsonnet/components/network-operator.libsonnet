// Platform component network-operator (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

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
}
