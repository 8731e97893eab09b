// Platform component gpu-operator (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'gpu-operator',
  repo: 'https://github.com/NVIDIA/gpu-operator.git',
  tag: 'v26.7.0',
  version: 'v26.7.0',  // the released version targets default to (decision F2)
  path: 'deployments/gpu-operator',
  kind: 'helm',
  namespace: 'gpu-operator',
  needs: [],
  // dcgmExporter.enabled: true (v26.7.0 values.yaml:299-300).
  provides:: ['nvidia.com/gpu', 'nvidia.com/ClusterPolicy', 'DCGM_FI_*'],
}
