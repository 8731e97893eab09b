// GitOps delivery of a target's tree (spec.gitops). Everything here is
// derived from the stage directories present in the target's files
// ("NN-name/...": NN is the stage's order), never from a list of stages:
//  - stage objects get Argo CD sync waves (wave NN) and, on workloads, the
//    sync options and Flux SSA policy immutable, Kueue-managed objects need;
// Each engine is an implementation of libsonnet/engine.libsonnet
// (libsonnet/engines/argocd.libsonnet, flux.libsonnet); this file holds what
// they share and asks each engine the spec names for its part:
//  - gitops/argocd/: the target's root Application (app of apps, managing
//    gitops/argocd/ itself), a pipeline and a serving Application, each the
//    kustomize root gitops/argocd/<part>/ over its stage directories, and
//    optionally an AppProject; with argocd.applicationSet one ApplicationSet
//    (first target's tree only) generates the roots instead;
//  - gitops/flux/: a GitRepository, a root Kustomization of gitops/flux/
//    itself and one Kustomization per stage directory, chained by dependsOn;
//  - gitops/platform/<engine>/: the cluster prerequisites (platform.libsonnet),
//    moved by compiler/cluster_bundle.cc to <out>/_clusters/<cluster>/platform/
//    and, for Argo CD, health checks for the training kinds.
// Facts: ../shared/reference/gitops-engines.md.
local clusterHas = import 'nemoc/cluster_has.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local health = import 'nemoc/health.libsonnet';
local platform = import 'nemoc/platform.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';

// "30" -> "30-train": the order table's directories by their two-digit
// prefix (unique: libsonnet_test StageOrderIsTheDirectoryOrder).
local stageDirByPrefix = { [s.dir[0] + s.dir[1]]: s.dir for s in order.stages };

