// Flux as a GitOps engine (libsonnet/engine.libsonnet; gitops.libsonnet asks
// it for its part): per target, gitops/flux/ holds a GitRepository, a root
// Kustomization of gitops/flux/ itself and one Kustomization per stage
// directory, chained by dependsOn; gitops/platform/flux/ the cluster bundle's
// components, ordered by dependsOn. Facts: ../shared/reference/gitops-engines.md.
local gitops = import 'nemoc/gitops.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local platform = import 'nemoc/platform.libsonnet';

(import 'nemoc/engine.libsonnet') + {
  // ---- the contract ----------------------------------------------------------

  name:: 'flux',
  dirs:: [$.fluxDir, gitops.platformDir + '/flux'],
  namespace(ctx):: ctx.spec.gitops.flux.namespace,

  // Create, never patch: keeps Kueue's suspend flip and never touches a
  // running or finished workload. The stage's Kustomization names it in
  // spec.healthChecks, which Flux checks even when the object is Skipped (C2).
  stageAnnotations(ctx, dir, o, workload)::
    if workload then { 'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent' } else {},
  // Skipped when it prunes and when a deleted Kustomization's finalizer
  // deletes its inventory (kustomize-controller v1.9.4 internal/controller/
  // kustomization_controller.go:1407-1413 deleteObjects Exclusions).
  keepAnnotations:: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' },
  files(ctx, files):: $.fluxFiles(ctx, files),
  kustomizations(ctx, files):: { [$.fluxDir]: ['root'] },
  platform(ctx, components, objects):: $.platformFlux(ctx, components, objects),
  installsPlatform:: true,

  clusterBootstrap(ctx)::
    gitops.applyCommand(gitops.platformRoot(ctx) + '/flux') + ' once per cluster, then `kubectl wait -n ' + ctx.spec.gitops.flux.namespace
    + ' kustomization -l app.kubernetes.io/part-of=' + gitops.platformLabels['app.kubernetes.io/part-of'] + ' --for=condition=Ready --timeout=1h`' + gitops.bundleWait,
  bootstrap(ctx)::
    (if ctx.spec.gitops.platform then [$.clusterBootstrap(ctx)] else []) + [
      gitops.applyCommand(gitops.sourcePath(ctx) + '/gitops/flux/root') + ' (Flux GitRepository and root Kustomization `'
      + gitops.uniqueName([ctx.project, ctx.target.name, 'gitops']) + '` only; it applies the stage Kustomizations)',
    ],
  remove(ctx, kept):: [
    'Flux: after the commit the root reads "kustomization path not found" and changes nothing; `kubectl delete kustomization '
    + gitops.uniqueName([ctx.project, ctx.target.name, 'gitops']) + ' -n ' + ctx.spec.gitops.flux.namespace
    + '`: its finalizer deletes the stage Kustomizations, whose finalizers delete the workloads; ' + kept + ' (`prune: disabled`).',
  ],

  // ---- how ------------------------------------------------------------------

  fluxSourceApiVersion: 'source.toolkit.fluxcd.io/v1',
  fluxKustomizeApiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  fluxHelmApiVersion: 'helm.toolkit.fluxcd.io/v2',

  fluxMetadata(ctx, name):: {
    name: name,
    namespace: ctx.spec.gitops.flux.namespace,
    labels: gitops.labels(ctx),
  },

  gitRepository(ctx):: {
    apiVersion: $.fluxSourceApiVersion,
    kind: 'GitRepository',
    metadata: $.fluxMetadata(ctx, gitops.targetName(ctx)),
    spec: {
      interval: ctx.spec.gitops.flux.interval,
      url: ctx.spec.gitops.repoURL,
      ref: { branch: ctx.spec.gitops.revision },
      // The artifact holds this target's tree only (C11): a commit to another
      // project does not change what this target's Kustomizations read, and
      // the artifact does not grow with the repository.
      ignore: $.onlyPath(gitops.sourcePath(ctx)),
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
    metadata: $.fluxMetadata(ctx, gitops.uniqueName([ctx.project, ctx.target.name, 'gitops'])),
    spec: {
      interval: ctx.spec.gitops.flux.interval,
      path: './' + gitops.sourcePath(ctx) + '/gitops/flux',
      sourceRef: { kind: 'GitRepository', name: gitops.targetName(ctx) },
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
    local paths = [p for p in std.objectFields(files) if gitops.stageDirOf(p) == dir];
    local objects = [files[p] for p in paths];
    local workloads = [o for o in objects if gitops.isWorkload(ctx, o)];
    local custom = k8s.stringSet([gitops.workloadKey(o) for o in workloads if !std.primitiveEquals(ctx.workloadKinds[gitops.workloadKey(o)].cel, null)]);
    local apiVersionOf(key) = [o.apiVersion for o in workloads if gitops.workloadKey(o) == key][0];
    {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: $.fluxMetadata(ctx, gitops.stageObjectName(ctx, dir)),
      spec: {
              interval: ctx.spec.gitops.flux.interval,
              retryInterval: ctx.spec.gitops.flux.retryInterval,
              path: './' + gitops.sourcePath(ctx) + '/' + dir,
              sourceRef: { kind: 'GitRepository', name: gitops.targetName(ctx) },
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
            } + (if i > 0 then { dependsOn: [{ name: gitops.stageObjectName(ctx, dirs[i - 1]) }] } else {})
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
    local dirs = gitops.stageDirs(files);
    k8s.file($.fluxRootDir, $.gitRepository(ctx))
    + k8s.file($.fluxRootDir, $.fluxRoot(ctx))
    + std.foldl(function(acc, i) acc + k8s.file(dir, $.stageKustomization(ctx, files, dirs, i)),
                std.range(0, std.length(dirs) - 1),
                {}),

  // Flux: every component is a Kustomization, so dependsOn orders them all
  // (kustomize-controller v1.9.4 api/v1/kustomization_types.go:52-56:
  // dependsOn names Kustomizations only). A Helm component is a HelmRelease
  // in flux/components/<name>/, applied by a Kustomization platform-<name>
  // with wait: it is Ready once the HelmRelease is Ready, its CRDs installed
  // (field review B25). Cluster objects are applied per group
  // (objectGroups): platform-objects-<components> after the components whose
  // CRDs they use, platform-objects (Namespaces) at once.
  platformFlux(ctx, names, objects)::
    local dir = gitops.platformDir + '/flux';
    local meta(name) = {
      name: name,
      namespace: ctx.spec.gitops.flux.namespace,
      labels: gitops.platformLabels,
    };
    local needs(name) = [{ name: 'platform-' + n } for n in platform.components[name].needs if std.member(names, n)];
    local clusterSource = 'platform-' + gitops.clusterName(ctx);
    local wrapper(name, path, deps) = {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: meta(name),
      spec: {
        interval: '1h',
        retryInterval: '1m',
        path: './' + gitops.platformPath(ctx, path),
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
                  acc + k8s.file(dir, wrapper(gitops.objectsName('platform-', g.name), gitops.objectsDir(g.name),
                                              [{ name: 'platform-' + n } for n in g.needs if std.member(names, n)])),
                gitops.objectGroups(objects), {})
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
        ignore: $.onlyPath(gitops.platformRoot(ctx)) + '/' + gitops.platformRoot(ctx) + '/*\n'
                + std.join('', ['!/' + gitops.platformPath(ctx, sub) + '/\n' for sub in ['flux', 'objects']]),
      } + (if std.objectHasEx(ctx.spec.gitops.flux, 'secretRef', false) then { secretRef: { name: ctx.spec.gitops.flux.secretRef } } else {}),
    }) + k8s.file(dir, {
      apiVersion: $.fluxKustomizeApiVersion,
      kind: 'Kustomization',
      metadata: meta('platform-root'),
      spec: {
        interval: ctx.spec.gitops.flux.interval,
        retryInterval: '1m',
        path: './' + gitops.platformPath(ctx, 'flux'),
        sourceRef: { kind: 'GitRepository', name: clusterSource },
        prune: false,
        wait: false,
      },
    }),
}
