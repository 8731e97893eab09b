// An Indexed batch/v1 Job: `nodes` pods with stable hostnames <job>-<index>
// under a headless Service of the same name; static torchrun rendezvous on
// index 0. `restarts` (B14) is honoured per index, see restartPolicy() below.
local job = import 'nemoc/job.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local launch = import 'nemoc/launch.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

runtime + {
  name: 'indexed-job',
  describe:: 'Indexed Job (batch/v1), torchrun with static rendezvous on index 0',
  // A batch/v1 Job: gitops.libsonnet judges Jobs itself, the cluster has the
  // controller, and its pod names follow the core rule (<job>-<index>).
  workload:: { kind: 'batch/Job', health: null },
  kueueIntegration:: 'batch/job',
  containerName: 'workload',
  port: 29500,
  supportsHostNetwork: true,
  supportsInitContainers: true,

  // How `restarts` reaches a batch/v1 Job (k8s.io/api v0.34.0 batch/v1/types.go).
  // A Job cannot restart its pods together: it replaces a failed pod of an
  // index with a new pod of the same index (same hostname <job>-<index>), so
  // this is NOT the gang restart of the jobset runtime (failurePolicy
  // maxRestarts recreates every pod). When one rank fails, the others fail on
  // their broken NCCL communicators and are replaced in turn; the new pods
  // meet again in the static rendezvous on index 0 and resume from the newest
  // checkpoint. So one failure of the whole gang costs every index one retry
  // (a replacement that starts while the old ranks still hang can cost its
  // index one more), and the limit is set per index:
  //  - backoffLimitPerIndex: restarts (:362; needs completionMode Indexed and
  //    restartPolicy Never), backoffLimit then defaults to MaxInt32 (:353);
  //  - maxFailedIndexes: 0 (:373): the first index out of retries fails the
  //    Job, which terminates the other ranks instead of leaving them hung;
  //  - podFailurePolicy (:338) Ignore on the DisruptionTarget condition (:136):
  //    a preempted, evicted or drained pod is replaced without using a retry;
  //  - podReplacementPolicy: Failed (:460, the only value allowed with a
  //    podFailurePolicy): a replacement starts only once the old pod is gone,
  //    so two pods never answer for one hostname.
  // restarts 0 keeps backoffLimit 0: the first failed pod fails the Job.
  // Choose the jobset runtime for whole-gang restarts.
  restartPolicy(w)::
    if std.primitiveEquals(w.restarts, 0) then { backoffLimit: 0 }
    else {
      backoffLimitPerIndex: w.restarts,
      maxFailedIndexes: 0,
      podReplacementPolicy: 'Failed',
      podFailurePolicy: {
        rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
      },
    },

  masterAddress(ctx, w):: w.name + '-0.' + w.name + '.' + ctx.namespace + '.svc.cluster.local',

  // Objects the workload needs applied before it (00-base): none.
  baseObjects(ctx, w):: [],

  objects(ctx, w):: [
    launch.headlessService(k8s, ctx, w.name, w.component, { 'batch.kubernetes.io/job-name': w.name }),
    job.job(ctx, w.name, w.component, {
      parallelism: w.nodes,
      completions: w.nodes,
      completionMode: 'Indexed',
    } + $.restartPolicy(w)
    // batch/v1 Job: Failed with reason DeadlineExceeded; the timer restarts
    // when a suspended Job resumes (k8s.io/api batch/v1 JobSpec
    // activeDeadlineSeconds, ../shared/kube-schemas/job-batch-v1.json).
    + (if std.objectHasEx(w, 'deadlineSeconds', false) then { activeDeadlineSeconds: w.deadlineSeconds } else {}) + {
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
