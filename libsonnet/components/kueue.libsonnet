// Platform component kueue (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';
local kueue = import 'nemoc/kueue.libsonnet';

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
  minimumVersion:: {
    version: 'v0.15.0',
    why: "nemoc's LocalQueue, ClusterQueue, ResourceFlavor and Topology are kueue.x-k8s.io/v1beta2, first served by "
         + 'Kueue v0.15.0 (kubernetes-sigs/kueue v0.15.0 apis/kueue/v1beta2; absent at v0.14.0)',
  },
  groups:: ['kueue.x-k8s.io'],
  labels:: ['kueue.x-k8s.io/queue-name'],
  // The integrations and feature gates the targets' workloads need (kueue.libsonnet).
  values(ctx):: kueue.chartValues(ctx),
  existingNote(ctx):: kueue.existingNote(ctx),
}
