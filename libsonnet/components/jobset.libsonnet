// Platform component jobset (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'jobset',
  repo: 'https://github.com/kubernetes-sigs/jobset.git',
  tag: 'v0.12.0',
  version: 'v0.12.0',  // the released version targets default to (decision F2)
  path: 'charts/jobset',
  kind: 'helm',
  namespace: 'jobset-system',
  needs: [],
  provides:: ['jobset.x-k8s.io/JobSet'],
}
