// The profile contract. A profile is one file, profiles/<name>.libsonnet (or
// <name>.libsonnet in a --jpath directory), that extends this object:
//
//   local profile = import 'nemoc/profile.libsonnet';
//   profile + { name: 'my-cloud', description:: '...', ... }
//
// Everything nemoc knows about a cloud lives in that file: the target options
// it reads and their JSON Schema, its checks, its starter for `nemoc init`, the
// placement of every pod and what its clusters need. The C++ core names no
// profile; docs/extending.md walks through adding one.
//
// The members without a default below are required: a profile lacking one
// fails with an error naming each missing member (the assert).
local kueue = import 'nemoc/kueue.libsonnet';
local storage = import 'nemoc/storage.libsonnet';

local required = {
  name: 'name: the profile name (the file name without .libsonnet)',
  description: 'description:: one sentence for nemoc schema, explain and profiles',
  defaults: "defaults: {runtime: ...}, the runtime of the profile's targets by default",
  storageBackends: "storageBackends: the storage backends (spec.storage) the profile's clusters mount",
  gpuNode: "gpuNode:: the GPU node a target runs on, as data ({fixed: {accelerator, gpus?, name?}} or {option, default?, values?}: see below)",
  localPlacement: 'localPlacement(ctx):: the placement of single-node stage pods',
  placement: 'placement(ctx, runtime):: the placement of multi-node workloads',
};

