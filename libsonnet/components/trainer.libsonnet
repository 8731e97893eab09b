// Platform component trainer (libsonnet/component.libsonnet).
// Kubeflow Trainer v2 (TrainJob) from its chart, WITHOUT its bundled
// JobSet (jobset.install: false): JobSet is its own component, so the
// cluster runs one JobSet controller (C8). Trainer's webhooks and
// controller use the JobSet API, so JobSet comes first.
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'trainer',
  repo: 'https://github.com/kubeflow/trainer.git',
  tag: 'v2.3.0',
  version: 'v2.3.0',  // the released version targets default to (decision F2)
  path: 'charts/kubeflow-trainer',
  kind: 'helm',
  namespace: 'kubeflow-system',
  needs: ['jobset'],
  provides:: ['trainer.kubeflow.org/TrainJob', 'trainer.kubeflow.org/TrainingRuntime', 'trainer.kubeflow.org/ClusterTrainingRuntime'],
}
