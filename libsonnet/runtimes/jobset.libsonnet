// JobSet (jobset.x-k8s.io/v1alpha2): one replicated Job "node" of `nodes`
// indexed pods, restarted as a whole by failurePolicy. Static torchrun
// rendezvous on pod 0, addressed through the JobSet controller's headless
// Service in the spec's namespace (the upstream A4 chart hard-codes "default").
local k8s = import 'nemoc/k8s.libsonnet';
local launch = import 'nemoc/launch.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

runtime + {
  name: 'jobset',
  describe:: 'JobSet (jobset.x-k8s.io/v1alpha2), torchrun with static rendezvous on pod 0',
  workload:: {
    kind: 'jobset.x-k8s.io/JobSet',
    health: $.conditionHealth('/spec/suspend', 'Completed', 'Failed'),
  },
  platform:: { 'jobset.x-k8s.io/JobSet': ['jobset'] },
  kueueIntegration:: 'jobset.x-k8s.io/jobset',
  // Pods <jobset>-<replicatedJob>-<job index>-<pod index> (the JobSet controller).
  podNameSuffix(o):: $.replicatedJobsSuffix(std.get(std.get(o, 'spec', {}), 'replicatedJobs', [])),
  replicatedJobsSuffix(jobs):: std.foldl(std.max, [
    local pods = std.get(std.get(std.get(rj, 'template', {}), 'spec', {}), 'completions', 1);
    3 + std.length(std.get(rj, 'name', '')) + std.length(std.toString(std.max(0, std.get(rj, 'replicas', 1) - 1)))
    + std.length(std.toString(std.max(0, pods - 1)))
    for rj in jobs
  ], 0),
  containerName: 'workload',
  port: 29500,
  replicatedJob: 'node',
  supportsHostNetwork: true,
  supportsInitContainers: true,

  masterAddress(ctx, w)::
    w.name + '-' + $.replicatedJob + '-0-0.' + w.name + '.' + ctx.namespace + '.svc.cluster.local',

  // No Service of nemoc's own (B15): with enableDNSHostnames the JobSet controller
  // creates the headless Service named after the subdomain, owned by the JobSet
  // (kubernetes-sigs/jobset v0.12.0 pkg/controllers/jobset_controller.go:788
  // createHeadlessSvcIfNecessary: clusterIP None, selector jobset-name,
  // publishNotReadyAddresses from spec.network). A Git-managed Service of that
  // name would be adopted by the JobSet and garbage-collected with it.
  // Objects the workload needs applied before it (00-base): none.
  baseObjects(ctx, w):: [],

  objects(ctx, w):: [
    {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: k8s.metadata(ctx, w.name, w.component) + { labels+: w.workloadLabels },
      spec: {
        // The whole set restarts together: NCCL groups cannot lose one rank.
        // `restarts` (B14) is maxRestarts, restart strategy Recreate by default
        // (kubernetes-sigs/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go:482,487);
        // the Job's backoffLimit 0 hands every pod failure to this policy.
        // stages.train.timeout (F17): each Job of the set has the deadline, and
        // a Job that exceeds it fails the whole set instead of restarting it
        // (jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go FailurePolicyRule,
        // onJobFailureReasons; batch/v1 reason DeadlineExceeded).
        failurePolicy: { maxRestarts: w.restarts } + (if !std.objectHasEx(w, 'deadlineSeconds', false) then {} else {
          rules: [{ name: 'deadline', action: 'FailJobSet', onJobFailureReasons: ['DeadlineExceeded'] }],
        }),
        network: { enableDNSHostnames: true, subdomain: w.name, publishNotReadyAddresses: true },
        replicatedJobs: [{
          name: $.replicatedJob,
          replicas: 1,
          template: {
            spec: {
              parallelism: w.nodes,
              completions: w.nodes,
              completionMode: 'Indexed',
              backoffLimit: 0,
            } + (if std.objectHasEx(w, 'deadlineSeconds', false) then { activeDeadlineSeconds: w.deadlineSeconds } else {}) + {
              template: {
                metadata: w.pod.metadata,
                spec: w.pod.spec {
                  restartPolicy: 'Never',
                  containers: [w.container + launch.container(
                    launch.staticArgs(w, $.masterAddress(ctx, w), $.port), w.program, w.prologue
                  ) + {
                    name: $.containerName,
                    env+: [launch.completionIndexEnv],
                    ports: [{ name: 'rendezvous', containerPort: $.port, protocol: 'TCP' }],
                  }],
                },
              },
            },
          },
        }],
      } + (if w.suspend then { suspend: true } else {}),
    },
  ],
}
