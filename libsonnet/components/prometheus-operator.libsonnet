// Platform component prometheus-operator (libsonnet/component.libsonnet).
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'prometheus-operator',
  repo: 'https://github.com/prometheus-operator/prometheus-operator.git',
  tag: 'v0.93.0',
  version: 'v0.93.0',  // the released version targets default to (decision F2)
  path: '.',
  kind: 'kustomize',
  namespace: 'default',
  needs: [],
  provides:: ['monitoring.coreos.com/ServiceMonitor', 'monitoring.coreos.com/PodMonitor', 'monitoring.coreos.com/PrometheusRule'],
  kinds:: ['monitoring.coreos.com/ServiceMonitor', 'monitoring.coreos.com/PodMonitor', 'monitoring.coreos.com/PrometheusRule'],
}
