// A Volcano Job runtime (batch.volcano.sh/v1alpha1), only under --jpath: the
// acceptance of issue #48, built by tests/extending_test.cc with the nemoc
// binary of the commit before it. Everything Volcano-specific is here and in
// components/volcano.libsonnet; read at volcano-sh/volcano v1.15.1.
//
// One task "worker" of `nodes` pods, gang-scheduled by the Volcano scheduler
// (minAvailable = nodes); the whole job restarts on a pod failure, up to
// maxRetry = restarts, then fails. Static torchrun rendezvous on worker 0,
// addressed through the headless Service of Volcano's svc plugin (hostname
// = pod name, subdomain = job name: pkg/controllers/job/plugins/svc/svc.go:86-90);
// the node rank is the task index Volcano annotates each pod with
// (volcano.sh/task-index: pkg/controllers/job/job_controller_util.go:111,
// staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/labels.go:23).
local k8s = import 'nemoc/k8s.libsonnet';
local launch = import 'nemoc/launch.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

runtime + {
  name: 'volcano-job',
  describe:: 'Volcano Job (batch.volcano.sh/v1alpha1), gang-scheduled, torchrun with static rendezvous on worker 0',
  workload:: {
    kind: 'batch.volcano.sh/Job',
    // The job reports a phase, not conditions: status.state.phase, one of
    // Pending, Aborting, Aborted, Running, Restarting, Completing, Completed,
    // Terminating, Terminated, Failed (staging/src/volcano.sh/apis/pkg/apis/
    // batch/v1alpha1/job.go:310-328). Completed ends it well; Failed (maxRetry
    // restarts used up), Aborted and Terminated end it badly; the rest, and a
    // job without a status yet, are progress. Kueue never suspends it.
    health: {
      suspend: null,
      lua: 'hs = {}\n'
           + 'hs.status = "Progressing"\n'
           + 'hs.message = "waiting for the Volcano job controller"\n'
           + 'if obj.status ~= nil and obj.status.state ~= nil and obj.status.state.phase ~= nil then\n'
           + '  local phase = obj.status.state.phase\n'
           + '  hs.message = "Volcano Job " .. phase\n'
           + '  if phase == "Completed" then\n'
           + '    hs.status = "Healthy"\n'
           + '  elseif phase == "Failed" or phase == "Aborted" or phase == "Terminated" then\n'
           + '    hs.status = "Degraded"\n'
           + '  end\n'
           + 'end\n'
           + 'return hs\n',
      cel: {
        current: "has(status.state) && has(status.state.phase) && status.state.phase == 'Completed'",
        failed: "has(status.state) && has(status.state.phase) && status.state.phase in ['Failed', 'Aborted', 'Terminated']",
      },
    },
  },
  // The scheduler, controller and admission webhook (components/volcano.libsonnet).
  platform:: { 'batch.volcano.sh/Job': ['volcano'] },
  kueueIntegration:: null,
  multiplePodSets:: false,
  supportsHostNetwork:: true,
  supportsInitContainers:: true,
  containerName:: 'workload',
  task:: 'worker',
  port:: 29500,
  // Pods <job>-<task>-<index> (pkg/controllers/job/job_controller_util.go:42-44).
  podNameSuffix(o):: 2 + std.length($.task) + std.length(std.toString(std.max(0, std.get(std.get(o, 'spec', {}), 'minAvailable', 1) - 1))),

  masterAddress(ctx, w):: w.name + '-' + $.task + '-0.' + w.name + '.' + ctx.namespace + '.svc.cluster.local',

  objects(ctx, w):: [{
    apiVersion: 'batch.volcano.sh/v1alpha1',
    kind: 'Job',
    metadata: k8s.metadata(ctx, w.name, w.component) + { labels+: w.workloadLabels },
    spec: {
      schedulerName: 'volcano',
      // Gang scheduling: all nodes' pods or none.
      minAvailable: w.nodes,
      maxRetry: w.restarts,
      // Any pod failure restarts the whole job (NCCL groups cannot lose a rank).
      policies: [
        { event: 'PodFailed', action: 'RestartJob' },
        { event: 'PodEvicted', action: 'RestartJob' },
      ],
      plugins: { svc: [], env: [] },
      tasks: [{
        name: $.task,
        replicas: w.nodes,
        template: {
          metadata: w.pod.metadata,
          spec: w.pod.spec {
            restartPolicy: 'Never',
            containers: [w.container + launch.container(
              launch.staticArgs(w, $.masterAddress(ctx, w), $.port), w.program, w.prologue
            ) + {
              name: $.containerName,
              env+: [{
                name: 'JOB_COMPLETION_INDEX',
                valueFrom: { fieldRef: { fieldPath: "metadata.annotations['volcano.sh/task-index']" } },
              }],
              ports: [{ name: 'rendezvous', containerPort: $.port, protocol: 'TCP' }],
            }],
          } + (if std.objectHasEx(w, 'deadlineSeconds', false) then { activeDeadlineSeconds: w.deadlineSeconds } else {}),
        },
      }],
    },
  }],
}
