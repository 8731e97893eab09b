// The one constructor of batch/v1 Jobs: every stage and the indexed-job
// runtime build their Jobs here, so naming rules for Jobs (GitOps needs a new
// name when an immutable Job changes) apply in one place. No
// ttlSecondsAfterFinished: Argo CD and Flux would re-create a deleted Job and
// run it again.
local k8s = import 'nemoc/k8s.libsonnet';

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

  // Field review C4: Flux cannot wait on a Kueue-queued batch/v1 Job. Its Job
  // status reader reads a Job with spec.suspend: true as Current
  // (fluxcd/pkg e2cfd1a runtime/statusreaders/job.go jobConditions), and
  // kustomize-controller v1.9.4 puts that reader before the CEL readers of
  // healthCheckExprs (internal/controller/kustomization_controller.go
  // getClientAndPoller; the poller takes the first reader that supports the
  // GroupKind), so no expression can change the verdict: the next stage
  // would start while the Job waits in the queue. A single-pod stage Job of a
  // Flux-delivered, Kueue-queued target is therefore one replicated Job of a
  // JobSet, which Flux reads through nemoc's JobSet healthCheckExprs
  // (suspended = in progress; gitops.libsonnet) and Kueue queues as one
  // workload (jobset.x-k8s.io/jobset, on by default in Kueue v0.19.2).
  wrapsInJobSet(ctx, suspend)::
    suspend && std.objectHasEx(ctx.spec, 'gitops', false) && std.member(ctx.spec.gitops.engines, 'flux'),

  // The replicated Job of such a JobSet: its Job is <name>-run-0
  // (kubernetes-sigs/jobset v0.12.0 pkg/webhooks/jobset_webhook.go: the
  // longest generated Job name must be a DNS-1035 label, <= 63); nemoc's
  // output verifier (compiler/output_verifier.cc SuffixBudget) also keeps
  // room for the pod index of <name>-run-0-0.
  replicatedJob:: 'run',
  maxNameInJobSet:: 63 - std.length('-' + $.replicatedJob + '-0-0'),

  // A single-pod stage Job, or its JobSet (see wrapsInJobSet).
  stageJob(ctx, name, component, spec, workloadLabels={}, suspend=false)::
    if !$.wrapsInJobSet(ctx, suspend) then $.job(ctx, name, component, spec, workloadLabels, suspend)
    else {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: k8s.metadata(ctx, name, component) + { labels+: workloadLabels },
      spec: {
        suspend: true,
        // The Job's own backoffLimit retries the pod; the set is not restarted.
        failurePolicy: { maxRestarts: 0 },
        // One pod, no peers: no headless Service.
        network: { enableDNSHostnames: false },
        replicatedJobs: [{ name: $.replicatedJob, replicas: 1, template: { spec: spec } }],
      },
    },
}
