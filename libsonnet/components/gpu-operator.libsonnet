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
  kinds:: ['nvidia.com/ClusterPolicy'],
  values(ctx):: {
    // One NFD in the cluster: the GPU Operator's (the Network Operator's is off).
    nfd: { enabled: true },
    // dcgm-exporter labels each GPU series with the workload's pod and
    // namespace (NVIDIA/dcgm-exporter 4.5.3-4.8.2
    // internal/pkg/transformation/const.go:21-22); with the chart's default
    // honorLabels: false (NVIDIA/gpu-operator@v26.7.0
    // deployments/gpu-operator/values.yaml:325-329, applied to the
    // ServiceMonitor endpoint by controllers/object_controls.go:5002-5003)
    // Prometheus renames them exported_pod/exported_namespace and the
    // training alerts (05-monitoring) would match the exporter's own pod.
    dcgmExporter: { serviceMonitor: { honorLabels: true } },
    driver: {
      // Clouds whose GPU node images ship the driver (profile.shipsGpuDriver).
      enabled: !ctx.profile.shipsGpuDriver,
    },
  },
}
