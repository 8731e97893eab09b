// Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1, Trainer v2.3)
// on a namespaced TrainingRuntime nemoc emits beside it (B14, see
// baseObjects), the upstream `torch-distributed` ClusterTrainingRuntime plus
// the restart policy. The runtime's torch plugin injects PET_NNODES,
// PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT,
// which torchrun reads itself.
// Everything else reaches the pods through runtimePatches, whose container
// patch allows only env, volumeMounts and securityContext: GPUs and fabric
// devices go to trainer.resourcesPerNode, and there is no way to add init
// containers or host networking.
local chain = import 'nemoc/stages/chain.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local launch = import 'nemoc/launch.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

runtime + {
  name: 'trainjob',
  describe:: 'Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) on its own TrainingRuntime (torch-distributed with failurePolicy.maxRestarts)',
  workload:: {
    kind: 'trainer.kubeflow.org/TrainJob',
    // Field review B21. Other controllers' webhooks write runtimePatches at
    // creation: Kueue appends its own patch (kueue v0.19.2
    // pkg/controller/jobs/trainjob/trainjob_webhook.go:65,91-102) and refuses
    // admission without it (trainjob_controller.go:76,279); Trainer stamps
    // `time` on every patch (trainer v2.3.0 pkg/webhooks/trainjob_webhook.go:64-70).
    // Argo CD leaves the field to them (ignoreDifferences + RespectIgnore-
    // Differences keep the live value on every apply): without it the
    // TrainJob was OutOfSync from creation and a self-heal removed Kueue's
    // patch, so it was never admitted (tests/gitops/replay scenario
    // B21-trainjob-kueue-runtime-patch). A TrainJob's name is content-hashed:
    // a changed runtimePatches is a new TrainJob, created with Git's value.
    health: $.conditionHealth('/spec/suspend', 'Complete', 'Failed', mutatedBy=['/spec/runtimePatches']),
  },
  // TrainJobs refer to the TrainingRuntime nemoc emits beside them (B14),
  // not to the ClusterTrainingRuntimes of trainer-runtimes.
  platform:: {
    'trainer.kubeflow.org/TrainJob': ['trainer'],
    'trainer.kubeflow.org/TrainingRuntime': ['trainer'],
  },
  kueueIntegration:: 'trainer.kubeflow.org/trainjob',
  // A JobSet with the runtime's replicated job: pods <trainjob>-node-0-<i>.
  podNameSuffix(o)::
    local nodes = std.get(std.get(std.get(o, 'spec', {}), 'trainer', {}), 'numNodes', 1);
    std.length('-' + $.replicatedJob + '-0-') + std.length(std.toString(std.max(0, nodes - 1))),
  // Names inside the runtime (as in torch-distributed) that patches must target.
  replicatedJob: 'node',
  containerName: 'node',
  manager: 'nemoc.dev/nemoc',
  supportsHostNetwork: false,
  supportsInitContainers: false,

  // Parallel sizes as plain env, for Megatron-Core scripts that read them.
  parallelEnv(train):: [
    { name: 'TP_SIZE', value: std.toString(train.parallelism.tensor) },
    { name: 'PP_SIZE', value: std.toString(train.parallelism.pipeline) },
    { name: 'CP_SIZE', value: std.toString(train.parallelism.context) },
  ],

  // B14: a TrainJob has no restart setting of its own, and runtimePatches
  // cannot carry one: JobSetSpecPatch holds only replicatedJobs, JobSpecPatch
  // only the pod template (kubeflow/trainer v2.3.0
  // pkg/apis/trainer/v1alpha1/trainjob_types.go:336-375). The JobSet is built
  // from the referenced runtime's template spec (pkg/runtime/core/
  // trainingruntime.go:167-172), so its failurePolicy reaches the JobSet:
  // nemoc emits a namespaced TrainingRuntime per workload, named like it,
  // with failurePolicy.maxRestarts (kubernetes-sigs/jobset v0.12.0
  // api/jobset/v1alpha2/jobset_types.go:482) and a Job backoffLimit of 0, so
  // a failed rank restarts the whole gang as in the jobset runtime (the
  // upstream runtime leaves the Job default of 6 single-pod retries, which
  // cannot rejoin the static rendezvous). The rest is torch-distributed
  // (kubeflow/trainer v2.3.0 charts/kubeflow-trainer/files/runtimes/
  // torch-distributed.yaml) with the trainer's image. It lives in 00-base:
  // Trainer's webhook refuses a TrainJob whose TrainingRuntime does not exist
  // yet (trainingruntime.go:304-313).
  baseObjects(ctx, w):: [{
    apiVersion: 'trainer.kubeflow.org/v1alpha1',
    kind: 'TrainingRuntime',
    metadata: k8s.metadata(ctx, w.name, w.component) + { labels+: { 'trainer.kubeflow.org/framework': 'torch' } },
    spec: {
      mlPolicy: { numNodes: 1, torch: {} },
      template: {
        spec: {
          failurePolicy: { maxRestarts: w.restarts },
          replicatedJobs: [{
            name: $.replicatedJob,
            replicas: 1,
            template: {
              metadata: { labels: { 'trainer.kubeflow.org/trainjob-ancestor-step': 'trainer' } },
              spec: {
                backoffLimit: 0,
                // priorityClassName is no field of a runtimePatches pod
                // spec (kubeflow/trainer v2.3.0 pkg/apis/trainer/v1alpha1/
                // trainjob_types.go PodSpecPatch): the runtime's template
                // carries it (stages/pod.libsonnet scheduling, D3).
                template: { spec: { containers: [{ name: $.containerName, image: w.container.image }] }
                                  + (if std.objectHasEx(w.pod.spec, 'priorityClassName', false) then { priorityClassName: w.pod.spec.priorityClassName } else {}) },
              },
            },
          }],
        },
      },
    },
  }],

  objects(ctx, w)::
    local podSpec = w.pod.spec;
    local launchSpec = launch.container([], w.program, w.prologue);
    local patchKeys = ['serviceAccountName', 'securityContext', 'volumes', 'imagePullSecrets', 'nodeSelector', 'tolerations'];
    [{
      apiVersion: 'trainer.kubeflow.org/v1alpha1',
      kind: 'TrainJob',
      metadata: k8s.metadata(ctx, w.name, w.component) + { labels+: w.workloadLabels },
      spec: {
        runtimeRef: {
          apiGroup: 'trainer.kubeflow.org',
          kind: 'TrainingRuntime',
          name: w.name,
        },
        trainer: {
          image: w.container.image,
          command: launchSpec.command,
          args: launchSpec.args,
          // Trainer v2.3.0 pkg/runtime/framework/plugins/jobset/jobset.go (~l.203) rejects
          // env in a runtimePatches patch of the `node` container (B1): all env goes here.
          env: w.container.env + $.parallelEnv(chain.stage(ctx)),
          numNodes: w.nodes,
          numProcPerNode: w.gpusPerNode,
          resourcesPerNode: w.container.resources,
        },
        runtimePatches: [{
          manager: $.manager,
          trainingRuntimeSpec: {
            template: {
              spec: {
                replicatedJobs: [{
                  name: $.replicatedJob,
                  template: {
                    spec: {
                      template: {
                        metadata: w.pod.metadata,
                        spec: {
                          [key]: podSpec[key]
                          for key in patchKeys
                          if std.objectHasEx(podSpec, key, false)
                        } + {
                          // One pod per node: ranks of one job never share a
                          // machine. The spec's affinity (scheduling.affinity,
                          // D3) joins it; its required anti-affinity terms
                          // are added to this one.
                          local user = std.get(podSpec, 'affinity', {}),
                          local userAnti = std.get(user, 'podAntiAffinity', {}),
                          affinity: user {
                            podAntiAffinity: userAnti {
                              requiredDuringSchedulingIgnoredDuringExecution: [{
                                labelSelector: {
                                  matchLabels: { 'jobset.sigs.k8s.io/jobset-name': w.name },
                                },
                                topologyKey: 'kubernetes.io/hostname',
                              }] + std.get(userAnti, 'requiredDuringSchedulingIgnoredDuringExecution', []),
                            },
                          },
                          containers: [{
                            name: $.containerName,
                            volumeMounts: w.container.volumeMounts,
                            securityContext: w.container.securityContext,
                          }],
                        },
                      },
                    },
                  },
                }],
              },
            },
          },
        }],
      }
      // stages.train.timeout (F17): Failed with reason DeadlineExceeded; the
      // clock restarts on resume from suspension (trainer v2.3.0
      // manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml
      // spec.activeDeadlineSeconds; immutable, so it is in the name's hash).
      + (if std.objectHasEx(w, 'deadlineSeconds', false) then { activeDeadlineSeconds: w.deadlineSeconds } else {})
      + (if w.suspend then { suspend: true } else {}),
    }],
}