{
  // libjsonnet 0.18 runs an object's assertions on every index of it (vm.cpp
  // FRAME_INVARIANTS), and this object is indexed on every read of the
  // profile: the check is native calls only (issue #47; `==` would call
  // std.equals, a comprehension allocate). The message names each missing one.
  assert std.objectHasEx(self, 'name', true) && std.objectHasEx(self, 'description', true) && std.objectHasEx(self, 'defaults', true) && std.objectHasEx(self, 'storageBackends', true) && std.objectHasEx(self, 'gpuNode', true) && std.objectHasEx(self, 'localPlacement', true) && std.objectHasEx(self, 'placement', true) :
         'profile ' + (if std.objectHasEx(self, 'name', true) then self.name else '(no name)') + ' lacks '
         + std.join('; ', [required[m] for m in std.objectFields(required) if !std.objectHasEx(self, m, true)])
         + ' (libsonnet/profile.libsonnet lists what a profile provides)',

  // What `nemoc profiles` lists: files of profiles/ and --jpath directories
  // whose object extends this one.
  isProfile:: true,

  // ---- target options: what a target of this profile may set ---------------
  // Field of spec.targets[] -> its JSON Schema (draft 7; a description is
  // required; "#/definitions/..." refers to schemas/project.schema.json). nemoc
  // validates a target with them, refuses them on targets of profiles that do
  // not declare them (spec.wrong-profile) and fills their defaults. The
  // built-in profiles' options are copied into schemas/project.schema.json by
  // scripts/update-schema-catalogue (editors read that file).
  options:: {},

  // ---- the GPU node, as data ---------------------------------------------------
  // What nemoc's checks need from the cloud -- the GPU model (a key of
  // libsonnet/accelerators.json) and the GPUs of one node -- before any
  // Jsonnet builds objects (issue #48 item 3: the memory fit, FP8 and
  // gpusPerNode run with the spec's other checks, compiler/gpu_node.h). Data,
  // not code: nemoc reads it from the profile's description (a --jpath
  // profile) or the schema (the built-ins, scripts/update-schema-catalogue).
  // One of:
  //   {fixed: {accelerator: 'b200-180gb', gpus: 8, name: 'an a4-highgpu-8g node'}}
  //       every target's nodes are these (gpus, name optional);
  //   {option: 'instanceType', values: {'p5.48xlarge': {accelerator: 'h100-80gb', gpus: 8}}}
  //       the target option names the node (name: the value); a value not
  //       listed is the profile's own check to report (checks);
  //   {option: 'gpu', default: 'h100-80gb'}
  //       the option's value is the accelerator (default when unset).
  // gpus: a training stage's gpusPerNode above it is a located error
  // (profile.gpus-per-node); without it nemoc does not know the node's size.
  // Required (no default): see `required` above.

  // ---- the node fabric, as data ------------------------------------------------
  // The fabric NCCL uses between a target's nodes, read before expansion like
  // gpuNode (compiler/node_fabric.h): multi-node training over 'tcp' -- no RDMA
  // device, sockets on the pod network -- is nemoc's own located warning
  // (profile.tcp-fabric), the same for every profile. A name: a key of
  // fabrics.libsonnet for the built-in profiles ('infiniband', 'efa', 'gib',
  // 'tcp'), lower-case letters, digits and '-'. One of:
  //   {fixed: 'gib'}
  //       every target's nodes use this fabric;
  //   {option: 'rdma', set: 'infiniband', unset: 'tcp'}
  //       'set' when the target sets the option (any value), 'unset' when not.
  // null: the profile does not say, and nemoc checks nothing about it.
  // fabricOf(target) resolves it the way nemoc does, for the profile's own
  // placement (env: fabrics[$.fabricOf(ctx.target)]).
  nodeFabric:: null,
  fabricOf(target)::
    local rule = self.nodeFabric;
    if std.objectHasEx(rule, 'fixed', false) then rule.fixed
    else if std.objectHasEx(target, rule.option, false) && !std.primitiveEquals(target[rule.option], null) then rule.set
    else rule.unset,

  // ---- nemoc init ------------------------------------------------------------
  // null: `nemoc init --profile <name>` has no starter. Otherwise:
  //   target: the starter target's name
  //   accelerator: the GPU the starter's layout is sized for
  //   storage: YAML lines below `results:` (indented 8)
  //   targetLines: YAML lines below `profile:` (indented 6); {QUEUE} is replaced
  //     by --cluster-queue when clusterQueue is true
  //   fabric: lines after targetLines for a multi-node layout (commented out
  //     for one node)
  //   clusterQueue: the starter admits through the cluster's Kueue
  //     ClusterQueue, named with --cluster-queue (required then)
  //   default: `nemoc init` without --profile writes this starter (one
  //     built-in profile says so)
  starter:: null,

  // ---- placement -------------------------------------------------------------
  // localPlacement(ctx) and placement(ctx, runtime) return the placement
  // record every pod is built from (stages/pod.libsonnet, stages/train.libsonnet):
  // placementDefaults(ctx) fills each of its fields for a single-node pod on
  // the target's nodeSelector with the shared storage and the Kueue queue; a
  // profile adds its own (placementDefaults(ctx) + { tolerations: [...] }).
  placementDefaults(ctx):: {
    local pod = storage.pod(ctx),
    annotations: {},  // pod annotations
    podLabels: {},  // pod labels, e.g. Azure Workload Identity's azure.workload.identity/use (nemoc's own labels win)
    workloadLabels: kueue.workloadLabels(ctx),  // the workload object's labels (Kueue queue)
    suspend: kueue.suspend(ctx),  // created suspended: Kueue admits it
    resources: {},  // extra container resources (fabric devices), requests = limits
    capabilities: [],  // added Linux capabilities...
    privilegeReason: '',  // ...and why (SUMMARY.md)
    privileged: false,
    hostNetwork: false,
    env: {},  // container environment (NCCL settings)
    nodeSelector: ctx.target.nodeSelector,
    tolerations: [],
    initContainers: [],
    volumes: pod.volumes,
    mounts: pod.mounts,
    prologue: null,  // shell run before the program, or null
    fabric: 'none (single node)',  // one line for SUMMARY.md
  },
  gpuResource: 'nvidia.com/gpu',
  // The node selector of a single-node stage's pods from its targets[].stageNodes
  // entry (stages/pod.libsonnet nodesFor): its nodeSelector; a profile with
  // its own way to name nodes adds it (eks-efa: instanceType).
  stageNodeSelector(ctx, nodes):: if std.objectHasEx(nodes, 'nodeSelector', false) then nodes.nodeSelector else {},
  serviceAccountAnnotations(ctx):: {},
  // Whether the target's pods run with a cloud identity of their own (a role
  // bound to their service account): storage drivers then mount with the
  // pod's credentials (storage.libsonnet, Mountpoint for S3).
  workloadIdentity(ctx):: false,

  // ---- topology (Kueue Topology-Aware Scheduling, libsonnet/kueue.libsonnet) --
  // The topology levels a target's kueue.topology may name -> the node label
  // Kueue reads for each, or null where the clusters label no topology (a
  // target asking for one is then a located error); topologyOrder: the levels
  // from the widest to the narrowest (nemoc's Topology object);
  // singleNodeLevels: levels whose every domain is one node (a required
  // topology there holds one pod).
  topologyLevels:: null,
  topologyOrder:: [],
  singleNodeLevels:: [],

  // ---- platform needs (libsonnet/platform.libsonnet) -------------------------
  // Bundle components the profile's clusters need whatever the workloads are
  // (names of platform.components).
  platform(ctx):: [],
  // Components clusters of this profile usually run already, as installed by
  // the installer the profile's clusters are built with: {name: version};
  // nemoc installs none of them unless a target says clusterHas.<name>:
  // false. clusterHasWhy: the installer, for SUMMARY.md.
  clusterHas(ctx):: {},
  clusterHasWhy:: '',
  // Cluster-scoped objects the platform bundle applies for a target.
  platformObjects(ctx):: [],
  // What a cluster of this profile must already have (SUMMARY.md "Platform"):
  // [{what: text, provides: [names], checks?: {name: the command that checks
  // it, where summary.cc CheckFor would not know (gke-a4: its GKE networks)}}].
  prerequisites(ctx):: [],
  // The clusters' GPU node images ship the NVIDIA driver (the GPU Operator,
  // where installed, leaves it alone).
  shipsGpuDriver:: false,
  // Helm/kustomize values the profile's clusters need for platform component
  // `name` (a key of platform.components), laid over the release pins and
  // nemoc's cloud-neutral values as a JSON merge patch (platform.values): an
  // RDMA driver option, a device plugin's tolerations or node affinity.
  componentValues(ctx, name):: {},

  // ---- checks ------------------------------------------------------------------
  // The profile's own rules: [{code, pointer, message, hint?, severity?,
  // atKey?}], pointers into the spec. A target with an error is not expanded.
  checks(ctx):: [],
  diagnostics(ctx):: self.checks(ctx) + storage.check(ctx, self.storageBackends),
}
