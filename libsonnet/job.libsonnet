// The one constructor of batch/v1 Jobs: every stage and the indexed-job
// runtime build their Jobs here, so naming rules for Jobs (GitOps needs a new
// name when an immutable Job changes) apply in one place. No
// ttlSecondsAfterFinished: Argo CD and Flux would re-create a deleted Job and
// run it again.
local k8s = import 'k8s.libsonnet';

{
  // spec: the Job spec (template, backoffLimit, completions...). workloadLabels
  // and suspend come from the profile's placement: under Kueue the queue label
  // and suspend: true, which Kueue flips when it admits the Job.
  job(ctx, name, component, spec, workloadLabels={}, suspend=false):: {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: k8s.metadata(ctx, name, component) + { labels+: workloadLabels },
    spec: spec + (if suspend then { suspend: true } else {}),
  },
}
