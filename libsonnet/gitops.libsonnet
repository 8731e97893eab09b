// GitOps delivery of a target's tree (spec.gitops). Everything here is
// derived from the stage directories present in the target's files
// ("NN-name/...": NN is the stage's order), never from a list of stages:
//  - stage objects get Argo CD sync waves (wave NN) and, on workloads, the
//    sync options and Flux SSA policy immutable, Kueue-managed objects need;
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
  argocdApiVersion: 'argoproj.io/v1alpha1',
  fluxSourceApiVersion: 'source.toolkit.fluxcd.io/v1',
  fluxKustomizeApiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  fluxHelmApiVersion: 'helm.toolkit.fluxcd.io/v2',

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
  engine(ctx, name):: std.member(ctx.spec.gitops.engines, name),

  // ---- stage objects -------------------------------------------------------

  // Workloads are never given ttlSecondsAfterFinished: the engine would see
  // the deleted object missing and re-create it, re-running the stage.
  checkNoTtl(path, o)::
    local spec = if std.objectHasEx(o, 'spec', false) then o.spec else {};
    local runPolicy = if std.objectHasEx(spec, 'runPolicy', false) then spec.runPolicy else {};
    if std.objectHasEx(spec, 'ttlSecondsAfterFinished', false) || std.objectHasEx(runPolicy, 'ttlSecondsAfterFinished', false)
    then error (path + ': a GitOps-managed workload must not set ttlSecondsAfterFinished (the engine would re-create and re-run it)')
    else o,

  decorate(ctx, path, o)::
    local dir = $.stageDirOf(path);
    local workload = $.isWorkload(ctx, o);
    local annotations =
      // No Replace/Force: names are content-hashed, so an existing workload
      // is never changed, and Replace=true + Force=true would delete and
      // re-create it (re-run it) on every sync (argo-cd 37ee009 gitops-engine
      // pkg/sync/sync_context.go, docs/user-guide/sync-options.md "for job
      // resources that should run every time"): C1.
      (if $.engine(ctx, 'argocd') then $.waveAnnotation($.wave(dir)) else {})
      // Field review C25 (Argo CD half): an HPA on a custom metric is
      // Degraded until the metric exists (argo-cd v3.5.1 gitops-engine
      // pkg/health/health_hpa.go:108-117), which made the serving Application
      // Degraded after every deploy. The autoscaler's health is left out of
      // the Application's (controller/health.go:40-43,
      // docs/operator-manual/health.md "Ignoring Child Resource Health
      // Check"); the Deployment's still counts, and the HPA's own status still
      // shows on its resource. Replay scenario C25-health-of-new-objects.
      + (if $.engine(ctx, 'argocd') && std.primitiveEquals(o.kind, 'HorizontalPodAutoscaler')
         then { 'argocd.argoproj.io/ignore-healthcheck': 'true' } else {})
      + $.keep(ctx, o)
      + (if $.engine(ctx, 'flux') && workload then {
           // Create, never patch: keeps Kueue's suspend flip and never
           // touches a running or finished workload. The stage's
           // Kustomization names it in spec.healthChecks, which Flux checks
           // even when the object is Skipped (C2).
           'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent',
         } else {});
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
  keep(ctx, o)::
    if !std.member($.keptKinds, o.kind) then {}
    else (if $.engine(ctx, 'argocd') then { 'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false' } else {})
         + (if $.engine(ctx, 'flux') then { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } else {}),

  // Deleting an Application (a removed target's root, a removed stage part)
  // deletes the objects it manages, except those kept above; without the
  // finalizer they ran on untracked (C23: GPU Deployments leaked)
  // (argo-cd v3.5.1 docs/user-guide/app_deletion.md:41-54,
  // controller/appcontroller.go:1344-1380 CascadedDeletion).
  cascade:: { finalizers: ['resources-finalizer.argocd.argoproj.io'] },

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

  // ---- Argo CD ---------------------------------------------------------------
  //
  // Per target (field review C11, decisions F3/F4):
  //   gitops/argocd/             the root's source: the root Application itself
  //                              (argo-cd 37ee009 controller/health.go and
  //                              appcontroller.go shouldBeDeleted skip a self-
  //                              referenced Application, so an app may manage
  //                              itself), the pipeline and serving Applications,
  //                              the AppProject
  //   gitops/argocd/<part>/      a kustomize root over the part's stage
  //                              directories (../../../NN-stage): what the
  //                              part's Application syncs
  //   gitops/argocd/applicationset/  (argocd.applicationSet, first target's
  //                              tree only) one ApplicationSet generating every
  //                              target's root
  // The root syncs the AppProject, then the pipeline Application, waits until
  // it is Healthy (every workload finished: the Application health check of
  // the platform's argocd-cm, decision F4), then creates the serving
  // Application. Pipeline and serving are separate sync operations: a scale
  // or config change of Triton does not wait behind a days-long training.

  inCluster:: 'https://kubernetes.default.svc',

  destination(ctx, targetName)::
    local clusters = ctx.spec.gitops.clusters;
    { server: if std.objectHasEx(clusters, targetName, false) then clusters[targetName] else $.inCluster },

  projectName(ctx, targetName)::
    if $.createsProject(ctx)
    then $.pairName(ctx.project, targetName)
    else ctx.spec.gitops.argocd.project,
  // With an ApplicationSet the per-target AppProject is synced by the root
  // it generates, so that root must live in a project that exists before
  // it: the cluster bundle's roots project (compiler/checks.cc refuses
  // applicationSet + createProject without a bundle).
  createsProject(ctx):: ctx.spec.gitops.argocd.createProject && (!ctx.spec.gitops.argocd.applicationSet || $.usesRootsProject(ctx)),

  // Roots and projects (decision F14, field review C22). A root only creates
  // Applications and its target's AppProject in Argo CD's namespace: it
  // lives in the cluster bundle's roots project, which permits exactly that
  // (argo-cd v3.5.1 pkg/apis/application/v1alpha1/app_project_types.go:399-418
  // IsGroupKindNamePermitted: a non-nil namespaceResourceWhitelist permits
  // only its kinds, an empty clusterResourceWhitelist no cluster-scoped
  // kind). The per-target project of the stage Applications permits the
  // workload namespace only and the kinds the target emits: it can no longer
  // write argocd-cm or a cluster Secret in Argo CD's namespace
  // (admin-equivalent, docs/operator-manual/declarative-setup.md:108-113).
  // One roots project per repository on a cluster (contributions of every
  // project from that repository are equal and merge).
  usesRootsProject(ctx):: $.engine(ctx, 'argocd') && ctx.spec.gitops.platform,
  rootsProjectName(ctx):: 'nemoc-roots-' + std.substr(std.md5(ctx.spec.gitops.repoURL), 0, 8),
  rootProjectName(ctx, targetName):: if $.usesRootsProject(ctx) then $.rootsProjectName(ctx) else $.projectName(ctx, targetName),
  argocdKinds:: [{ group: 'argoproj.io', kind: 'Application' }, { group: 'argoproj.io', kind: 'AppProject' }],
  rootsProject(ctx):: {
    apiVersion: $.argocdApiVersion,
    kind: 'AppProject',
    metadata: {
      name: $.rootsProjectName(ctx),
      namespace: ctx.spec.gitops.argocd.namespace,
      labels: $.platformLabels,
    },
    spec: {
      description: "nemoc roots of " + ctx.spec.gitops.repoURL + ": Applications and AppProjects in Argo CD's namespace only",
      sourceRepos: [ctx.spec.gitops.repoURL],
      destinations: [{ server: $.inCluster, namespace: ctx.spec.gitops.argocd.namespace }],
      clusterResourceWhitelist: [],
      namespaceResourceWhitelist: $.argocdKinds,
    },
  },

  // A kind nothing suspends (suspend: null, a Volcano Job) and no webhook
  // mutates has no entry.
  ignoreDifferences(ctx):: [
    entry
    for entry in [
      {
        group: std.split(key, '/')[0],
        kind: std.split(key, '/')[1],
        jsonPointers: (if std.primitiveEquals(ctx.workloadKinds[key].suspend, null) then [] else [ctx.workloadKinds[key].suspend])
                      + (if std.objectHasEx(ctx.workloadKinds[key], 'mutatedBy', false) then ctx.workloadKinds[key].mutatedBy else []),
      }
      for key in std.objectFields(ctx.workloadKinds)
    ]
    if std.length(entry.jsonPointers) > 0
  ],

  argocdDir:: 'gitops/argocd',
  rootName(project, target):: $.uniqueName([project, target, 'gitops']),
  rootPath(project, target, ctx):: ctx.spec.gitops.path + '/' + project + '/' + target + '/' + $.argocdDir,

  // The target's stage directories as Argo CD delivers them: the pipeline
  // (everything up to the engine) and what serves its result, each with its
  // Application's name and its wave in the root. The pipeline keeps the
  // name the single Application had, so upgrading nemoc adopts it.
  argocdParts(ctx, files)::
    local dirs = $.stageDirs(files);
    local serving = [d for d in dirs if std.member(order.servingDirs, d)];
    local pipeline = [d for d in dirs if !std.member(order.servingDirs, d)];
    [p for p in [
      { part: 'pipeline', name: $.targetName(ctx), dirs: pipeline, wave: 0 },
      { part: 'serving', name: $.uniqueName([ctx.project, ctx.target.name, 'serving']), dirs: serving, wave: 1 },
    ] if std.length(p.dirs) > 0],

  // Kustomize roots the compiler writes as <dir>/kustomization.yaml (no
  // objects of their own): a part's stage directories, relative to it.
  argocdKustomizations(ctx, files)::
    (if !($.enabled(ctx) && $.engine(ctx, 'argocd')) then {} else {
       [$.argocdDir + '/' + p.part]: ['../../../' + d for d in p.dirs]
       for p in $.argocdParts(ctx, files)
     } + (if ctx.spec.gitops.argocd.applicationSet then {} else { [$.argocdDir]: ['root'] }))
    + (if !($.enabled(ctx) && $.engine(ctx, 'flux')) then {} else { [$.fluxDir]: ['root'] }),

  // A part's Application: its stage objects, their waves, Kueue's suspend
  // flip ignored, applied once.
  applicationSpec(ctx, path):: {
    project: $.projectName(ctx, ctx.target.name),
    source: {
      repoURL: ctx.spec.gitops.repoURL,
      targetRevision: ctx.spec.gitops.revision,
      path: path,
    },
    destination: $.destination(ctx, ctx.target.name) { namespace: ctx.namespace },
    // Kueue admits a workload by setting suspend to false: not drift.
    ignoreDifferences: $.ignoreDifferences(ctx),
    syncPolicy: {
      // No ApplyOutOfSyncOnly (field review C15). With it, a retried sync
      // drops every task whose object is unchanged (gitops-engine, vendored
      // in argo-cd v3.5.1, pkg/sync/sync_context.go:646-648,
      // filterOutOfSyncTasks :761-775), the Degraded workload included, and
      // the retry applies the next wave: after a failed training each retry
      // started one more stage (tests/gitops/replay scenario
      // C15-retry-after-failed-stage). Without it the retry applies the
      // failed stage again -- an unchanged object, a no-op apply, no
      // Replace/Force (C1) -- and fails on its health in the same wave
      // (:538-570, :631-637). A finished workload is still not re-run: the
      // apply changes nothing.
      syncOptions: ['CreateNamespace=true', 'RespectIgnoreDifferences=true'],
      // Auto-sync does not retry a failed revision by itself (C7); bounded.
      retry: $.argocdRetry,
    } + $.automated(ctx),
  },

  automated(ctx):: if ctx.spec.gitops.automated then { automated: { prune: true, selfHeal: true } } else {},

  // The root's spec, shared by the per-target root Application and the
  // ApplicationSet template (which passes Go-template placeholders). Its
  // objects (Applications, AppProject) live in Argo CD's own namespace.
  rootSpec(ctx, project, path):: {
    project: project,
    source: {
      repoURL: ctx.spec.gitops.repoURL,
      targetRevision: ctx.spec.gitops.revision,
      path: path,
    },
    destination: { server: $.inCluster, namespace: ctx.spec.gitops.argocd.namespace },
    // Every child Application on every sync, like the parts (C15): with
    // ApplyOutOfSyncOnly a retry dropped the unchanged, Degraded pipeline
    // Application of wave 0 and applied the serving one of wave 1. An
    // unchanged Application applies as a no-op.
    syncPolicy: { retry: $.argocdRetry } + $.automated(ctx),
  },

  // Marks a root Application for the app-of-apps health Lua (applicationHealthLua).
  rootLabel:: { 'nemoc.dev/gitops-root': 'true' },

  argocdRetry:: { limit: 5, backoff: { duration: '30s', factor: 2, maxDuration: '10m' } },

  argocdMetadata(ctx, name):: {
    name: name,
    namespace: ctx.spec.gitops.argocd.namespace,
    labels: $.labels(ctx),
  },

  waveAnnotation(n):: { 'argocd.argoproj.io/sync-wave': std.toString(n) },

  rootApplication(ctx):: {
    apiVersion: $.argocdApiVersion,
    kind: 'Application',
    metadata: $.argocdMetadata(ctx, $.rootName(ctx.project, ctx.target.name)) { labels+: $.rootLabel } + $.cascade,
    spec: $.rootSpec(ctx, $.rootProjectName(ctx, ctx.target.name), $.rootPath(ctx.project, ctx.target.name, ctx)),
  },

  partApplication(ctx, p):: {
    apiVersion: $.argocdApiVersion,
    kind: 'Application',
    metadata: $.argocdMetadata(ctx, p.name) { annotations: $.waveAnnotation(p.wave) } + $.cascade,
    spec: $.applicationSpec(ctx, $.sourcePath(ctx) + '/' + $.argocdDir + '/' + p.part),
  },

  // One object for all targets of the project, in the first target's tree:
  // it generates each target's root (which then manages that target's
  // gitops/argocd/). Applied once by hand.
  applicationSet(ctx):: {
    apiVersion: $.argocdApiVersion,
    kind: 'ApplicationSet',
    metadata: $.argocdMetadata(ctx, ctx.project) {
      labels: { 'app.kubernetes.io/managed-by': 'nemoc', 'app.kubernetes.io/part-of': ctx.project },
    },
    spec: {
      goTemplate: true,
      goTemplateOptions: ['missingkey=error'],
      generators: [{
        list: {
          elements: [
            {
              target: t.name,
              name: $.rootName(ctx.project, t.name),
              path: $.rootPath(ctx.project, t.name, ctx),
              project: $.rootProjectName(ctx, t.name),
            }
            for t in ctx.spec.targets
          ],
        },
      }],
      template: {
        metadata: {
          name: '{{.name}}',
          labels: {
            'app.kubernetes.io/managed-by': 'nemoc',
            'app.kubernetes.io/part-of': ctx.project,
          } + $.rootLabel,
        } + $.cascade,
        spec: $.rootSpec(ctx, '{{.project}}', '{{.path}}'),
      },
    },
  },

  firstTarget(ctx):: ctx.spec.targets[0].name == ctx.target.name,

  appProject(ctx, files):: {
    local clusterScoped = k8s.stringSet([
      $.groupOf(files[p].apiVersion) + '/' + files[p].kind
      for p in std.objectFields(files)
      if !std.objectHasEx(files[p].metadata, 'namespace', false)
    ]),
    local namespaced = k8s.stringSet([
      $.groupOf(files[p].apiVersion) + '/' + files[p].kind
      for p in std.objectFields(files)
      if std.objectHasEx(files[p].metadata, 'namespace', false)
    ]),
    local roots = $.usesRootsProject(ctx),
    apiVersion: $.argocdApiVersion,
    kind: 'AppProject',
    // Before the Applications that name it.
    metadata: $.argocdMetadata(ctx, $.projectName(ctx, ctx.target.name)) { annotations: $.waveAnnotation(-1) },
    spec: {
      description: 'nemoc project ' + ctx.project + ', target ' + ctx.target.name,
      sourceRepos: [ctx.spec.gitops.repoURL],
      // The workloads' namespace only when the root lives in the bundle's
      // roots project (rootsProject above); without a bundle the root is in
      // this project too and needs Argo CD's namespace for its Applications
      // and this AppProject. The namespaced kinds the target emits (C22: an
      // unset whitelist permits every kind, app_project_types.go:405-408).
      destinations: [
        $.destination(ctx, ctx.target.name) { namespace: ctx.namespace },
      ] + (if roots then [] else [{ server: $.inCluster, namespace: ctx.spec.gitops.argocd.namespace }]),
      // With the bundle owning the Namespace (sharedNamespace) the
      // pipeline's CreateNamespace=true may still create it, by name only,
      // if the pipeline syncs before the bundle's objects (gitops-engine
      // sync_context.go:1180-1200: the namespace task is permission-checked).
      clusterResourceWhitelist: [
        { group: std.split(gk, '/')[0], kind: std.split(gk, '/')[1] }
        for gk in clusterScoped
      ] + (if $.ownsNamespace(ctx) then [{ group: '', kind: 'Namespace', name: ctx.namespace }] else []),
      namespaceResourceWhitelist: [
        { group: std.split(gk, '/')[0], kind: std.split(gk, '/')[1] }
        for gk in namespaced
      ] + (if roots then [] else $.argocdKinds),
    },
  },

  argocdFiles(ctx, files)::
    local dir = $.argocdDir;
    local appSet = ctx.spec.gitops.argocd.applicationSet;
    std.foldl(function(acc, p) acc + k8s.file(dir, $.partApplication(ctx, p)), $.argocdParts(ctx, files), {})
    + (if appSet then {} else k8s.file($.argocdRootDir, $.rootApplication(ctx)))
    + (if appSet && $.firstTarget(ctx) then k8s.file(dir + '/applicationset', $.applicationSet(ctx)) else {})
    // The AppProject beside the root when the bootstrap applies the root:
    // an Application naming a project that does not exist is not synced.
    + (if $.createsProject(ctx) then k8s.file(if appSet then dir else $.argocdRootDir, $.appProject(ctx, files)) else {}),

  // The bootstrap applies roots only (field review C14, decision F14): the
  // root Application lives in gitops/argocd/root/, which the bootstrap
  // applies (kubectl apply -k gitops/argocd/root) and gitops/argocd lists as
  // a resource, so the root still syncs itself, then the pipeline and the
  // serving Application in their waves. Applying gitops/argocd by hand
  // created the serving Application at once: Triton started before any
  // engine existed (replay scenario C14-serving-before-engine). Flux alike:
  // gitops/flux/root/ holds the GitRepository and the root Kustomization.
  argocdRootDir:: $.argocdDir + '/root',

  // ---- Flux ------------------------------------------------------------------

  fluxMetadata(ctx, name):: {
    name: name,
    namespace: ctx.spec.gitops.flux.namespace,
    labels: $.labels(ctx),
  },

  gitRepository(ctx):: {
    apiVersion: $.fluxSourceApiVersion,
    kind: 'GitRepository',
    metadata: $.fluxMetadata(ctx, $.targetName(ctx)),
    spec: {
      interval: ctx.spec.gitops.flux.interval,
      url: ctx.spec.gitops.repoURL,
      ref: { branch: ctx.spec.gitops.revision },
      // The artifact holds this target's tree only (C11): a commit to another
      // project does not change what this target's Kustomizations read, and
      // the artifact does not grow with the repository.
      ignore: $.onlyPath($.sourcePath(ctx)),
    } + (if std.objectHasEx(ctx.spec.gitops.flux, 'secretRef', false) then { secretRef: { name: ctx.spec.gitops.flux.secretRef } } else {}),
  },

  // .sourceignore patterns (gitignore format; a GitRepository's spec.ignore
  // replaces the default exclusions) that keep only `path`: exclude every
  // entry of each parent, re-include the next segment.
  onlyPath(path)::
    local segments = std.split(path, '/');
    std.join('\n', ['/*'] + std.flattenArrays([
      (if std.primitiveEquals(k, 0) then [] else ['/' + std.join('/', segments[0:k]) + '/*'])
      + ['!/' + std.join('/', segments[0:k + 1]) + '/']
      for k in std.range(0, std.length(segments) - 1)
    ])) + '\n',

  // The target's root object for Flux (C11): a Kustomization of gitops/flux
  // itself. Applied once by hand (kubectl apply -k gitops/flux), it then keeps
  // the GitRepository, itself and every stage Kustomization in sync with Git,
  // and prunes the Kustomization of a stage the spec no longer has.
  fluxRoot(ctx):: {
    apiVersion: $.fluxKustomizeApiVersion,
    kind: 'Kustomization',
    metadata: $.fluxMetadata(ctx, $.uniqueName([ctx.project, ctx.target.name, 'gitops'])),
    spec: {
      interval: ctx.spec.gitops.flux.interval,
      path: './' + $.sourcePath(ctx) + '/gitops/flux',
      sourceRef: { kind: 'GitRepository', name: $.targetName(ctx) },
      prune: true,
      wait: false,
    },
  },

  // Flux's healthCheckExprs entry of a kind (Flux matches the group of
  // apiVersion only): the CEL of its health record (health.libsonnet).
  healthCheckExpr(apiVersion, kind, w):: { apiVersion: apiVersion, kind: kind } + w.cel,

  // A reference to `o` for spec.healthChecks.
  healthCheckRef(o):: {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
  } + (if std.objectHasEx(o.metadata, 'namespace', false) then { namespace: o.metadata.namespace } else {}),

  // Field review C18, decision F17. kustomize-controller waits for a stage's
  // health checks inside the reconcile, holding one of its 4 workers
  // (v1.9.4 main.go:113 --concurrent=4; internal/controller/
  // kustomization_controller.go:1059-1064 WaitForSetWithContext up to
  // GetTimeout()), and marks every timeout Ready=False HealthCheckFailed
  // (:1065-1071), retrying after GetRetryInterval() (:295-305). So Flux
  // polls: a short timeout (gitops.defaultTimeout, default 1m, at most 10m,
  // compiler/checks.cc) and a retryInterval (gitops.flux.retryInterval,
  // default 2m) with the worker free; a multi-day training holds a worker a
  // third of the time, and reads Ready=False with its workload InProgress
  // between polls. What bounds the run is the workload's own deadline
  // (stages.train.timeout -> activeDeadlineSeconds, runtime.libsonnet).
  // Scenario C18-flux-workers-held (tests/gitops/replay).

  stageKustomization(ctx, files, dirs, i)::
    local dir = dirs[i];
    local paths = [p for p in std.objectFields(files) if $.stageDirOf(p) == dir];
    local objects = [files[p] for p in paths];
    local workloads = [o for o in objects if $.isWorkload(ctx, o)];
    local custom = k8s.stringSet([$.workloadKey(o) for o in workloads if !std.primitiveEquals(ctx.workloadKinds[$.workloadKey(o)].cel, null)]);
    local apiVersionOf(key) = [o.apiVersion for o in workloads if $.workloadKey(o) == key][0];
    {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: $.fluxMetadata(ctx, $.stageObjectName(ctx, dir)),
      spec: {
              interval: ctx.spec.gitops.flux.interval,
              retryInterval: ctx.spec.gitops.flux.retryInterval,
              path: './' + $.sourcePath(ctx) + '/' + dir,
              sourceRef: { kind: 'GitRepository', name: $.targetName(ctx) },
              prune: true,
              // wait: true checks only what was applied in this reconcile:
              // an existing IfNotPresent workload is Skipped and never
              // checked again (kustomize-controller v1.9.4 internal/
              // controller/kustomization_controller.go checkHealth). With
              // wait: false the objects named in healthChecks are checked on
              // every reconcile, Skipped or not (C2).
              wait: false,
              healthChecks: [$.healthCheckRef(files[p]) for p in paths],
              timeout: ctx.spec.gitops.defaultTimeout,
            } + (if i > 0 then { dependsOn: [{ name: $.stageObjectName(ctx, dirs[i - 1]) }] } else {})
            + (if std.length(custom) > 0 then {
                 healthCheckExprs: [
                   $.healthCheckExpr(apiVersionOf(key), std.split(key, '/')[1], ctx.workloadKinds[key])
                   for key in custom
                 ],
               } else {}),
    },

  fluxDir:: 'gitops/flux',
  fluxRootDir:: $.fluxDir + '/root',
  fluxFiles(ctx, files)::
    local dir = $.fluxDir;
    local dirs = $.stageDirs(files);
    k8s.file($.fluxRootDir, $.gitRepository(ctx))
    + k8s.file($.fluxRootDir, $.fluxRoot(ctx))
    + std.foldl(function(acc, i) acc + k8s.file(dir, $.stageKustomization(ctx, files, dirs, i)),
                std.range(0, std.length(dirs) - 1),
                {}),

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

  // Argo CD does not re-try a failed automated sync of a revision unless told
  // (C7): every platform Application retries with backoff.
  platformSyncPolicy(ctx, prune):: {
    syncOptions: ['CreateNamespace=true', 'ServerSideApply=true'],
    retry: { limit: 10, backoff: { duration: '30s', factor: 2, maxDuration: '10m' } },
  } + (if ctx.spec.gitops.automated then { automated: { prune: prune, selfHeal: true } } else {}),

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

  platformComponentApplication(ctx, name)::
    local c = platform.components[name];
    local values = platform.values(ctx, name);
    {
      apiVersion: $.argocdApiVersion,
      kind: 'Application',
      metadata: {
        name: $.platformName(ctx, name),
        namespace: ctx.spec.gitops.argocd.namespace,
        labels: $.platformLabels,
        annotations: { 'argocd.argoproj.io/sync-wave': std.toString(platform.depth(name)) },
      },
      spec: {
        project: 'default',
        source: { repoURL: c.repo, targetRevision: c.tag, path: c.path }
                + (if std.primitiveEquals(c.kind, 'helm') then { helm: { releaseName: name } + (if std.length(values) > 0 then { valuesObject: values } else {}) } else {})
                + (if std.primitiveEquals(c.kind, 'kustomize') && std.length(platform.kustomizePatches(name)) > 0 then { kustomize: { patches: platform.kustomizePatches(name) } } else {}),
        destination: { server: $.clusterServer(ctx), namespace: c.namespace },
        // Large CRDs exceed the client-side apply annotation limit.
        syncPolicy: $.platformSyncPolicy(ctx, false),
      },
    },

  platformArgocd(ctx, names, objects)::
    local appsDir = $.platformDir + '/apps/argocd';
    local apps = std.foldl(function(acc, name) acc + k8s.file(appsDir, $.platformComponentApplication(ctx, name)), names, {})
                 + std.foldl(function(acc, g) acc + k8s.file(appsDir, {
                      apiVersion: $.argocdApiVersion,
                      kind: 'Application',
                      metadata: {
                        name: $.platformName(ctx, $.objectsName('', g.name)),
                        namespace: ctx.spec.gitops.argocd.namespace,
                        labels: $.platformLabels,
                        annotations: { 'argocd.argoproj.io/sync-wave': std.toString($.objectsWave(g.needs)) },
                      },
                      spec: {
                        project: 'default',
                        source: { repoURL: ctx.spec.gitops.repoURL, targetRevision: ctx.spec.gitops.revision, path: $.platformPath(ctx, $.objectsDir(g.name)) },
                        destination: { server: $.clusterServer(ctx) },
                        syncPolicy: $.platformSyncPolicy(ctx, false) { syncOptions: ['ServerSideApply=true'] },
                      },
                    }), $.objectGroups(objects), {});
    // The root: syncs the component Applications wave by wave; a wave waits
    // for the previous one to be Healthy thanks to the Application health
    // check in argocd-cm (decision F4). It never prunes: another project's
    // tree may have added components to this cluster's root.
    local root = {
      apiVersion: $.argocdApiVersion,
      kind: 'Application',
      metadata: {
        name: $.platformName(ctx, ''),
        namespace: ctx.spec.gitops.argocd.namespace,
        labels: $.platformLabels,
      },
      spec: {
        project: 'default',
        source: { repoURL: ctx.spec.gitops.repoURL, targetRevision: ctx.spec.gitops.revision, path: $.platformPath(ctx, 'apps/argocd') },
        destination: { server: 'https://kubernetes.default.svc', namespace: ctx.spec.gitops.argocd.namespace },
        syncPolicy: $.platformSyncPolicy(ctx, false) { syncOptions: ['ServerSideApply=true'] },
      },
    };
    apps
    + k8s.file($.platformDir + '/argocd', root)
    + k8s.file($.platformDir + '/argocd', $.rootsProject(ctx))
    + k8s.file($.platformDir + '/argocd', $.argocdHealthConfig(ctx)),

  // Argo CD's documented health check for Application resources (argo-cd
  // docs/operator-manual/health.md, "Argo CD App"): since v1.8 Argo CD no
  // longer assesses child Applications, so an app of apps would not wait
  // for a wave to be Healthy without it.
  // A child Application's health as its parent (app of apps) waits on it
  // (field review C14). Since Argo CD 3.4 a resource not yet created does not
  // count toward an Application's health (argo-cd v3.5.1
  // controller/health.go:75-78; docs/operator-manual/upgrading/3.3-3.4.md):
  // a pipeline whose later waves are not applied yet reads Healthy. So a
  // child is Healthy only when its own health is Healthy, it is Synced and
  // no operation runs or is requested; a running operation is Progressing
  // (Degraded stays Degraded), a failed or errored one Degraded, so the
  // parent's next wave (the serving Application) waits, and halts on a
  // failure. Replay scenario C14-serving-before-engine.
  // Only nemoc's own child Applications get these rules (the key is
  // cluster-wide: any other team's Application keeps Argo CD's documented
  // health-only verdict), and never a root: a root that manages itself is a
  // resource of its own sync (argo-cd v3.5.1 controller/sync.go:313-318 keeps
  // objects the app tracks, itself included; gitops-engine
  // pkg/sync/sync_context.go:540-570 waits on the Lua verdict of each running
  // task), so "an operation runs" or "OutOfSync until wave 1 exists" would
  // make it wait on itself for ever (found by the replay's STALL invariant,
  // tests/gitops/replay/mutations.py).
  applicationHealthLua::
    'hs = {}\n'
    + 'hs.status = "Progressing"\n'
    + 'hs.message = ""\n'
    + 'if obj.status ~= nil then\n'
    + '  if obj.status.health ~= nil then\n'
    + '    hs.status = obj.status.health.status\n'
    + '    if obj.status.health.message ~= nil then\n'
    + '      hs.message = obj.status.health.message\n'
    + '    end\n'
    + '  end\n'
    + '  local labels = (obj.metadata ~= nil and obj.metadata.labels) or {}\n'
    + '  if labels["app.kubernetes.io/managed-by"] ~= "nemoc" or labels["nemoc.dev/gitops-root"] == "true" then\n'
    + '    return hs\n'
    + '  end\n'
    + '  local op = obj.status.operationState\n'
    + '  if obj.operation ~= nil or (op ~= nil and (op.phase == "Running" or op.phase == "Terminating")) then\n'
    + '    if hs.status ~= "Degraded" then\n'
    + '      hs.status = "Progressing"\n'
    + '      hs.message = "an operation is running"\n'
    + '    end\n'
    + '    return hs\n'
    + '  end\n'
    + '  if op ~= nil and (op.phase == "Failed" or op.phase == "Error") then\n'
    + '    hs.status = "Degraded"\n'
    + '    hs.message = op.message or "the last sync failed"\n'
    + '    return hs\n'
    + '  end\n'
    // A child whose source path left Git (a stage part or serving removed
    // from the spec) compares with "app path does not exist" (argo-cd v3.5.1
    // controller/state.go:694-699, util/app/path/path.go:15) and stays
    // Unknown: it is about to be pruned by its parent. Read as Progressing it
    // would hold that parent's wave for ever -- a root syncing itself waits on
    // its own health (replay scenario C23-remove-serve found it).
    + '  if hs.status == "Healthy" and (obj.status.sync == nil or obj.status.sync.status ~= "Synced") then\n'
    + '    local gone = false\n'
    + '    for _, c in ipairs(obj.status.conditions or {}) do\n'
    + '      if c.type == "ComparisonError" and c.message ~= nil and string.find(c.message, "app path does not exist", 1, true) then\n'
    + '        gone = true\n'
    + '      end\n'
    + '    end\n'
    + '    if not gone then\n'
    + '      hs.status = "Progressing"\n'
    + '      hs.message = "not synced yet"\n'
    + '    end\n'
    + '  end\n'
    + 'end\n'
    + 'return hs\n',

  // Argo CD health checks for the workload kinds it cannot judge itself.
  // Applied server-side, this owns only these keys of argocd-cm.
  argocdHealthConfig(ctx):: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'argocd-cm',
      namespace: ctx.spec.gitops.argocd.namespace,
      labels: { 'app.kubernetes.io/name': 'argocd-cm', 'app.kubernetes.io/part-of': 'argocd' },
    },
    data: {
      ['resource.customizations.health.' + std.split(key, '/')[0] + '_' + std.split(key, '/')[1]]:
        ctx.workloadKinds[key].lua
      for key in std.objectFields(ctx.workloadKinds)
    } + {
      'resource.customizations.health.argoproj.io_Application': $.applicationHealthLua,
    },
  },

  // Flux: every component is a Kustomization, so dependsOn orders them all
  // (kustomize-controller v1.9.4 api/v1/kustomization_types.go:52-56:
  // dependsOn names Kustomizations only). A Helm component is a HelmRelease
  // in flux/components/<name>/, applied by a Kustomization platform-<name>
  // with wait: it is Ready once the HelmRelease is Ready, its CRDs installed
  // (field review B25). Cluster objects are applied per group
  // (objectGroups): platform-objects-<components> after the components whose
  // CRDs they use, platform-objects (Namespaces) at once.
  platformFlux(ctx, names, objects)::
    local dir = $.platformDir + '/flux';
    local meta(name) = {
      name: name,
      namespace: ctx.spec.gitops.flux.namespace,
      labels: $.platformLabels,
    };
    local needs(name) = [{ name: 'platform-' + n } for n in platform.components[name].needs if std.member(names, n)];
    local clusterSource = 'platform-' + $.clusterName(ctx);
    local wrapper(name, path, deps) = {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: meta(name),
      spec: {
        interval: '1h',
        retryInterval: '1m',
        path: './' + $.platformPath(ctx, path),
        sourceRef: { kind: 'GitRepository', name: clusterSource },
        // Never uninstalls an operator or deletes a cluster object other
        // projects may use (like platform-root).
        prune: false,
        wait: true,
        timeout: '10m',
      } + (if std.length(deps) > 0 then { dependsOn: deps } else {}),
    };
    std.foldl(function(acc, name)
      local c = platform.components[name];
      local source = 'platform-' + name;
      local values = platform.values(ctx, name);
      local deps = needs(name);
      acc + k8s.file(dir, {
        apiVersion: $.fluxSourceApiVersion,
        kind: 'GitRepository',
        metadata: meta(source),
        spec: { interval: '1h', url: c.repo, ref: { tag: c.tag } },
      }) + (if std.primitiveEquals(c.kind, 'helm') then k8s.file(dir + '/components/' + name, {
        apiVersion: $.fluxHelmApiVersion,
        kind: 'HelmRelease',
        metadata: meta(source),
        spec: {
          interval: '1h',
          releaseName: name,
          targetNamespace: c.namespace,
          install: { createNamespace: true, crds: 'CreateReplace', remediation: { retries: 5 } },
          upgrade: { crds: 'CreateReplace', remediation: { retries: 5 } },
          chart: { spec: { chart: './' + c.path, sourceRef: { kind: 'GitRepository', name: source } } },
        } + (if std.length(values) > 0 then { values: values } else {}),
      }) + k8s.file(dir, wrapper(source, 'flux/components/' + name, deps))
      else k8s.file(dir, {
        apiVersion: $.fluxKustomizeApiVersion,
        kind: 'Kustomization',
        metadata: meta(source),
        spec: {
          interval: '1h',
          retryInterval: '1m',
          path: './' + c.path,
          sourceRef: { kind: 'GitRepository', name: source },
          prune: true,
          wait: true,
          timeout: '10m',
        } + (if std.length(deps) > 0 then { dependsOn: deps } else {})
          + (if std.length(platform.kustomizePatches(name)) > 0 then { patches: platform.kustomizePatches(name) } else {}),
      })), names, {})
    + std.foldl(function(acc, g)
                  acc + k8s.file(dir, wrapper($.objectsName('platform-', g.name), $.objectsDir(g.name),
                                              [{ name: 'platform-' + n } for n in g.needs if std.member(names, n)])),
                $.objectGroups(objects), {})
    // The bundle's root (field review C19, decision F14): a Kustomization of
    // platform/flux itself from the cluster's own GitRepository. The
    // bootstrap applies it once (kubectl apply -k _clusters/<c>/platform/flux);
    // from then on a component another project's build adds to the bundle
    // reaches the cluster from Git (replay scenario C19-cluster-bundle-root).
    // prune: false: removing a component from the bundle never uninstalls an
    // operator other projects may use; that is a human act.
    + k8s.file(dir, {
      apiVersion: $.fluxSourceApiVersion,
      kind: 'GitRepository',
      metadata: meta(clusterSource),
      spec: {
        interval: ctx.spec.gitops.flux.interval,
        url: ctx.spec.gitops.repoURL,
        ref: { branch: ctx.spec.gitops.revision },
        // Only what its Kustomizations read in the artifact (C11), like a
        // project's source: the bundle's flux/ (its root and the Helm
        // components' directories) and objects/.
        ignore: $.onlyPath($.platformRoot(ctx)) + '/' + $.platformRoot(ctx) + '/*\n'
                + std.join('', ['!/' + $.platformPath(ctx, sub) + '/\n' for sub in ['flux', 'objects']]),
      } + (if std.objectHasEx(ctx.spec.gitops.flux, 'secretRef', false) then { secretRef: { name: ctx.spec.gitops.flux.secretRef } } else {}),
    }) + k8s.file(dir, {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: meta('platform-root'),
      spec: {
        interval: ctx.spec.gitops.flux.interval,
        retryInterval: '1m',
        path: './' + $.platformPath(ctx, 'flux'),
        sourceRef: { kind: 'GitRepository', name: clusterSource },
        prune: false,
        wait: false,
      },
    }),

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
      annotations: {
        'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false',
        'kustomize.toolkit.fluxcd.io/prune': 'disabled',
      },
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
      local decorated = { [p]: $.decorate(ctx, p, files[p]) for p in std.objectFields(files) };
      local components = platform.installed(ctx, files);
      local objects = platform.clusterObjects(ctx, files) + (if bundled then [$.sharedNamespace(ctx)] else []);
      local argocd = $.engine(ctx, 'argocd');
      local flux = $.engine(ctx, 'flux');
      local withPlatform = ctx.spec.gitops.platform;
      decorated
      + (if argocd then $.argocdFiles(ctx, files) else {})
      + (if flux then $.fluxFiles(ctx, files) else {})
      + (if withPlatform then $.platformObjectFiles(objects) else {})
      + (if argocd && withPlatform then $.platformArgocd(ctx, components, objects) else {})
      + (if flux && withPlatform then $.platformFlux(ctx, components, objects) else {}),

  // Summary facts for SUMMARY.md.
  summary(ctx, files)::
    if !$.enabled(ctx) then {} else {
      engines: ctx.spec.gitops.engines,
      source: ctx.spec.gitops.repoURL + ' @ ' + ctx.spec.gitops.revision + ': ' + $.sourcePath(ctx),
      platform: if ctx.spec.gitops.platform then [
        n + ' ' + platform.components[n].version + platform.patchesSummary(n)
        for n in platform.installed(ctx, files)
      ] else [],
      // Where the target's platform bundle goes (compiler/cluster_bundle.cc):
      // targets naming one cluster must agree on its server and profile.
      // Flux alone names no API server (it applies to the cluster it runs
      // in): server '' agrees with any.
      cluster: if ctx.spec.gitops.platform then {
        name: $.clusterName(ctx),
        server: if $.engine(ctx, 'argocd') || std.objectHasEx(ctx.spec.gitops.clusters, ctx.target.name, false)
        then $.clusterServer(ctx) else '',
        profile: ctx.profile.name,
        explicit: std.objectHasEx(ctx.target, 'cluster', false),
        has: clusterHas.text(ctx),
        path: $.platformRoot(ctx),
        // The cluster's part of the bootstrap, per engine (D10: the cluster
        // bundle's SUMMARY.md shows the same command as the target's).
        bootstrap: (if $.engine(ctx, 'argocd') then { argocd: argocdBundle[0] } else {})
                   + (if $.engine(ctx, 'flux') then { flux: fluxBundle[0] } else {}),
      } else null,
      // What the user applies by hand, once: the roots; everything else is
      // then kept in sync from Git by the engine. The cluster bundle's root
      // comes first and is waited for (decision F14: CRDs and the cluster
      // bundle before project objects): an Argo CD sync whose dry run meets
      // a kind without its CRD fails, and after syncPolicy.retry's tries
      // (about 15 minutes) auto-sync never retries the same revision (argo-cd
      // v3.5.1 controller/appcontroller.go:2393-2399). Replay scenario
      // C14-serving-before-engine, bootstrap (I5).
      // D10: one description of the bootstrap -- this one. Every command
      // runs from the repository root (paths under spec.gitops.path, the
      // ones the engines read); SUMMARY.md, the cluster bundle's SUMMARY.md
      // (cluster.bootstrap below) and README.md (tests/gitops/replay/
      // readme.py copies an example's) show these strings. Server-side
      // apply, as the engines apply the same objects afterwards (Argo CD's
      // platform Applications sync with ServerSideApply=true,
      // kustomize-controller always applies server-side): argocd-cm's health
      // check keys are then owned key by key, and a key another manager owns
      // is a conflict kubectl names instead of a silent overwrite.
      local apply(dir) = '`kubectl apply --server-side -k ' + dir + '`',
      local bundle = $.platformRoot(ctx) + '/',
      local waitFor = ' (the cluster bundle: its components and CRDs exist before any project object)',
      local argocdBundle = if !ctx.spec.gitops.platform then [] else [
        apply(bundle + 'argocd') + ' once per cluster, then `kubectl wait -n ' + ctx.spec.gitops.argocd.namespace
        + ' application/' + $.platformName(ctx, '') + " --for=jsonpath='{.status.health.status}'=Healthy --timeout=1h`"
        + (if ctx.spec.gitops.automated then '' else ', syncing it and its component Applications as they appear') + waitFor,
      ],
      local fluxBundle = if !ctx.spec.gitops.platform then [] else [
        apply(bundle + 'flux') + ' once per cluster, then `kubectl wait -n ' + ctx.spec.gitops.flux.namespace
        + ' kustomization -l app.kubernetes.io/part-of=' + $.platformLabels['app.kubernetes.io/part-of'] + ' --for=condition=Ready --timeout=1h`' + waitFor,
      ],
      local tree = $.sourcePath(ctx) + '/',
      bootstrap: (if $.engine(ctx, 'argocd') then argocdBundle + [
        if !ctx.spec.gitops.argocd.applicationSet
        then apply(tree + 'gitops/argocd/root') + ' (Argo CD root Application `' + $.rootName(ctx.project, ctx.target.name) + '` only; it syncs the pipeline, then serving once the pipeline is Healthy)'
        else if $.firstTarget(ctx)
        then apply(tree + 'gitops/argocd/applicationset') + ' (ApplicationSet `' + ctx.project + '`: the Argo CD root Application of every target; nothing syncs it from Git, so apply it again after every commit that adds or removes a target)'
        else 'nothing for Argo CD: root Application `' + $.rootName(ctx.project, ctx.target.name) + '` comes from ApplicationSet `' + ctx.project
             + '` in `' + ctx.spec.gitops.path + '/' + ctx.project + '/' + ctx.spec.targets[0].name + '/gitops/argocd/applicationset`',
      ] else [])
      + (if $.engine(ctx, 'flux') then fluxBundle + [
        apply(tree + 'gitops/flux/root') + ' (Flux GitRepository and root Kustomization `' + $.uniqueName([ctx.project, ctx.target.name, 'gitops']) + '` only; it applies the stage Kustomizations)',
      ] else []),
      // Removing the target (decision F13, field review C23): nemoc removes
      // its directory, which the engines read as a missing path and change
      // nothing (argo-cd v3.5.1 controller/state.go:694-699 ComparisonError,
      // sync status Unknown; kustomize-controller v1.9.4
      // kustomization_controller.go:377-381); deleting the root then deletes
      // the workloads and keeps the data. Replay scenario C23-remove-target.
      local kept = if $.ownsNamespace(ctx)
      then 'the PersistentVolumeClaims/PersistentVolumes stay with their data (delete them by hand once it is no longer needed), and so does the Namespace, which the cluster bundle owns'
      else 'the Namespace and the PersistentVolumeClaims/PersistentVolumes stay with their data; delete them by hand once it is no longer needed',
      remove: (if $.engine(ctx, 'argocd') then [
        (if ctx.spec.gitops.argocd.applicationSet
         then (
           // The ApplicationSet is applied by hand (bootstrap above): the
           // commit alone does not reach it. Its list generator without this
           // target makes the ApplicationSet controller delete the root
           // (policy sync: argo-cd v3.5.1 applicationset/controllers/
           // applicationset_controller.go deleteInCluster).
           local others = [t.name for t in ctx.spec.targets if t.name != ctx.target.name];
           if std.primitiveEquals(std.length(others), 0)
           then 'Argo CD: this is the project\'s only target: `kubectl delete applicationset ' + ctx.project + ' -n ' + ctx.spec.gitops.argocd.namespace
                + '`; the ApplicationSet `' + ctx.project + '` deletes root Application `' + $.rootName(ctx.project, ctx.target.name) + '` with it'
           else 'Argo CD: after the commit apply the ApplicationSet again (`kubectl apply --server-side -k ' + ctx.spec.gitops.path + '/' + ctx.project + '/' + others[0] + '/gitops/argocd/applicationset`: nothing syncs it from Git); the ApplicationSet `'
                + ctx.project + '` deletes root Application `' + $.rootName(ctx.project, ctx.target.name) + '` when the target leaves its list'
         )
         else 'Argo CD: after the commit the root reads "app path does not exist" and changes nothing; `kubectl delete application '
              + $.rootName(ctx.project, ctx.target.name) + ' -n ' + ctx.spec.gitops.argocd.namespace + '`')
        + ': its resources finalizer deletes the pipeline and serving Applications and their workloads; ' + kept + ' (`Delete=false`).',
      ] else [])
      + (if $.engine(ctx, 'flux') then [
        'Flux: after the commit the root reads "kustomization path not found" and changes nothing; `kubectl delete kustomization '
        + $.uniqueName([ctx.project, ctx.target.name, 'gitops']) + ' -n ' + ctx.spec.gitops.flux.namespace
        + '`: its finalizer deletes the stage Kustomizations, whose finalizers delete the workloads; ' + kept + ' (`prune: disabled`).',
      ] else []),
    },
}
