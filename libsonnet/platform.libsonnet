// The platform bundle: the cluster prerequisites a target's tree relies on,
// as Argo CD Applications or Flux GitRepository + Kustomization/HelmRelease.
// Every component is taken from its upstream Git repository at a pinned tag
// (ONE table below), so both engines install the same bytes and every
// object nemoc emits has a schema in kube-schemas (Flux's HelmRepository and
// OCIRepository have none there). Tags follow the API versions nemoc's
// output is validated against (../shared/kube-schemas index sources).
local k8s = import 'k8s.libsonnet';

{
  // name -> where the component comes from and how it is installed.
  //   kind: 'kustomize' (a directory with kustomization.yaml) or 'helm' (a
  //   chart directory); Argo CD detects either from the path.
  components: {
    'gpu-operator': {
      repo: 'https://github.com/NVIDIA/gpu-operator.git',
      tag: 'v26.7.0',
      version: 'v26.7.0',  // the released version targets default to (decision F2)
      path: 'deployments/gpu-operator',
      kind: 'helm',
      namespace: 'gpu-operator',
    },
    'network-operator': {
      repo: 'https://github.com/Mellanox/network-operator.git',
      tag: 'v26.4.1',
      version: 'v26.4.1',  // the released version targets default to (decision F2)
      path: 'deployment/network-operator',
      kind: 'helm',
      namespace: 'nvidia-network-operator',
    },
    // Kubeflow Training Operator v1 (PyTorchJob, MPIJob), now kubeflow/trainer's v1 line.
    'training-operator': {
      repo: 'https://github.com/kubeflow/trainer.git',
      tag: 'v1.9.4',
      version: 'v1.9.4',  // the released version targets default to (decision F2)
      path: 'manifests/overlays/standalone',
      kind: 'kustomize',
      namespace: 'kubeflow',
    },
    // Kubeflow Trainer v2 (TrainJob) with its JobSet dependency.
    trainer: {
      repo: 'https://github.com/kubeflow/trainer.git',
      tag: 'v2.3.0',
      version: 'v2.3.0',  // the released version targets default to (decision F2)
      path: 'manifests/overlays/manager',
      kind: 'kustomize',
      namespace: 'kubeflow-system',
    },
    // The ClusterTrainingRuntimes (torch-distributed, ...) TrainJobs refer to.
    'trainer-runtimes': {
      repo: 'https://github.com/kubeflow/trainer.git',
      tag: 'v2.3.0',
      version: 'v2.3.0',  // the released version targets default to (decision F2)
      path: 'manifests/overlays/runtimes',
      kind: 'kustomize',
      namespace: 'kubeflow-system',
      after: 'trainer',
    },
    jobset: {
      repo: 'https://github.com/kubernetes-sigs/jobset.git',
      tag: 'v0.12.0',
      version: 'v0.12.0',  // the released version targets default to (decision F2)
      path: 'config/default',
      kind: 'kustomize',
      namespace: 'jobset-system',
    },
    kueue: {
      repo: 'https://github.com/kubernetes-sigs/kueue.git',
      tag: 'v0.19.2',
      version: 'v0.19.2',  // the released version targets default to (decision F2)
      path: 'config/default',
      kind: 'kustomize',
      namespace: 'kueue-system',
    },
    'prometheus-operator': {
      repo: 'https://github.com/prometheus-operator/prometheus-operator.git',
      tag: 'v0.93.0',
      version: 'v0.93.0',  // the released version targets default to (decision F2)
      path: '.',
      kind: 'kustomize',
      namespace: 'default',
    },
  },

  // component -> released version; each target's `versions` defaults to these (F2).
  versions:: { [n]: $.components[n].version for n in std.objectFields($.components) },

  // Which components a kind needs (group/Kind as in the objects).
  byKind: {
    'kubeflow.org/PyTorchJob': ['training-operator'],
    'kubeflow.org/MPIJob': ['training-operator'],
    'trainer.kubeflow.org/TrainJob': ['trainer', 'trainer-runtimes'],
    'jobset.x-k8s.io/JobSet': ['jobset'],
    'monitoring.coreos.com/ServiceMonitor': ['prometheus-operator'],
    'monitoring.coreos.com/PodMonitor': ['prometheus-operator'],
    'monitoring.coreos.com/PrometheusRule': ['prometheus-operator'],
  },

  local groupOf(apiVersion) =
    local parts = std.split(apiVersion, '/');
    if std.length(parts) == 1 then '' else parts[0],

  // Components a target needs: what its profile assumes (profile.platform,
  // e.g. the GPU Operator on vanilla-k8s) plus what the objects of its tree
  // need, found from their kinds and Kueue labels (never from stage names).
  needed(ctx, files)::
    local objects = [files[p] for p in std.objectFields(files)];
    local fromProfile = if std.objectHasEx(ctx.profile, 'platform', true) then ctx.profile.platform(ctx) else [];
    local fromKinds = std.flattenArrays([
      local key = groupOf(o.apiVersion) + '/' + o.kind;
      if std.objectHasEx($.byKind, key, false) then $.byKind[key] else []
      for o in objects
    ]);
    local queued = [
      o
      for o in objects
      if groupOf(o.apiVersion) == 'kueue.x-k8s.io'
         || (std.objectHasEx(o.metadata, 'labels', false) && std.objectHasEx(o.metadata.labels, 'kueue.x-k8s.io/queue-name', false))
    ];
    k8s.stringSet(fromProfile + fromKinds + (if std.length(queued) > 0 then ['kueue'] else [])),
}
