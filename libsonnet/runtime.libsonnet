// The runtime contract. A runtime is one file, libsonnet/runtimes/<name>.libsonnet
// (or runtimes/<name>.libsonnet in a --jpath directory, named by a target's
// `runtime`), that extends this object:
//
//   local runtime = import 'nemoc/runtime.libsonnet';
//   runtime + { name: 'my-runtime', describe:: '...', workload:: {...}, objects(ctx, w):: [...] }
//
// It turns the training workload contract (w, built in stages/train.libsonnet)
// into the objects a cluster runs, and says everything the rest of nemoc needs
// to know about them: how GitOps engines judge them (health), what the
// platform bundle installs for them, how Kueue names them, what their
// controllers append to pod names. The C++ core names no runtime;
// docs/extending.md walks through adding one.
//
// The members without a default below are required: a runtime lacking one
// fails with an error naming each missing member (the assert).
local health = import 'nemoc/health.libsonnet';

local required = {
  name: 'name: the runtime name (the file name without .libsonnet)',
  describe: 'describe:: one line for nemoc schema, explain and SUMMARY.md',
  workload: "workload:: {kind: 'group/Kind' of the object objects() emits, health: ...}",
  objects: 'objects(ctx, w):: the objects of workload w (stages/train.libsonnet builds w)',
};

{
  // libjsonnet 0.18 runs an object's assertions on every index of it (vm.cpp
  // FRAME_INVARIANTS), and this object is indexed on every read of the
  // runtime: the check is native calls only (issue #47; `==` would call
  // std.equals, a comprehension allocate). The message names each missing one.
  assert std.objectHasEx(self, 'name', true) && std.objectHasEx(self, 'describe', true) && std.objectHasEx(self, 'workload', true) && std.objectHasEx(self, 'objects', true) :
         'runtime ' + (if std.objectHasEx(self, 'name', true) then self.name else '(no name)') + ' lacks '
         + std.join('; ', [required[m] for m in std.objectFields(required) if !std.objectHasEx(self, m, true)])
         + ' (libsonnet/runtime.libsonnet lists what a runtime provides)',

  isRuntime:: true,

  // ---- the workload object -----------------------------------------------------
  // workload:: {
  //   kind: 'group/Kind' of the run-to-completion object objects() emits,
  //   // How Argo CD and Flux judge it, as code: {suspend, lua, cel, mutatedBy?}
  //   // (libsonnet/health.libsonnet documents each). conditionHealth below
  //   // writes it for a kind that ends with terminal status conditions; a kind
  //   // that reports otherwise writes its own Lua and CEL. null: a kind
  //   // gitops.libsonnet judges itself (batch/Job).
  //   health: $.conditionHealth('/spec/suspend', 'Complete', 'Failed'),
  //   // mutatedBy: JSON pointers of fields other controllers' webhooks write
  //   // at creation; Argo CD neither compares nor re-applies them
  //   // (gitops.libsonnet ignoreDifferences). E.g. a TrainJob's
  //   // ['/spec/runtimePatches'] (runtimes/trainjob.libsonnet).
  // }
  // conditionHealth(suspend pointer, success condition type, failure
  // condition type, cel=true (false: Flux's own readers judge the kind),
  // mutatedBy=null).
  conditionHealth:: health.conditions,

  // objects(ctx, w) bounds the run by w.deadlineSeconds when w has it
  // (stages.train.timeout, field-review.md F17): the kind's own deadline,
  // counted from admission, so that a workload Kueue suspends and resumes
  // starts its deadline again.

  // Objects the workload needs applied before it (00-base).
  baseObjects(ctx, w):: [],

  // What the cluster's platform bundle installs for the kinds this runtime
  // emits: 'group/Kind' -> components of libsonnet/platform.libsonnet.
  platform:: {},

  // The Kueue integration that admits the workload (kueue.libsonnet checks
  // the cluster's ClusterQueue lists it); null: none.
  kueueIntegration:: null,
  // The workload's pods form several Kueue pod sets (a PyTorchJob's Master
  // and Workers): topology-aware placement groups them into one domain.
  multiplePodSets:: false,

  // What the runtime can carry from a profile's placement.
  supportsHostNetwork:: true,
  supportsInitContainers:: true,

  // Characters the controllers append to the workload object's name in pod
  // hostnames ("-worker-12"), for the output check that name plus suffix fit
  // a DNS label (63). o: the emitted object. null: the Kubernetes core rule
  // for its kind (an Indexed Job: "-<index>").
  podNameSuffix(o):: null,
}
