// Kueue admission for every profile (field review B2, B3, B4, B5, B13 and
// decision F1). The rules are those of kubernetes-sigs/kueue v0.19.2, the
// version libsonnet/platform.libsonnet installs:
// - a workload is admitted only through a LocalQueue in its own namespace
//   (apis/kueue/v1beta2 localqueue_types.go; pkg/controller/jobframework
//   reconciler.go looks the queue-name label up in the job's namespace), so
//   the LocalQueue is always emitted next to the workloads (B2);
// - every resource a pod set requests must be covered by a resource group of
//   the ClusterQueue, else "resource X unavailable in ClusterQueue"
//   (pkg/scheduler/flavorassigner/flavorassigner.go:1071), so queued pods
//   request only what the ClusterQueue covers (B3);
// - a required topology puts every pod of a pod set in one domain of that
//   level (apis/kueue/v1beta1/topology_types.go:22-28), which a level of
//   single nodes cannot hold for more than one node (B4);
// - Kueue manages only the frameworks its configuration enables; v0.19.2
//   ships kubeflow.org/pytorchjob disabled (charts/kueue/values.yaml:165-184,
//   config/components/manager/controller_manager_config.yaml:54) (B5).
// Decision F1: a target either uses nemoc's own ResourceFlavor + ClusterQueue
// (clusterObjects: true), which cover every resource the queued workloads
// request with a quota that fits the largest of them, or the cluster's
// ClusterQueue, whose covered resources the target names (covers).
local chain = import 'nemoc/stages/chain.libsonnet';
local clusterHas = import 'nemoc/cluster_has.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';

local amount = k8s.quantityAmount;
local quantity = k8s.quantityText;

// The default integrations of Kueue v0.19.2 (charts/kueue/values.yaml:165-184).
local defaultIntegrations = [
  'batch/job',
  'kubeflow.org/mpijob',
  'ray.io/rayjob',
  'ray.io/rayservice',
  'ray.io/raycluster',
  'jobset.x-k8s.io/jobset',
  'workload.codeflare.dev/appwrapper',
  'trainer.kubeflow.org/trainjob',
  'pod',
  'deployment',
  'statefulset',
  'leaderworkerset.x-k8s.io/leaderworkerset',
];

