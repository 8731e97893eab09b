// Platform component nvidia-device-plugin (libsonnet/component.libsonnet).
// EKS: the accelerated AMI ships the NVIDIA driver and container
// toolkit but nothing advertises nvidia.com/gpu or vpc.amazonaws.com/efa
// (C9): the NVIDIA device plugin and the EFA device plugin.
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'nvidia-device-plugin',
  repo: 'https://github.com/NVIDIA/k8s-device-plugin.git',
  tag: 'v0.20.0',
  version: 'v0.20.0',
  path: 'deployments/helm/nvidia-device-plugin',
  kind: 'helm',
  namespace: 'kube-system',
  needs: [],
  provides:: ['nvidia.com/gpu'],
}
