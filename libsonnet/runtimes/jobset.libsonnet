// JobSet (jobset.x-k8s.io/v1alpha2): one replicated Job "node" of `nodes`
// indexed pods, restarted as a whole by failurePolicy. Static torchrun
// rendezvous on pod 0, addressed through the JobSet controller's headless
// Service in the spec's namespace (the upstream A4 chart hard-codes "default").
local k8s = import 'k8s.libsonnet';
local launch = import 'runtimes/launch.libsonnet';

{
  describe:: 'JobSet (jobset.x-k8s.io/v1alpha2), torchrun with static rendezvous on pod 0',
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
        failurePolicy: { maxRestarts: w.restarts },
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
