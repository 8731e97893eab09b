// Platform component training-operator (libsonnet/component.libsonnet).
// Kubeflow Training Operator v1 (PyTorchJob, MPIJob), now kubeflow/trainer's v1 line.
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'training-operator',
  repo: 'https://github.com/kubeflow/trainer.git',
  tag: 'v1.9.4',
  version: 'v1.9.4',  // the released version targets default to (decision F2)
  path: 'manifests/overlays/standalone',
  kind: 'kustomize',
  namespace: 'kubeflow',
  needs: [],
  provides:: ['kubeflow.org/PyTorchJob', 'kubeflow.org/MPIJob'],
  // PyTorchJob is the pytorchjob runtime's to declare (runtimes/pytorchjob.libsonnet platform).
  kinds:: ['kubeflow.org/MPIJob'],
}
