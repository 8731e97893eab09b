// An Indexed batch/v1 Job: `nodes` pods with stable hostnames <job>-<index>
// under a headless Service of the same name; static torchrun rendezvous on
// index 0. No restarts: one lost rank breaks the NCCL groups, and the next
// run resumes from the newest checkpoint.
local job = import 'job.libsonnet';
local k8s = import 'k8s.libsonnet';
local launch = import 'runtimes/launch.libsonnet';

{
  describe:: 'Indexed Job (batch/v1), torchrun with static rendezvous on index 0',
  containerName: 'workload',
  port: 29500,
  supportsHostNetwork: true,
  supportsInitContainers: true,

  masterAddress(ctx, w):: w.name + '-0.' + w.name + '.' + ctx.namespace + '.svc.cluster.local',

  objects(ctx, w):: [
    launch.headlessService(k8s, ctx, w.name, w.component, { 'batch.kubernetes.io/job-name': w.name }),
    job.job(ctx, w.name, w.component, {
      parallelism: w.nodes,
      completions: w.nodes,
      completionMode: 'Indexed',
      backoffLimit: 0,
      template: {
        metadata: w.pod.metadata,
        spec: w.pod.spec {
          subdomain: w.name,
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
    }, w.workloadLabels, w.suspend),
  ],
}