{

  // Workload kinds: run-to-completion objects with a suspend field Kueue
  // flips and terminal conditions. Argo CD has a built-in health check only
  // for batch Jobs and Flux's kstatus understands only Jobs; the others get
  // Lua (Argo CD) and CEL (Flux) from their health records (health.libsonnet).
  // Argo CD: every workload kind gets a Lua health check, batch/v1 Job too:
  // the built-in one (argo-cd 37ee009 gitops-engine pkg/health/health_job.go)
  // reads any `Suspended` condition, also Kueue's Suspended=False/JobResumed,
  // as finished (field review C3); a resource.customizations.health key
  // replaces the built-in check (argo-cd docs/operator-manual/health.md).
  // Flux: kinds with `cel` are read through healthCheckExprs. batch/v1 Job is
  // not: kustomize-controller v1.9.4 internal/controller/
  // kustomization_controller.go getClientAndPoller puts fluxcd/pkg's Job
  // status reader (runtime/statusreaders/job.go) before the CEL reader, and
  // the poller takes the first reader that supports the GroupKind (C4).
  // The kinds of the runtimes come from their files (runtime.libsonnet
  // workload.health, collected in ctx.workloadKinds by nemoc.libsonnet); these
  // are the others: batch/v1 Job (every stage Job, and the indexed-job
  // runtime's workload) and the MPIJob the training operator also serves
  // (the cluster's Argo CD judges it for whoever creates one).
  coreWorkloads:: {
    'batch/Job': health.conditions('/spec/suspend', 'Complete', 'Failed', cel=false),
    'kubeflow.org/MPIJob': health.conditions('/spec/runPolicy/suspend', 'Succeeded', 'Failed'),
  },

  // Native calls only (issue #47: called for every object; std.split's
  // asserts and `==` are Jsonnet code).
  groupOf(apiVersion)::
    local parts = std.splitLimit(apiVersion, '/', 1);
    if std.primitiveEquals(std.length(parts), 1) then '' else parts[0],
  workloadKey(o):: $.groupOf(o.apiVersion) + '/' + o.kind,
  isWorkload(ctx, o):: std.objectHasEx(ctx.workloadKinds, $.workloadKey(o), false),

  // The stage directory of a file path ("30-train/job-x.yaml" -> "30-train"),
  // null for gitops/ and anything else. Stage files are keyed by the order
  // table's directories (k8s.file), so native character indexing and one
  // table lookup find it. This runs for every file of every target several
  // times, and std.split / std.substr are Jsonnet-level character loops in
  // libjsonnet 0.18 (std.split of a 60-character path: ~150 us): with
  // std.split here a 3-target build spent ~1.6 G instructions per pass.
  stageDirOf(path)::
    if std.length(path) < 4 || !std.primitiveEquals(path[2], '-') || !std.objectHasEx(stageDirByPrefix, path[0] + path[1], true) then null
    else
      local dir = stageDirByPrefix[path[0] + path[1]];
      if std.length(path) > std.length(dir) && path[std.length(dir)] == '/' then dir else null,
  wave(dir):: std.parseInt(dir[0] + dir[1]),
  stageName(dir):: std.substr(dir, 3, std.length(dir) - 3),
  stageDirs(files):: k8s.stringSet([d for d in [$.stageDirOf(p) for p in std.objectFields(files)] if !std.primitiveEquals(d, null)]),

  enabled(ctx):: std.objectHasEx(ctx.spec, 'gitops', false),

  // ---- stage objects -------------------------------------------------------

  // Workloads are never given ttlSecondsAfterFinished: the engine would see
  // the deleted object missing and re-create it, re-running the stage.
  checkNoTtl(path, o)::
    local spec = if std.objectHasEx(o, 'spec', false) then o.spec else {};
    local runPolicy = if std.objectHasEx(spec, 'runPolicy', false) then spec.runPolicy else {};
    if std.objectHasEx(spec, 'ttlSecondsAfterFinished', false) || std.objectHasEx(runPolicy, 'ttlSecondsAfterFinished', false)
    then error (path + ': a GitOps-managed workload must not set ttlSecondsAfterFinished (the engine would re-create and re-run it)')
    else o,

  // The engines the spec names (spec.gitops.engines), each an implementation
  // of libsonnet/engine.libsonnet, in a fixed order (by name): what they
  // contribute to one list (bootstrap, remove) comes in that order. The
  // table is generated from libsonnet/engines/ and each --jpath directory's
  // engines/ (compiler/jsonnet_expander.h PluginTable, compiler/engines.h).
  implementations:: import 'nemoc/engines.libsonnet',
  active(ctx):: [$.implementations[e] for e in k8s.stringSet(ctx.spec.gitops.engines)],
  // What the engines the spec names say about its settings (their
  // diagnostics(ctx); nemoc checks the built-in engines' rules before
  // expansion, compiler/check_registry.h kEngine).
  // And the bundle needs an engine that applies it (installsPlatform).
  diagnostics(ctx)::
    if !$.enabled(ctx) then []
    else
      local engines = $.active(ctx);
      std.flattenArrays([e.diagnostics(ctx) for e in engines])
      + (if ctx.spec.gitops.platform && std.primitiveEquals(std.length([e for e in engines if e.installsPlatform]), 0) then [{
           code: 'gitops.platform-engine',
           pointer: '/spec/gitops/platform',
           message: 'spec.gitops.platform: no engine the spec names applies the cluster\'s platform bundle ('
                    + std.join(', ', [e.title for e in engines]) + ' has no part in it)',
           hint: 'set gitops.platform: false and install the components SUMMARY.md lists yourself, or name an engine that applies it',
         }] else []),

  // A stage object as the engines need it: each engine's annotations
  // (stageAnnotations), the kept kinds' (keep), and no workload with a TTL.
  decorate(ctx, path, o, engines=null)::
    local dir = $.stageDirOf(path);
    local workload = $.isWorkload(ctx, o);
    local active = if std.primitiveEquals(engines, null) then $.active(ctx) else engines;
    local annotations = std.foldl(function(acc, e) acc + e.stageAnnotations(ctx, dir, o, workload), active, {})
                        + $.keep(ctx, o, active);
    local checked = if workload then $.checkNoTtl(path, o) else o;
    if !std.primitiveEquals(dir, null) && std.length(annotations) > 0
    then checked { metadata+: { annotations+: annotations } }
    else checked,

  // Decision F13 (field review C21, C23): data survives every deletion
  // path. The objects that hold data or its binding -- the Namespace, the
  // PersistentVolumeClaims and PersistentVolumes -- are never pruned and
  // never deleted by an engine: Argo CD skips them when it prunes and when a
  // resources finalizer deletes an Application's objects (argo-cd v3.5.1
  // controller/appcontroller.go:1252-1260 shouldBeDeleted; gitops-engine
  // pkg/sync/sync_context.go Prune=false), Flux when it prunes and when a
  // deleted Kustomization's finalizer deletes its inventory (kustomize-
  // controller v1.9.4 internal/controller/kustomization_controller.go:1407-
  // 1413 deleteObjects Exclusions). Workloads do go (the finalizers on the
  // Applications, below). Replay scenario F13-remove-target.
  keptKinds:: ['Namespace', 'PersistentVolumeClaim', 'PersistentVolume'],
  keep(ctx, o, engines=null)::
    if !std.member($.keptKinds, o.kind) then {}
    else std.foldl(function(acc, e) acc + e.keepAnnotations, if std.primitiveEquals(engines, null) then $.active(ctx) else engines, {}),

  // ---- names and paths -----------------------------------------------------

  sourcePath(ctx):: ctx.spec.gitops.path + '/' + ctx.project + '/' + ctx.target.name,
  // Names of a project's GitOps objects (Applications, AppProjects,
  // GitRepositories, Kustomizations) live in one namespace per engine for
  // every project: "project-target" alone is ambiguous (team-llama/prod and
  // team/llama-prod, field review E11), so a digest of the unambiguous
  // "project/target[/stage]" follows it.
  uniqueName(parts)::
    k8s.boundedName(std.join('-', parts), 63 - 7) + '-' + std.substr(std.md5(std.join('/', parts)), 0, 6),
  pairName(project, target):: $.uniqueName([project, target]),
  targetName(ctx):: $.pairName(ctx.project, ctx.target.name),
  stageObjectName(ctx, dir):: $.uniqueName([ctx.project, ctx.target.name, $.stageName(dir)]),

  labels(ctx):: {
    'app.kubernetes.io/managed-by': 'nemoc',
    'app.kubernetes.io/part-of': ctx.project,
    'nemoc.dev/target': ctx.target.name,
  },

  inCluster:: 'https://kubernetes.default.svc',

  destination(ctx, targetName)::
    local clusters = ctx.spec.gitops.clusters;
    { server: if std.objectHasEx(clusters, targetName, false) then clusters[targetName] else $.inCluster },

  // Kustomize roots the compiler writes as <dir>/kustomization.yaml (no
  // objects of their own), each engine's (kustomizations).
  kustomizations(ctx, files)::
    if !$.enabled(ctx) then {} else std.foldl(function(acc, e) acc + e.kustomizations(ctx, files), $.active(ctx), {}),

  // ---- platform bundle -------------------------------------------------------
  //
  // Rooted per cluster (decision F3): one tree per cluster,
  // <out>/_clusters/<cluster>/platform/, merged by compiler/cluster_bundle.cc
  // from every target naming the cluster (in any spec built into the same
  // output root), never part of a project's root. Its objects are named by
  // the cluster (Argo CD) or are cluster-wide by nature (Flux runs in the
  // cluster) and carry no project label; what a target contributes does not
  // depend on the target beyond its cluster's profile (Kueue integrations,
  // device plugin instance types are cluster-wide), so contributions merge.
  //   platform/argocd/       the root: one Application per cluster
  //                          (app of apps) + the argocd-cm health checks
  //   platform/apps/argocd/  one Application per component, ordered by
  //                          sync wave (dependency depth)
  //   platform/objects/      cluster objects using the components' CRDs
  //   platform/flux/         GitRepository + HelmRelease/Kustomization
  //                          per component, ordered by dependsOn

  platformLabels:: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': 'nemoc-platform' },

  // The cluster a target is delivered to: its gitops.clusters entry, else
  // Argo CD's own cluster.
  clusterServer(ctx):: $.destination(ctx, ctx.target.name).server,
  clusterKey(ctx)::
    local server = $.clusterServer(ctx);
    if std.primitiveEquals(server, 'https://kubernetes.default.svc') then 'in-cluster' else 'c' + std.substr(std.md5(server), 0, 10),
  // The cluster's name (targets[].cluster, else derived from the server):
  // its platform bundle is out/_clusters/<name>/platform/.
  clusterName(ctx)::
    if std.objectHasEx(ctx.target, 'cluster', false) then ctx.target.cluster else $.clusterKey(ctx),
  platformName(ctx, suffix):: k8s.boundedName('platform-' + $.clusterName(ctx) + (if std.primitiveEquals(suffix, '') then '' else '-' + suffix), 63),

  // The libraries emit the bundle below gitops/platform/ of each target (so
  // every object is verified with the target's); compiler/cluster_bundle.cc
  // moves it to <out>/_clusters/<cluster>/platform/, merged with the bundle
  // of every other target naming that cluster.
  platformDir:: 'gitops/platform',
  clustersDir:: '_clusters',
  platformRoot(ctx):: ctx.spec.gitops.path + '/' + $.clustersDir + '/' + $.clusterName(ctx) + '/platform',
  platformPath(ctx, sub):: $.platformRoot(ctx) + '/' + sub,

  // Wave of a component: its dependency depth; cluster objects come after
  // every component whose CRDs they use.
  objectsWave(needs):: 1 + std.foldl(std.max, [platform.depth(n) for n in needs], -1),

  // Cluster objects in groups by the components whose CRDs they use
  // (platform.objectNeeds): objects/ for none (Namespaces), objects/<a-b>/
  // otherwise, each applied by its own Application (wave after those
  // components) or Kustomization (dependsOn them). A group's file, its
  // Application and its Kustomization depend on the group alone, so every
  // project's contribution of them is equal (compiler/cluster_bundle.cc
  // merges equal files only): a project without RDMA adds no
  // network-operator objects and changes no wave (field review B25).
  objectGroup(o):: std.join('-', k8s.stringSet(platform.objectNeeds(o))),
  objectGroups(objects)::
    [
      { name: g, needs: k8s.stringSet(platform.objectNeeds([o for o in objects if $.objectGroup(o) == g][0])) }
      for g in k8s.stringSet([$.objectGroup(o) for o in objects])
    ],
  objectsDir(group):: 'objects' + (if std.primitiveEquals(group, '') then '' else '/' + group),
  objectsName(prefix, group):: prefix + 'objects' + (if std.primitiveEquals(group, '') then '' else '-' + group),

  // One owner per Namespace on a cluster (field review C20, issue #41 item
  // 3). Two projects naming one namespace would each apply and own it: Argo
  // CD reports SharedResourceWarning and the two Applications flip its labels
  // for ever (argo-cd v3.5.1 controller/state.go:804-812); kustomize-controller
  // prunes by owner labels (kustomization_controller.go:1409). With a platform
  // bundle the cluster bundle owns it: every project's contribution names it
  // with the same neutral labels, compiler/cluster_bundle.cc merges them into
  // one object, and a project's tree holds none. It is kept when no project
  // names it any more (both engines' annotations, whatever engines the
  // projects use: contributions must be equal to merge). Without a bundle
  // (gitops.platform: false) the project owns it as before; sharing it is
  // then the team's call.
  sharedNamespace(ctx):: {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: ctx.namespace,
      labels: $.platformLabels,
      // Kept by every engine (F13), whichever the targets sharing it name.
      annotations: std.foldl(function(acc, e) acc + $.implementations[e].keepAnnotations, std.objectFields($.implementations), {}),
    },
  },
  ownsNamespace(ctx):: $.enabled(ctx) && ctx.spec.gitops.platform,

  platformObjectFiles(objects)::
    std.foldl(function(acc, o) acc + k8s.file($.platformDir + '/' + $.objectsDir($.objectGroup(o)), o), objects, {}),

  // ---- entry points ----------------------------------------------------------

  // The target's files as the engines need them: stage objects decorated,
  // plus gitops/. Without spec.gitops the files are returned unchanged.
  files(ctx, all)::
    if !$.enabled(ctx) then all
    else
      local bundled = ctx.spec.gitops.platform;
      // The project's own objects: the bundle owns the Namespace (sharedNamespace).
      local files = if !bundled then all else { [p]: all[p] for p in std.objectFields(all) if !std.primitiveEquals(all[p].kind, 'Namespace') };
      local components = platform.installed(ctx, files);
      local objects = platform.clusterObjects(ctx, files) + (if bundled then [$.sharedNamespace(ctx)] else []);
      local withPlatform = ctx.spec.gitops.platform;
      local engines = $.active(ctx);
      local decorated = { [p]: $.decorate(ctx, p, files[p], engines) for p in std.objectFields(files) };
      decorated
      + std.foldl(function(acc, e) acc + e.files(ctx, files), engines, {})
      + (if withPlatform then $.platformObjectFiles(objects) else {})
      + (if withPlatform then std.foldl(function(acc, e) acc + e.platform(ctx, components, objects), engines, {}) else {}),

  // The command that applies a kustomize root from the repository root, as
  // every bootstrap step does (D10, below), and what a cluster bundle's step
  // adds.
  applyCommand(dir):: '`kubectl apply --server-side -k ' + dir + '`',
  bundleWait:: ' (the cluster bundle: its components and CRDs exist before any project object)',

  // Summary facts for SUMMARY.md.
  summary(ctx, files)::
    if !$.enabled(ctx) then {} else
      local engines = $.active(ctx);
      {
        engines: ctx.spec.gitops.engines,
        source: ctx.spec.gitops.repoURL + ' @ ' + ctx.spec.gitops.revision + ': ' + $.sourcePath(ctx),
        platform: if ctx.spec.gitops.platform then [
          n + ' ' + platform.components[n].version + platform.patchesSummary(n)
          for n in platform.installed(ctx, files)
        ] else [],
        // Where the target's platform bundle goes (compiler/cluster_bundle.cc):
        // targets naming one cluster must agree on its server and profile.
        // An engine that runs in the cluster it applies to (Flux) names no
        // API server (engine.libsonnet namesServer): server '' agrees with any.
        cluster: if ctx.spec.gitops.platform then {
          name: $.clusterName(ctx),
          server: if std.length([e for e in engines if e.namesServer]) > 0 || std.objectHasEx(ctx.spec.gitops.clusters, ctx.target.name, false)
          then $.clusterServer(ctx) else '',
          profile: ctx.profile.name,
          explicit: std.objectHasEx(ctx.target, 'cluster', false),
          has: clusterHas.text(ctx),
          path: $.platformRoot(ctx),
          // The cluster's part of the bootstrap, per engine (D10: the cluster
          // bundle's SUMMARY.md shows the same command as the target's).
          bootstrap: { [e.name]: e.clusterBootstrap(ctx) for e in engines },
        } else null,
        // The namespace of each engine's objects, by directory of the tree
        // (compiler.cc verifies each object in its own).
        namespaces: { [d]: e.namespace(ctx) for e in engines for d in e.dirs },
        // What each engine does with a commit that edits a stage while one
        // runs (field review C24; SUMMARY.md).
        editWhileRunning: [e.editWhileRunning for e in engines],
        // What the user applies by hand, once: the roots; everything else is
        // then kept in sync from Git by the engine. The cluster bundle's root
        // comes first and is waited for (decision F14: CRDs and the cluster
        // bundle before project objects): an Argo CD sync whose dry run meets
        // a kind without its CRD fails, and after syncPolicy.retry's tries
        // (about 15 minutes) auto-sync never retries the same revision (argo-cd
        // v3.5.1 controller/appcontroller.go:2393-2399). Replay scenario
        // C14-serving-before-engine, bootstrap (I5).
        // D10: one description of the bootstrap -- the engines' bootstrap(ctx).
        // Every command runs from the repository root (paths under
        // spec.gitops.path, the ones the engines read); SUMMARY.md, the
        // cluster bundle's SUMMARY.md (cluster.bootstrap above) and README.md
        // (tests/gitops/replay/readme.py copies an example's) show these
        // strings. Server-side apply, as the engines apply the same objects
        // afterwards (Argo CD's platform Applications sync with
        // ServerSideApply=true, kustomize-controller always applies
        // server-side): argocd-cm's health check keys are then owned key by
        // key, and a key another manager owns is a conflict kubectl names
        // instead of a silent overwrite.
        bootstrap: std.flattenArrays([e.bootstrap(ctx) for e in engines]),
        // Removing the target (decision F13, field review C23): nemoc removes
        // its directory, which the engines read as a missing path and change
        // nothing (argo-cd v3.5.1 controller/state.go:694-699 ComparisonError,
        // sync status Unknown; kustomize-controller v1.9.4
        // kustomization_controller.go:377-381); deleting the root then deletes
        // the workloads and keeps the data. Replay scenario C23-remove-target.
        local kept = if $.ownsNamespace(ctx)
        then 'the PersistentVolumeClaims/PersistentVolumes stay with their data (delete them by hand once it is no longer needed), and so does the Namespace, which the cluster bundle owns'
        else 'the Namespace and the PersistentVolumeClaims/PersistentVolumes stay with their data; delete them by hand once it is no longer needed',
        remove: std.flattenArrays([e.remove(ctx, kept) for e in engines]),
      },
}
