// The training workload APIs a target can choose (spec targets[].runtime).
// Each provides objects(ctx, w) for the workload contract built in
// stages/train.libsonnet, plus what it can and cannot carry.
{
  pytorchjob: import 'runtimes/pytorchjob.libsonnet',
  trainjob: import 'runtimes/trainjob.libsonnet',
  jobset: import 'runtimes/jobset.libsonnet',
  'indexed-job': import 'runtimes/indexed-job.libsonnet',
}
