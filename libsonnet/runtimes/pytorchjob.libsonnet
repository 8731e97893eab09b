// Kubeflow Training Operator PyTorchJob (kubeflow.org/v1): one Master and
// nodes-1 Workers, one pod per node, torchrun with c10d rendezvous hosted
// by the Master (the operator gives it the Service <job>-master-0).
local k8s = import 'nemoc/k8s.libsonnet';
local launch = import 'nemoc/launch.libsonnet';
local runtime = import 'nemoc/runtime.libsonnet';

runtime + {
  name: 'pytorchjob',
  describe:: 'Kubeflow PyTorchJob (kubeflow.org/v1), torchrun with c10d rendezvous on the Master',
  workload:: {
    kind: 'kubeflow.org/PyTorchJob',
    // The training operator's conditions; Kueue suspends through runPolicy.
    health: $.conditionHealth('/spec/runPolicy/suspend', 'Succeeded', 'Failed'),
  },
  platform:: { 'kubeflow.org/PyTorchJob': ['training-operator'] },
  kueueIntegration:: 'kubeflow.org/pytorchjob',
  // Master and Worker are two pod sets: one group is placed in one domain
  // (kueue v0.19.2 apis/kueue/v1beta1/topology_types.go:82-84).
  multiplePodSets:: true,
  // Pods <job>-master-0 and <job>-worker-<i> (the operator's replica naming).
  podNameSuffix(o)::
    local workers = std.get(std.get(std.get(std.get(o, 'spec', {}), 'pytorchReplicaSpecs', {}), 'Worker', {}), 'replicas', 1);
    std.length('-worker-') + std.length(std.toString(std.max(0, workers - 1))),
  // The operator requires the training container to be called "pytorch".
  containerName: 'pytorch',
  rendezvousPort: 29500,
  supportsHostNetwork: true,
  supportsInitContainers: true,

  launcherArgs(w):: [
    '--nnodes=' + w.nodes,
    '--nproc-per-node=' + w.gpusPerNode,
    '--rdzv-backend=c10d',
    '--rdzv-endpoint=' + w.name + '-master-0:' + $.rendezvousPort,
    '--rdzv-id=' + w.name,
    '--max-restarts=' + w.restarts,
  ],

  // w: the workload contract of stages/train.libsonnet.
  // Objects the workload needs applied before it (00-base): none.
  baseObjects(ctx, w):: [],

  objects(ctx, w)::
    local template = {
      metadata: w.pod.metadata,
      spec: w.pod.spec {
        containers: [w.container + launch.container($.launcherArgs(w), w.program, w.prologue) + {
          name: $.containerName,
          ports: [{ name: 'pytorchjob-port', containerPort: $.rendezvousPort, protocol: 'TCP' }],
        }],
      },
    };
    local replica(count) = {
      replicas: count,
      // A failed pod restarts in place; torchrun's elastic agents re-form the
      // rendezvous and training resumes from the newest checkpoint.
      restartPolicy: 'OnFailure',
      template: template,
    };
    [{
      apiVersion: 'kubeflow.org/v1',
      kind: 'PyTorchJob',
      metadata: k8s.metadata(ctx, w.name, w.component) + { labels+: w.workloadLabels },
      spec: {
        // B16: without nprocPerNode the operator computes WORLD_SIZE = replicas x 1
        // and sets PET_NPROC_PER_NODE to nothing (kubeflow/training-operator v1.9.0
        // pkg/controller.v1/pytorch/envvar.go:63 getNprocPerNodeInt, :99).
        nprocPerNode: std.toString(w.gpusPerNode),
        runPolicy: {
          cleanPodPolicy: 'None',  // keep finished pods for their logs
          // B14, verified: with restartPolicy OnFailure the operator fails the job
          // once the container restarts of its running pods add up to backoffLimit
          // (kubeflow/training-operator v1.9.0 pkg/core/job.go:95-134). torchrun's
          // --max-restarts (launcherArgs) restarts the workers inside the pod first.
          backoffLimit: w.restarts,
        }
        // stages.train.timeout (F17), from status.startTime, which a resume
        // from Kueue's suspension sets again (kubeflow/training-operator
        // v1.9.0 pkg/controller.v1/common/job.go:166-171, :211 PastActiveDeadline).
        + (if std.objectHasEx(w, 'deadlineSeconds', false) then { activeDeadlineSeconds: w.deadlineSeconds } else {})
        + (if w.suspend then { suspend: true } else {}),
        pytorchReplicaSpecs: {
          Master: replica(1),
        } + (if w.nodes > 1 then { Worker: replica(w.nodes - 1) } else {}),
      },
    }],
}
