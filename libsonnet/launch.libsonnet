// How a training container starts: torchrun with the runtime's placement
// arguments, then the program and its Hydra overrides, each one argv entry.
// A profile may need shell setup first (GKE's gIB set_nccl_env.sh); then the
// container runs `bash -c '<prologue>; exec torchrun "$@"' torchrun <args>`,
// so the arguments still never pass through a shell.
{
  // Kubernetes expands $(VAR) in command and args; a literal "$(" in a user
  // value must not be expanded, so it is escaped as "$$(".
  escapeKubeVars(arg):: std.strReplace(arg, '$(', '$$('),

  container(torchrunArgs, program, prologue)::
    local args = torchrunArgs + [$.escapeKubeVars(a) for a in program];
    if std.primitiveEquals(prologue, null) then {
      command: ['torchrun'],
      args: args,
    } else {
      command: ['bash', '-c', prologue + '\nexec torchrun "$@"', 'torchrun'],
      args: args,
    },

  // Static rendezvous: node rank from the Job completion index (Indexed Job,
  // JobSet), master at a deterministic DNS name in the spec's namespace.
  staticArgs(w, masterAddress, port):: [
    '--nnodes=' + w.nodes,
    '--nproc-per-node=' + w.gpusPerNode,
    '--node-rank=$(JOB_COMPLETION_INDEX)',
    '--master-addr=' + masterAddress,
    '--master-port=' + port,
  ],

  completionIndexEnv:: {
    name: 'JOB_COMPLETION_INDEX',
    valueFrom: { fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } },
  },

  // A headless Service giving every pod of the workload a DNS name.
  headlessService(k8s, ctx, name, component, selector):: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: k8s.metadata(ctx, name, component),
    spec: {
      clusterIP: 'None',
      // Ranks resolve each other before they are Ready.
      publishNotReadyAddresses: true,
      selector: selector,
    },
  },
}
