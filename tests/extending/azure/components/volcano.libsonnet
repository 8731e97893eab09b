// Volcano (scheduler, job controller, admission webhook), a platform
// component under --jpath: what runtimes/volcano-job.libsonnet's kind needs.
// volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano (Chart.yaml: chart
// volcano 1.15.1; values.yaml:14 basic.image_tag_version "v1.15.1", the
// images docker.io/volcanosh/vc-{controller-manager,scheduler,webhook-manager}).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'volcano',
  repo: 'https://github.com/volcano-sh/volcano.git',
  tag: 'v1.15.1',
  version: 'v1.15.1',
  path: 'installer/helm/chart/volcano',
  kind: 'helm',
  namespace: 'volcano-system',
  provides:: ['batch.volcano.sh/Job', 'scheduling.volcano.sh/PodGroup', 'scheduling.volcano.sh/Queue'],
  release:: {
    release: 'chart volcano 1.15.1 (https://volcano-sh.github.io/helm-charts)',
    // The released images by tag, pulled only when missing.
    pins: { 'basic.image_tag_version': 'v1.15.1', 'basic.image_pull_policy': 'IfNotPresent' },
  },
}
