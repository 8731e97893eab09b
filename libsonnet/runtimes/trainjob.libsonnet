// Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1, Trainer v2.3)
// on the built-in `torch-distributed` ClusterTrainingRuntime. The runtime's
// torch plugin injects PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK,
// PET_MASTER_ADDR and PET_MASTER_PORT, which torchrun reads itself.
// Everything else reaches the pods through runtimePatches, whose container
// patch allows only env, volumeMounts and securityContext: GPUs and fabric
// devices go to trainer.resourcesPerNode, and there is no way to add init
// containers or host networking.
local k8s = import 'k8s.libsonnet';
local launch = import 'runtimes/launch.libsonnet';

{
  describe:: 'Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) on ClusterTrainingRuntime torch-distributed',
  runtimeName: 'torch-distributed',
  // Names inside the torch-distributed runtime that patches must target.
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
          kind: 'ClusterTrainingRuntime',
          name: $.runtimeName,
        },
        trainer: {
          image: w.container.image,
          command: launchSpec.command,
          args: launchSpec.args,
          // Trainer v2.3.0 pkg/runtime/framework/plugins/jobset/jobset.go (~l.203) rejects
          // env in a runtimePatches patch of the `node` container (B1): all env goes here.
          env: w.container.env + $.parallelEnv(ctx.spec.stages.train),
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
                          // One pod per node: ranks of one job never share a machine.
                          affinity: {
                            podAntiAffinity: {
                              requiredDuringSchedulingIgnoredDuringExecution: [{
                                labelSelector: {
                                  matchLabels: { 'jobset.sigs.k8s.io/jobset-name': w.name },
                                },
                                topologyKey: 'kubernetes.io/hostname',
                              }],
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
      } + (if w.suspend then { suspend: true } else {}),
    }],
}
