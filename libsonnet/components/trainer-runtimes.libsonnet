// Platform component trainer-runtimes (libsonnet/component.libsonnet).
// The ClusterTrainingRuntimes (torch-distributed, ...) TrainJobs refer to.
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'trainer-runtimes',
  repo: 'https://github.com/kubeflow/trainer.git',
  tag: 'v2.3.0',
  version: 'v2.3.0',  // the released version targets default to (decision F2)
  path: 'manifests/overlays/runtimes',
  kind: 'kustomize',
  namespace: 'kubeflow-system',
  needs: ['trainer'],  // the ClusterTrainingRuntime CRD and webhook
  provides:: [],
}
