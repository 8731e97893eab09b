// Platform component kueue (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'kueue',
  repo: 'https://github.com/kubernetes-sigs/kueue.git',
  tag: 'v0.19.2',
  version: 'v0.19.2',  // the released version targets default to (decision F2)
  path: 'charts/kueue',
  kind: 'helm',
  namespace: 'kueue-system',
  needs: [],
  provides:: ['kueue.x-k8s.io/ClusterQueue', 'kueue.x-k8s.io/LocalQueue', 'kueue.x-k8s.io/ResourceFlavor', 'kueue.x-k8s.io/Topology', 'kueue.x-k8s.io/WorkloadPriorityClass'],
}
