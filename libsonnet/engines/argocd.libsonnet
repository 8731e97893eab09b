// Argo CD as a GitOps engine (libsonnet/engine.libsonnet; gitops.libsonnet
// asks it for its part). Facts: ../shared/reference/gitops-engines.md.
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
local gitops = import 'nemoc/gitops.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local platform = import 'nemoc/platform.libsonnet';

(import 'nemoc/engine.libsonnet') + {
  // ---- the contract ----------------------------------------------------------

  name:: 'argocd',
  dirs:: [$.argocdDir, gitops.platformDir + '/argocd', gitops.platformDir + '/apps/argocd'],
  namespace(ctx):: ctx.spec.gitops.argocd.namespace,
  namesServer:: true,

  // No Replace/Force: names are content-hashed, so an existing workload
  // is never changed, and Replace=true + Force=true would delete and
  // re-create it (re-run it) on every sync (argo-cd 37ee009 gitops-engine
  // pkg/sync/sync_context.go, docs/user-guide/sync-options.md "for job
  // resources that should run every time"): C1.
  stageAnnotations(ctx, dir, o, workload)::
    $.waveAnnotation(gitops.wave(dir))
    // Field review C25 (Argo CD half): an HPA on a custom metric is
    // Degraded until the metric exists (argo-cd v3.5.1 gitops-engine
    // pkg/health/health_hpa.go:108-117), which made the serving Application
    // Degraded after every deploy. The autoscaler's health is left out of
    // the Application's (controller/health.go:40-43,
    // docs/operator-manual/health.md "Ignoring Child Resource Health
    // Check"); the Deployment's still counts, and the HPA's own status still
    // shows on its resource. Replay scenario C25-health-of-new-objects.
    + (if std.primitiveEquals(o.kind, 'HorizontalPodAutoscaler')
       then { 'argocd.argoproj.io/ignore-healthcheck': 'true' } else {}),
  // Skipped when it prunes and when a resources finalizer deletes an
  // Application's objects (argo-cd v3.5.1 controller/appcontroller.go:
  // 1252-1260 shouldBeDeleted; gitops-engine pkg/sync/sync_context.go).
  keepAnnotations:: { 'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false' },
  files(ctx, files):: $.argocdFiles(ctx, files),
  // A part's stage directories, relative to it; the root's own directory.
  kustomizations(ctx, files):: {
    [$.argocdDir + '/' + p.part]: ['../../../' + d for d in p.dirs]
    for p in $.argocdParts(ctx, files)
  } + (if ctx.spec.gitops.argocd.applicationSet then {} else { [$.argocdDir]: ['root'] }),
  platform(ctx, components, objects):: $.platformArgocd(ctx, components, objects),
  installsPlatform:: true,

  clusterBootstrap(ctx)::
    gitops.applyCommand(gitops.platformRoot(ctx) + '/argocd') + ' once per cluster, then `kubectl wait -n ' + ctx.spec.gitops.argocd.namespace
    + ' application/' + gitops.platformName(ctx, '') + " --for=jsonpath='{.status.health.status}'=Healthy --timeout=1h`"
    + (if ctx.spec.gitops.automated then '' else ', syncing it and its component Applications as they appear') + gitops.bundleWait,
  bootstrap(ctx)::
    local apply = gitops.applyCommand;
    local tree = gitops.sourcePath(ctx) + '/';
    (if ctx.spec.gitops.platform then [$.clusterBootstrap(ctx)] else []) + [
      if !ctx.spec.gitops.argocd.applicationSet
      then apply(tree + 'gitops/argocd/root') + ' (Argo CD root Application `' + $.rootName(ctx.project, ctx.target.name) + '` only; it syncs the pipeline, then serving once the pipeline is Healthy)'
      else if $.firstTarget(ctx)
      then apply(tree + 'gitops/argocd/applicationset') + ' (ApplicationSet `' + ctx.project + '`: the Argo CD root Application of every target; nothing syncs it from Git, so apply it again after every commit that adds or removes a target)'
      else 'nothing for Argo CD: root Application `' + $.rootName(ctx.project, ctx.target.name) + '` comes from ApplicationSet `' + ctx.project
           + '` in `' + ctx.spec.gitops.path + '/' + ctx.project + '/' + ctx.spec.targets[0].name + '/gitops/argocd/applicationset`',
    ],
  remove(ctx, kept):: [
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
  ],

  // ---- how ------------------------------------------------------------------

  argocdApiVersion: 'argoproj.io/v1alpha1',

  // Deleting an Application (a removed target's root, a removed stage part)
  // deletes the objects it manages, except those kept above; without the
  // finalizer they ran on untracked (C23: GPU Deployments leaked)
  // (argo-cd v3.5.1 docs/user-guide/app_deletion.md:41-54,
  // controller/appcontroller.go:1344-1380 CascadedDeletion).
  cascade:: { finalizers: ['resources-finalizer.argocd.argoproj.io'] },

  projectName(ctx, targetName)::
    if $.createsProject(ctx)
    then gitops.pairName(ctx.project, targetName)
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
  // (Only Argo CD's own objects ask: the engine is this one.)
  usesRootsProject(ctx):: ctx.spec.gitops.platform,
  rootsProjectName(ctx):: 'nemoc-roots-' + std.substr(std.md5(ctx.spec.gitops.repoURL), 0, 8),
  rootProjectName(ctx, targetName):: if $.usesRootsProject(ctx) then $.rootsProjectName(ctx) else $.projectName(ctx, targetName),
  argocdKinds:: [{ group: 'argoproj.io', kind: 'Application' }, { group: 'argoproj.io', kind: 'AppProject' }],
  rootsProject(ctx):: {
    apiVersion: $.argocdApiVersion,
    kind: 'AppProject',
    metadata: {
      name: $.rootsProjectName(ctx),
      namespace: ctx.spec.gitops.argocd.namespace,
      labels: gitops.platformLabels,
    },
    spec: {
      description: "nemoc roots of " + ctx.spec.gitops.repoURL + ": Applications and AppProjects in Argo CD's namespace only",
      sourceRepos: [ctx.spec.gitops.repoURL],
      destinations: [{ server: gitops.inCluster, namespace: ctx.spec.gitops.argocd.namespace }],
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
  rootName(project, target):: gitops.uniqueName([project, target, 'gitops']),
  rootPath(project, target, ctx):: ctx.spec.gitops.path + '/' + project + '/' + target + '/' + $.argocdDir,

  // The target's stage directories as Argo CD delivers them: the pipeline
  // (everything up to the engine) and what serves its result, each with its
  // Application's name and its wave in the root. The pipeline keeps the
  // name the single Application had, so upgrading nemoc adopts it.
  argocdParts(ctx, files)::
    local dirs = gitops.stageDirs(files);
    local serving = [d for d in dirs if std.member(order.servingDirs, d)];
    local pipeline = [d for d in dirs if !std.member(order.servingDirs, d)];
    [p for p in [
      { part: 'pipeline', name: gitops.targetName(ctx), dirs: pipeline, wave: 0 },
      { part: 'serving', name: gitops.uniqueName([ctx.project, ctx.target.name, 'serving']), dirs: serving, wave: 1 },
    ] if std.length(p.dirs) > 0],

  // A part's Application: its stage objects, their waves, Kueue's suspend
  // flip ignored, applied once.
  applicationSpec(ctx, path):: {
    project: $.projectName(ctx, ctx.target.name),
    source: {
      repoURL: ctx.spec.gitops.repoURL,
      targetRevision: ctx.spec.gitops.revision,
      path: path,
    },
    destination: gitops.destination(ctx, ctx.target.name) { namespace: ctx.namespace },
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
    destination: { server: gitops.inCluster, namespace: ctx.spec.gitops.argocd.namespace },
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
    labels: gitops.labels(ctx),
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
    spec: $.applicationSpec(ctx, gitops.sourcePath(ctx) + '/' + $.argocdDir + '/' + p.part),
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
      gitops.groupOf(files[p].apiVersion) + '/' + files[p].kind
      for p in std.objectFields(files)
      if !std.objectHasEx(files[p].metadata, 'namespace', false)
    ]),
    local namespaced = k8s.stringSet([
      gitops.groupOf(files[p].apiVersion) + '/' + files[p].kind
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
        gitops.destination(ctx, ctx.target.name) { namespace: ctx.namespace },
      ] + (if roots then [] else [{ server: gitops.inCluster, namespace: ctx.spec.gitops.argocd.namespace }]),
      // With the bundle owning the Namespace (sharedNamespace) the
      // pipeline's CreateNamespace=true may still create it, by name only,
      // if the pipeline syncs before the bundle's objects (gitops-engine
      // sync_context.go:1180-1200: the namespace task is permission-checked).
      clusterResourceWhitelist: [
        { group: std.split(gk, '/')[0], kind: std.split(gk, '/')[1] }
        for gk in clusterScoped
      ] + (if gitops.ownsNamespace(ctx) then [{ group: '', kind: 'Namespace', name: ctx.namespace }] else []),
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

  // Argo CD does not re-try a failed automated sync of a revision unless told
  // (C7): every platform Application retries with backoff.
  platformSyncPolicy(ctx, prune):: {
    syncOptions: ['CreateNamespace=true', 'ServerSideApply=true'],
    retry: { limit: 10, backoff: { duration: '30s', factor: 2, maxDuration: '10m' } },
  } + (if ctx.spec.gitops.automated then { automated: { prune: prune, selfHeal: true } } else {}),

  platformComponentApplication(ctx, name)::
    local c = platform.components[name];
    local values = platform.values(ctx, name);
    {
      apiVersion: $.argocdApiVersion,
      kind: 'Application',
      metadata: {
        name: gitops.platformName(ctx, name),
        namespace: ctx.spec.gitops.argocd.namespace,
        labels: gitops.platformLabels,
        annotations: { 'argocd.argoproj.io/sync-wave': std.toString(platform.depth(name)) },
      },
      spec: {
        project: 'default',
        source: { repoURL: c.repo, targetRevision: c.tag, path: c.path }
                + (if std.primitiveEquals(c.kind, 'helm') then { helm: { releaseName: name } + (if std.length(values) > 0 then { valuesObject: values } else {}) } else {})
                + (if std.primitiveEquals(c.kind, 'kustomize') && std.length(platform.kustomizePatches(name)) > 0 then { kustomize: { patches: platform.kustomizePatches(name) } } else {}),
        destination: { server: gitops.clusterServer(ctx), namespace: c.namespace },
        // Large CRDs exceed the client-side apply annotation limit.
        syncPolicy: $.platformSyncPolicy(ctx, false),
      },
    },

  platformArgocd(ctx, names, objects)::
    local appsDir = gitops.platformDir + '/apps/argocd';
    local apps = std.foldl(function(acc, name) acc + k8s.file(appsDir, $.platformComponentApplication(ctx, name)), names, {})
                 + std.foldl(function(acc, g) acc + k8s.file(appsDir, {
                      apiVersion: $.argocdApiVersion,
                      kind: 'Application',
                      metadata: {
                        name: gitops.platformName(ctx, gitops.objectsName('', g.name)),
                        namespace: ctx.spec.gitops.argocd.namespace,
                        labels: gitops.platformLabels,
                        annotations: { 'argocd.argoproj.io/sync-wave': std.toString(gitops.objectsWave(g.needs)) },
                      },
                      spec: {
                        project: 'default',
                        source: { repoURL: ctx.spec.gitops.repoURL, targetRevision: ctx.spec.gitops.revision, path: gitops.platformPath(ctx, gitops.objectsDir(g.name)) },
                        destination: { server: gitops.clusterServer(ctx) },
                        syncPolicy: $.platformSyncPolicy(ctx, false) { syncOptions: ['ServerSideApply=true'] },
                      },
                    }), gitops.objectGroups(objects), {});
    // The root: syncs the component Applications wave by wave; a wave waits
    // for the previous one to be Healthy thanks to the Application health
    // check in argocd-cm (decision F4). It never prunes: another project's
    // tree may have added components to this cluster's root.
    local root = {
      apiVersion: $.argocdApiVersion,
      kind: 'Application',
      metadata: {
        name: gitops.platformName(ctx, ''),
        namespace: ctx.spec.gitops.argocd.namespace,
        labels: gitops.platformLabels,
      },
      spec: {
        project: 'default',
        source: { repoURL: ctx.spec.gitops.repoURL, targetRevision: ctx.spec.gitops.revision, path: gitops.platformPath(ctx, 'apps/argocd') },
        destination: { server: 'https://kubernetes.default.svc', namespace: ctx.spec.gitops.argocd.namespace },
        syncPolicy: $.platformSyncPolicy(ctx, false) { syncOptions: ['ServerSideApply=true'] },
      },
    };
    apps
    + k8s.file(gitops.platformDir + '/argocd', root)
    + k8s.file(gitops.platformDir + '/argocd', $.rootsProject(ctx))
    + k8s.file(gitops.platformDir + '/argocd', $.argocdHealthConfig(ctx)),

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
}
