// A runtime that exists only under --jpath: the worked example of
// docs/extending.md, built by tests/extending_test.cc. It uses every member
// of the runtime contract (libsonnet/runtime.libsonnet): the workload runs as
// a JobSet whose replicated job is "rank", with a launch ConfigMap applied
// before it.
local jobset = import 'nemoc/runtimes/jobset.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

local asRanks = jobset + { replicatedJob: 'rank' };

runtime + {
  name: 'my-runtime',
  describe:: 'JobSet of replicated job rank, launch settings in a ConfigMap (a runtime of your own)',
  // The kind it emits, judged as the built-in jobset runtime judges it (one
  // kind has one health in a cluster's Argo CD).
  workload:: { kind: 'jobset.x-k8s.io/JobSet', health: jobset.workload.health },
  // Its pods are gang-scheduled by a component of your own
  // (components/my-scheduler.libsonnet).
  platform:: { 'jobset.x-k8s.io/JobSet': ['jobset', 'my-scheduler'] },
  kueueIntegration:: 'jobset.x-k8s.io/jobset',
  multiplePodSets:: true,
  supportsHostNetwork:: false,
  supportsInitContainers:: true,

  baseObjects(ctx, w):: [{
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: k8s.metadata(ctx, w.name + '-launch', w.component),
    data: { nodes: std.toString(w.nodes), gpusPerNode: std.toString(w.gpusPerNode) },
  }],
  objects(ctx, w):: asRanks.objects(ctx, w),
  // <jobset>-rank-0-<pod index>, as the JobSet controller names pods.
  podNameSuffix(o):: asRanks.podNameSuffix(o),
}