{
  version: 'v0.19.2',

  // The chart's controller_manager_config.yaml (kueue v0.19.2
  // charts/kueue/values.yaml:119-184) with `frameworks` enabled; the chart
  // parses the value with fromYaml (templates/manager/manager-config.yaml),
  // so JSON text is what it reads.
  managerConfig(frameworks):: '' + {
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    health: { healthProbeBindAddress: ':8081' },
    metrics: { bindAddress: ':8443' },
    webhook: { port: 9443 },
    leaderElection: { leaderElect: true, resourceName: 'c1f6bfd2.kueue.x-k8s.io' },
    controller: { groupKindConcurrency: {
      'Job.batch': 5,
      Pod: 5,
      'Workload.kueue.x-k8s.io': 10,
      'LocalQueue.kueue.x-k8s.io': 5,
      'ClusterQueue.kueue.x-k8s.io': 5,
      'ResourceFlavor.kueue.x-k8s.io': 1,
    } },
    clientConnection: { qps: 300, burst: 500 },
    integrations: { frameworks: frameworks },
  },

  // Where nemoc installs Kueue (the platform bundle), it enables what the
  // target's runtime needs (decision F2): the integrations the target's Kueue has.
  bundled(ctx):: std.objectHasEx(ctx.spec, 'gitops', false) && ctx.spec.gitops.platform && !clusterHas.runs(ctx, 'kueue'),
  // SUMMARY.md's words on an existing Kueue: the integration the target's
  // workloads need (Kueue manages only the frameworks its configuration
  // enables), with the check an operator can run.
  existingNote(ctx)::
    local integration = ctx.runtimeImpl.kueueIntegration;
    if !$.enabled(ctx) || std.primitiveEquals(integration, null) then ''
    else ': its configuration must enable the integration ' + integration
         + ' (kubectl get configmap kueue-manager-config -n kueue-system -o yaml)',
  integrations(ctx)::
    local k = $.of(ctx.target);
    if !std.primitiveEquals(k, null) && std.objectHasEx(k, 'integrations', false) then k.integrations
    // Installed by nemoc: one Kueue per cluster (decision F3) serves every
    // target naming the cluster, so it enables every integration a nemoc
    // runtime uses, whichever targets there are. Kueue waits for a missing
    // integration's CRD instead of failing (kubernetes-sigs/kueue@v0.19.2
    // pkg/controller/jobframework/setup.go:86-101: on a NoMatch error it
    // registers the webhook and starts the controller from WaitForAPI).
    else if $.bundled(ctx) then defaultIntegrations + [
      n
      for n in k8s.stringSet([ctx.runtimes[r].kueueIntegration for r in std.objectFields(ctx.runtimes) if !std.primitiveEquals(ctx.runtimes[r].kueueIntegration, null)])
      if !std.member(defaultIntegrations, n)
    ]
    else defaultIntegrations,
  // The bundle's Kueue values: the default configuration unless the target needs more.
  chartValues(ctx)::
    local frameworks = $.integrations(ctx);
    if !$.enabled(ctx) || frameworks == defaultIntegrations then {}
    else { managerConfig: { controllerManagerConfigYaml: $.managerConfig(frameworks) } },
  defaultIntegrations: defaultIntegrations,
  queueLabel: 'kueue.x-k8s.io/queue-name',

  of(target):: if std.objectHasEx(target, 'kueue', false) then target.kueue else null,
  enabled(ctx):: !std.primitiveEquals($.of(ctx.target), null),

  // The LocalQueue the workloads name: the target's, else the project's own
  // (unique per project in a shared namespace).
  localQueue(ctx)::
    local k = $.of(ctx.target);
    if std.objectHasEx(k, 'localQueue', false) then k.localQueue else ctx.project,

  // Labels and suspend of a queued workload (Jobs, JobSets, PyTorchJobs, TrainJobs).
  workloadLabels(ctx):: if $.enabled(ctx) then { [$.queueLabel]: $.localQueue(ctx) } else {},
  suspend(ctx):: $.enabled(ctx),

  // What a queued pod may request: everything when nemoc's ClusterQueue
  // covers what the workloads request, else only what the target says the
  // cluster's ClusterQueue covers (B3; F1 b). Unqueued pods keep everything.
  admissible(ctx, resources)::
    local k = $.of(ctx.target);
    if std.primitiveEquals(k, null) || k.clusterObjects then resources
    else { [r]: resources[r] for r in std.objectFields(resources) if std.member(k.covers, r) },

  // Resource names a queued pod would request but may not (SUMMARY risk).
  dropped(ctx, resources)::
    local k = $.of(ctx.target);
    if std.primitiveEquals(k, null) || k.clusterObjects then []
    else [r for r in std.objectFields(resources) if !std.member(k.covers, r)],

  // ---- pod sets of the emitted workloads (what Kueue's jobframework sees) ----

  // [{count, requests: {resource: amount}}] per queued object.
  local containerRequests(c) =
    if !std.objectHasEx(c, 'resources', false) then {}
    else
      local r = c.resources;
      local limits = if std.objectHasEx(r, 'limits', false) then r.limits else {};
      // The API server defaults a missing request to the limit.
      limits + (if std.objectHasEx(r, 'requests', false) then r.requests else {}),
  local podRequests(podSpec) =
    std.foldl(function(acc, c)
                local req = containerRequests(c);
                acc + { [k]: amount(req[k]) + (if std.objectHasEx(acc, k, false) then acc[k] else 0) for k in std.objectFields(req) },
              podSpec.containers, {}),
  local or1(o, f) = if std.objectHasEx(o, f, false) then o[f] else 1,
  podSets(o)::
    local key = (if std.length(std.split(o.apiVersion, '/')) == 1 then '' else std.split(o.apiVersion, '/')[0]) + '/' + o.kind;
    if std.primitiveEquals(key, 'batch/Job') then [{ count: or1(o.spec, 'parallelism'), requests: podRequests(o.spec.template.spec) }]
    else if std.primitiveEquals(key, 'jobset.x-k8s.io/JobSet') then [
      { count: or1(rj, 'replicas') * or1(rj.template.spec, 'parallelism'), requests: podRequests(rj.template.spec.template.spec) }
      for rj in o.spec.replicatedJobs
    ]
    else if std.primitiveEquals(key, 'kubeflow.org/PyTorchJob') then [
      local rs = o.spec.pytorchReplicaSpecs[n];
      { count: or1(rs, 'replicas'), requests: podRequests(rs.template.spec) }
      for n in std.objectFields(o.spec.pytorchReplicaSpecs)
    ]
    else if std.primitiveEquals(key, 'trainer.kubeflow.org/TrainJob') then [
      // Trainer puts resourcesPerNode on the node container of each node pod.
      local req = containerRequests({ resources: o.spec.trainer.resourcesPerNode });
      { count: or1(o.spec.trainer, 'numNodes'), requests: { [k]: amount(req[k]) for k in std.objectFields(req) } },
    ]
    else [],

  queued(files):: [
    files[p]
    for p in std.objectFields(files)
    if std.objectHasEx(files[p].metadata, 'labels', false) && std.objectHasEx(files[p].metadata.labels, $.queueLabel, false)
  ],

  // Per resource, the most any one queued workload requests in total.
  quotas(files)::
    local totals = [
      std.foldl(function(acc, ps)
                  acc + { [k]: ps.count * ps.requests[k] + (if std.objectHasEx(acc, k, false) then acc[k] else 0) for k in std.objectFields(ps.requests) },
                $.podSets(o), {})
      for o in $.queued(files)
    ];
    std.foldl(function(acc, t)
                acc + { [k]: if std.objectHasEx(acc, k, false) && acc[k] > t[k] then acc[k] else t[k] for k in std.objectFields(t) },
              totals, {}),

  // ---- objects ------------------------------------------------------------

  // The LocalQueue in the workloads' namespace (always, B2) and, with
  // clusterObjects, nemoc's ResourceFlavor, ClusterQueue and (where the
  // profile knows the levels) Topology.
  objects(ctx, files)::
    local k = $.of(ctx.target);
    if std.primitiveEquals(k, null) then [] else
      local quotas = $.quotas(files);
      local levels = ctx.profile.topologyLevels;
      local topology = k.clusterObjects && !std.primitiveEquals(levels, null) && std.objectHasEx(k, 'topology', false);
      [{
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'LocalQueue',
        metadata: k8s.metadata(ctx, $.localQueue(ctx)),
        spec: { clusterQueue: k.clusterQueue },
      }]
      + (if !k.clusterObjects then [] else
           (if topology then [{
              apiVersion: 'kueue.x-k8s.io/v1beta2',
              kind: 'Topology',
              metadata: k8s.metadata(ctx, k.clusterQueue, namespaced=false),
              spec: { levels: [{ nodeLabel: levels[l] } for l in ctx.profile.topologyOrder] },
            }] else [])
           + [
             {
               apiVersion: 'kueue.x-k8s.io/v1beta2',
               kind: 'ResourceFlavor',
               metadata: k8s.metadata(ctx, k.clusterQueue, namespaced=false),
               // The nodes the training placement selects.
               spec: { nodeLabels: ctx.placement.nodeSelector }
                     + (if topology then { topologyName: k.clusterQueue } else {}),
             },
             {
               apiVersion: 'kueue.x-k8s.io/v1beta2',
               kind: 'ClusterQueue',
               metadata: k8s.metadata(ctx, k.clusterQueue, namespaced=false),
               spec: {
                 namespaceSelector: {},
                 resourceGroups: [{
                   // Every resource a queued workload requests, with the quota
                   // of the largest one (the stages run one after another).
                   coveredResources: std.objectFields(quotas),
                   flavors: [{
                     name: k.clusterQueue,
                     resources: [{ name: r, nominalQuota: quantity(r, quotas[r]) } for r in std.objectFields(quotas)],
                   }],
                 }],
               },
             },
           ]),

  // SUMMARY.md: the queue the workloads wait in.
  describe(ctx)::
    local k = $.of(ctx.target);
    if std.primitiveEquals(k, null) then 'none: pods go straight to kube-scheduler'
    else 'LocalQueue ' + $.localQueue(ctx) + ' (namespace ' + ctx.namespace + ') -> ClusterQueue ' + k.clusterQueue
         + (if k.clusterObjects then " (nemoc's, covering every resource the queued workloads request)"
            else " (the cluster's, covering " + std.join(', ', k.covers) + ')'),

  // ---- rules ----------------------------------------------------------------

  diagnostics(ctx)::
    local k = $.of(ctx.target);
    local pointer = ctx.targetPointer + '/kueue';
    // The training stage spanning the most nodes (stages/chain.libsonnet).
    local train = if std.objectHasEx(ctx.spec.stages, 'train', false) then ctx.spec.stages[chain.widest(ctx)] else null;
    local levels = ctx.profile.topologyLevels;
    local integrations = if !std.primitiveEquals(k, null) then $.integrations(ctx) else [];
    // The kind of the runtime's workload as Kueue names the integration (runtime.libsonnet).
    local integration = ctx.runtimeImpl.kueueIntegration;
    if std.primitiveEquals(k, null) then [] else
      (if !k.clusterObjects && !std.objectHasEx(k, 'covers', false) then [{
         code: 'kueue.covers',
         pointer: pointer,
         message: 'kueue: name the resources ClusterQueue ' + k.clusterQueue + ' covers (covers), or set clusterObjects: true for nemoc to emit one that covers what the workloads request',
         hint: 'kubectl get clusterqueue ' + k.clusterQueue + " -o jsonpath='{.spec.resourceGroups[*].coveredResources}'; Kueue refuses a workload requesting any other resource (kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:1071)",
       }] else [])
      + (if k.clusterObjects && std.objectHasEx(k, 'covers', false) then [{
           code: 'kueue.covers',
           pointer: pointer + '/covers',
           atKey: true,
           message: "covers describes the cluster's ClusterQueue; with clusterObjects: true nemoc's ClusterQueue covers what the workloads request",
           hint: 'remove covers, or clusterObjects',
         }] else [])
      + (if std.objectHasEx(k, 'topology', false) && std.primitiveEquals(levels, null) then [{
           code: 'kueue.topology',
           pointer: pointer + '/topology',
           message: 'topology-aware scheduling needs the node labels of each topology level; profile ' + ctx.profile.name + ' names none (topologyLevels)',
           hint: 'remove topology',
         }] else [])
      // B4: all pods of a pod set in one domain of a level of single nodes.
      + (if std.objectHasEx(k, 'topology', false) && !std.primitiveEquals(levels, null) && k.required
            && std.member(ctx.profile.singleNodeLevels, k.topology) && !std.primitiveEquals(train, null) && train.nodes > 1 then [{
           code: 'kueue.topology-required',
           pointer: pointer + '/topology',
           message: 'required topology ' + k.topology + ' puts all ' + train.nodes + ' training pods on one node: Kueue never admits it (kueue v0.19.2 apis/kueue/v1beta1/topology_types.go:22-28)',
           hint: 'require a level that holds ' + train.nodes + ' nodes (' + std.join(', ', [l for l in ctx.profile.topologyOrder if !std.member(ctx.profile.singleNodeLevels, l)]) + '), or set required: false',
         }] else [])
      // B5: the runtime's kind must be an enabled integration.
      + (if !std.primitiveEquals(integration, null) && !std.member(integrations, integration) then [{
           code: 'kueue.integration',
           pointer: ctx.targetPointer + (if std.objectHasEx(ctx.target, 'runtime', false) then '/runtime' else ''),
           message: 'Kueue ' + $.version + ' does not manage ' + integration + ' workloads unless its configuration enables that integration (kueue v0.19.2 charts/kueue/values.yaml:165-184 leaves it off): the training would stay suspended',
           hint: 'use runtime jobset, enable ' + integration + " in the cluster's Kueue and list it in kueue.integrations, or let nemoc install Kueue with it (spec.gitops.platform)",
         }] else []),
}
