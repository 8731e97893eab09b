// Platform component efa-device-plugin (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'efa-device-plugin',
  // aws/eks-charts publishes the chart (v0.5.30, image v0.5.20) from its
  // repository; v0.0.242 is the repository tag holding that chart.
  repo: 'https://github.com/aws/eks-charts.git',
  tag: 'v0.0.242',
  version: 'v0.5.30',
  path: 'stable/aws-efa-k8s-device-plugin',
  kind: 'helm',
  namespace: 'kube-system',
  needs: [],
  provides:: ['vpc.amazonaws.com/efa'],
}
