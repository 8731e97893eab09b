// The platform bundle: the cluster components a target's tree relies on,
// installed from their RELEASES (C6) and delivered by Argo CD Applications
// or Flux HelmRelease/Kustomization (gitops.libsonnet, platform part).
//
// Source decision (kube-schemas has no Flux HelmRepository/OCIRepository):
// both engines take each component from its upstream Git repository at the
// release tag -- Argo CD as an Application with that path, Flux as a
// GitRepository (ref.tag) plus a HelmRelease (chart.spec.sourceRef) or a
// Kustomization -- and nemoc sets the values the project's release
// packaging sets when it publishes the chart (kueue/jobset
// hack/helm-chart-package.sh rewrite image.repository/tag; the GPU
// Operator's git Chart.yaml says appVersion main-latest). So both engines
// install the same bytes as the released chart, every emitted object has a
// schema, and no OCI/Helm repository credentials are needed. Trade-off:
// the chart is not the signed/packaged artifact, and Helm dependencies of a
// git chart are built from their (OCI) repositories at sync time.
// The reviewed table of releases, pins and images is platform_releases.json
// (tests/platform/bundle_releases.py holds the bundle to it).
local clusterHas = import 'nemoc/cluster_has.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local storage = import 'nemoc/storage.libsonnet';

// What the component files declare, gathered once per evaluation (file-level
// locals: an object field would be evaluated again on every access). Only
// byKind reads every component (which parses every component file, ~3 M
// instructions per evaluation); a component's minimumVersion and singletons
// are read when a target needs them.
// Each component of a --jpath directory checked once (component.libsonnet
// lacking; the generated table's hidden `$own` lists them, the built-in ones
// are held to the contract by their tests): one lacking a required member
// fails every build, naming what it lacks.
local table = import 'nemoc/components.libsonnet';
local componentNames = std.objectFields(table);
local own = if std.objectHasEx(table, '$own', true) then table['$own'] else [];
local lacking = [l for l in [table[n].lacking for n in own] if !std.primitiveEquals(l, null)];
local components = if std.length(lacking) > 0 then error lacking[0] else table;
local kindPairs = std.flattenArrays([[[k, n] for k in components[n].kinds] for n in componentNames]);
local byKind = { [k]: [p[1] for p in kindPairs if std.primitiveEquals(p[0], k)] for k in k8s.stringSet([p[0] for p in kindPairs]) };
local singletons = std.foldl(function(acc, n) acc + { [k]: n for k in components[n].singletons }, componentNames, {});
// Each component's `groups` and `labels`: an object of such a group, or
// carrying such a label, needs the component (every component that claims it).
local groupPairs = [[g, n] for n in componentNames for g in components[n].groups];
local byGroup = { [g]: [p[1] for p in groupPairs if std.primitiveEquals(p[0], g)] for g in k8s.stringSet([p[0] for p in groupPairs]) };
local labelPairs = std.flattenArrays([[[l, n] for l in components[n].labels] for n in componentNames]);

{

  // name -> the component (libsonnet/component.libsonnet): where it comes
  // from, where it goes, what it needs first, what it provides, its release.
  // One file each: libsonnet/components/<name>.libsonnet and a --jpath
  // directory's components/<name>.libsonnet, collected by nemoc into this
  // generated import (compiler/jsonnet_expander.cc, issue #48).
  components: components,

  // component -> released version; each target's `versions` defaults to these (F2).
  versions:: { [n]: $.components[n].version for n in std.objectFields($.components) },

  // Which components a kind needs (group/Kind as in the objects): each
  // component's `kinds` (component.libsonnet). The runtimes' kinds come from
  // their files (runtime.libsonnet platform, collected in ctx.platformKinds
  // by nemoc.libsonnet).
  byKind: byKind,

  // Native calls only (issue #47: std.split's asserts call std.equals, once per object).
  local groupOf(apiVersion) =
    local parts = std.splitLimit(apiVersion, '/', 1);
    if std.primitiveEquals(std.length(parts), 1) then '' else parts[0],
  local has(o, f) = std.objectHasEx(o, f, true),

  // Components a target needs: what its profile assumes (profile.platform,
  // e.g. the GPU Operator on vanilla-k8s) plus what the objects of its tree
  // need, found from their kinds, API groups and labels (the components'
  // kinds, groups and labels; never from stage names), plus what they need
  // first (Trainer -> JobSet), closed transitively.
  needed(ctx, files)::
    local objects = [files[p] for p in std.objectFields(files)] + $.clusterObjectList(ctx, files);
    local fromProfile = ctx.profile.platform(ctx);
    // One pass over the objects, each field read once (libjsonnet evaluates
    // an object's field again on every access), and a native comprehension
    // to flatten (std.flattenArrays is Jsonnet code).
    local perObject = [
      local group = groupOf(o.apiVersion);
      local key = group + '/' + o.kind;
      local metadata = o.metadata;
      local labels = if std.objectHasEx(metadata, 'labels', false) then metadata.labels else {};
      (if std.objectHasEx(ctx.platformKinds, key, false) then ctx.platformKinds[key] else [])
      + (if std.objectHasEx(byGroup, group, false) then byGroup[group] else [])
      + [p[1] for p in labelPairs if std.objectHasEx(labels, p[0], false)]
      for o in objects
    ];
    local direct = k8s.stringSet(fromProfile + [n for names in perObject for n in names]);
    local close(set) =
      local next = k8s.stringSet(set + std.flattenArrays([$.components[n].needs for n in set]));
      if std.length(next) == std.length(set) then set else close(next);
    close(direct),

  // ---- what the cluster already runs (cluster_has.libsonnet) ----
  // The components the bundle installs: what the target needs, less what
  // its cluster already runs.
  installed(ctx, files)::
    local e = clusterHas.existing(ctx);
    [n for n in $.needed(ctx, files) if !std.objectHasEx(e, n, false)],

  // The oldest version of a component whose API nemoc's objects use, with
  // where that was read (the component's minimumVersion, or null): an older
  // existing install is refused.
  minimumVersion(name):: if std.objectHasEx(components, name, false) then components[name].minimumVersion else null,
  local versionParts(v) = [std.parseInt(x) for x in std.split(std.substr(v, 1, std.length(v) - 1), '.')] + [0, 0, 0],  // 'vX.Y[.Z]' (schema)
  local older(a, b) =
    local x = versionParts(a), y = versionParts(b);
    x[0] < y[0] || (x[0] == y[0] && (x[1] < y[1] || (x[1] == y[1] && x[2] < y[2]))),
  diagnostics(ctx)::
    local e = clusterHas.existing(ctx);
    [
      {
        code: 'platform.existing-version',
        pointer: ctx.targetPointer + (if clusterHas.declared(ctx, n) then '/clusterHas/' + n else '/profile'),
        message: 'the cluster runs ' + n + ' ' + e[n] + ', older than ' + $.minimumVersion(n).version + ': ' + $.minimumVersion(n).why,
        hint: 'upgrade ' + n + ' on the cluster and declare its version, or set clusterHas.' + n + ': false to let nemoc install ' + $.components[n].version,
      }
      for n in std.objectFields(e)
      if !std.primitiveEquals($.minimumVersion(n), null) && older(e[n], $.minimumVersion(n).version)
    ],

  // Install order: 0 for a component that needs nothing, else one more than
  // the deepest component it needs (Argo CD sync wave; Flux dependsOn).
  depth(name)::
    local needs = $.components[name].needs;
    if std.primitiveEquals(std.length(needs), 0) then 0 else 1 + std.foldl(std.max, [$.depth(n) for n in needs], 0),

  // ---- values ----------------------------------------------------------------

  // Dotted release pins ("image.tag": "v1") -> nested values.
  local nest(path, value) =
    std.foldr(function(k, acc) { [k]: acc }, std.split(path, '.'), value),
  pinValues(name)::
    local pins = $.components[name].release.pins;
    std.foldl(function(acc, p) std.mergePatch(acc, nest(p, pins[p])), std.objectFields(pins), {}),

  // The values nemoc gives a component whatever the cloud, on top of the
  // release pins (C9): the component's own (component.libsonnet values); a
  // cloud's own come from its profile (profile.componentValues, issue #48:
  // this library reads no cloud's options or labels).
  targetValues(ctx, name):: $.components[name].values(ctx),

  // Release pins < nemoc's values < the profile's (JSON merge patches).
  values(ctx, name):: std.mergePatch(std.mergePatch($.pinValues(name), $.targetValues(ctx, name)), ctx.profile.componentValues(ctx, name)),

  // Kustomize patches a kustomize component's release needs (platform_releases.json
  // "patches", reviewed with "patchesAt"): Argo CD source.kustomize.patches, Flux
  // Kustomization spec.patches. B16: training-operator's PyTorchJob init container image.
  kustomizePatches(name)::
    local release = $.components[name].release;
    if std.objectHasEx(release, 'patches', false) then release.patches else [],

  // ---- cluster objects ---------------------------------------------------------

  // Cluster-scoped objects the bundle applies after the components whose
  // CRDs they use: what the profile contributes (profile.platformObjects).
  clusterObjectList(ctx, files):: ctx.profile.platformObjects(ctx),
  // A cluster object a component reads as its one configuration: the Network
  // Operator acts on the NicClusterPolicy named nic-cluster-policy only. Where
  // the cluster already runs that component, the policy is the cluster's own:
  // nemoc applies none (it would replace the operator's configuration) and
  // SUMMARY.md says what it must advertise.
  // (each component's `singletons`).
  singletons:: singletons,
  clustersOwn(ctx, o)::
    local key = groupOf(o.apiVersion) + '/' + o.kind;
    std.objectHasEx($.singletons, key, false) && clusterHas.runs(ctx, $.singletons[key]),
  // The cluster objects the bundle applies.
  clusterObjects(ctx, files):: [o for o in $.clusterObjectList(ctx, files) if !$.clustersOwn(ctx, o)],

  // Images nemoc's own cluster objects deploy (held to the release table).
  // Components whose CRDs a cluster object uses.
  objectNeeds(o)::
    local key = groupOf(o.apiVersion) + '/' + o.kind;
    local group = groupOf(o.apiVersion);
    if std.objectHasEx($.byKind, key, false) then $.byKind[key]
    else if std.objectHasEx(byGroup, group, false) then byGroup[group]
    else [],

  // ---- what the bundle installs, what the cluster must already have ---------
  // (SUMMARY.md "Platform" section; tests/platform/bundle_releases.py checks
  // that every extended resource, storage class, CSI driver and CRD kind a
  // workload uses is on one of the two lists.)

  // Names (extended resources, group/Kind of CRDs) each component provides
  // (component.libsonnet provides).
  provides:: { [n]: $.components[n].provides for n in std.objectFields($.components) },

  // The storage classes of the target's volumes on `backend` (`default` when
  // a volume names none), for a profile's prerequisites.
  storageClasses(ctx, backend, default):: k8s.stringSet([
    local v = ctx.storage[n][backend];
    if has(v, 'storageClassName') then v.storageClassName else default
    for n in storage.volumeNames(ctx.storage)
    if storage.backendOf(ctx.storage[n]) == backend && !has(ctx.storage[n][backend], 'claimName')
  ]),

  // What a cluster of the target's profile must already have: the profile's
  // list (the target's own names filled in), each row only when the target
  // uses what it provides -- a storage driver for a backend the target
  // mounts, huge pages a pod requests (field review B24; the converse of
  // tests/platform/cluster_needs.py).
  prerequisites(ctx):: ctx.profile.prerequisites(ctx) + (
    local claims = storage.existingClaims(ctx.storage, 'pvc');
    if std.primitiveEquals(std.length(claims), 0) then [] else [{
      what: 'the PersistentVolumeClaims storage.*.pvc names, in namespace ' + ctx.namespace + ' (ReadWriteMany; nemoc mounts them, never creates them)',
      provides: ['PersistentVolumeClaim/' + c for c in claims],
    }]
  ),

  // What the monitoring objects and the Triton autoscaler read, which no
  // component of the bundle serves: a Prometheus that evaluates the rules and
  // scrapes the monitors, the custom metrics API the HPA's Pods metric comes
  // from, and (where the GPU Operator is not installed) DCGM metrics with the
  // workload's pod labels. Fixed texts; present only when the tree has such
  // objects.
  monitoringPrerequisites(ctx, files)::
    local objects = [files[p] for p in std.objectFields(files)];
    local kinds = k8s.stringSet([o.kind for o in objects]);
    local monitored = std.length(std.setInter(kinds, ['PodMonitor', 'PrometheusRule', 'ServiceMonitor'])) > 0;
    local hpaMetrics = k8s.stringSet(std.flattenArrays([
      [m.pods.metric.name for m in o.spec.metrics if std.primitiveEquals(m.type, 'Pods')]
      for o in objects
      if std.primitiveEquals(o.kind, 'HorizontalPodAutoscaler')
    ]));
    // The nemo-training group's alerts read DCGM series (stages/monitoring.libsonnet).
    local dcgm = std.length([g for o in objects if std.primitiveEquals(o.kind, 'PrometheusRule') for g in o.spec.groups if std.primitiveEquals(g.name, 'nemo-training')]) > 0;
    (if monitored then [{
       what: 'a Prometheus (e.g. kube-prometheus-stack) whose serviceMonitorSelector and ruleSelector select these ServiceMonitors and PrometheusRules in namespace ' + ctx.spec.namespace,
       provides: ['Prometheus'],
     }] else [])
    + (if std.length(hpaMetrics) > 0 then [{
         what: 'the custom metrics API (e.g. prometheus-adapter) serving the Triton pod metrics the autoscaler reads from that Prometheus',
         provides: ['custom.metrics.k8s.io/' + m for m in hpaMetrics],
       }] else [])
    // Unless a component the profile installs provides them (the GPU
    // Operator runs the DCGM exporter).
    + (if dcgm && !std.member(std.flattenArrays([$.components[n].provides for n in ctx.profile.platform(ctx)]), 'DCGM_FI_*') then [{
         what: 'NVIDIA DCGM exporter on the GPU nodes, scraped by that Prometheus with honorLabels (its pod and namespace labels name the workload)',
         provides: ['DCGM_FI_*'],
       }] else []),

  // What SUMMARY.md names for a component (field review B23): what the
  // bundle installs -- a Helm chart from the component's git repository at
  // its tag, with the values its release packaging sets (pins above) --
  // and the released artifact it corresponds to; without the bundle, the
  // release the cluster must already run.
  describe(name, installed=true)::
    local c = $.components[name];
    local repo = std.strReplace(std.strReplace(c.repo, 'https://github.com/', ''), '.git', '');
    name + ' ' + c.version + ' ('
    + (if installed && std.primitiveEquals(c.kind, 'helm')
       then 'Helm chart from git ' + repo + '@' + c.tag + ':' + c.path + ' with the values of its release, ' + c.release.release
       else c.release.release)
    + ')' + $.patchesSummary(name),
  // B16: what a component's kustomize patches change, for SUMMARY.md.
  patchesSummary(name)::
    local release = $.components[name].release;
    if std.objectHasEx(release, 'patchesSummary', false) then ' (' + release.patchesSummary + ')' else '',

  // installs: what the cluster's platform bundle installs; clusterHas: the profile's fixed
  // prerequisites, plus the components nemoc would install when the bundle
  // is off (spec.gitops.platform false or no spec.gitops).
  summary(ctx, files, emitted)::
    local names = $.installed(ctx, files);
    local e = clusterHas.existing(ctx);
    local already = [
      {
        what: n + ' ' + e[n] + ' (already on the cluster, ' + clusterHas.why(ctx, n) + '; nemoc installs nothing for it)'
              + $.components[n].existingNote(ctx),
        provides: $.provides[n],
      }
      for n in $.needed(ctx, files)
      if std.objectHasEx(e, n, false)
    ];
    local objects = $.clusterObjectList(ctx, files);
    local objectEntries = [
      {
        what: o.kind + ' ' + o.metadata.name
              + (if $.clustersOwn(ctx, o) then " (the cluster's own: its " + $.singletons[groupOf(o.apiVersion) + '/' + o.kind]
                                            + ' is already there and reads that one policy; nemoc applies none) must advertise' else ''),
        own:: $.clustersOwn(ctx, o),
        // What the components whose kind it is say it provides (objectProvides).
        provides: std.flattenArrays([$.components[n].objectProvides(o) for n in $.objectNeeds(o)]),
      }
      for o in objects
    ];
    local entries = [{ what: $.describe(n, emitted), provides: $.provides[n] } for n in names] + [e for e in objectEntries if !e.own]
                    // gitops.libsonnet sharedNamespace (C20): the bundle owns the namespace.
                    + (if emitted then [{
                         what: 'Namespace ' + ctx.namespace + ' (owned by the cluster bundle for every project naming it; '
                               + 'kept when none does)',
                         provides: [],
                       }] else []);
    {
      installs: if emitted then entries else [],
      clusterHas: $.prerequisites(ctx) + $.monitoringPrerequisites(ctx, files) + already + [e for e in objectEntries if e.own] + (if emitted then [] else [
        e { what: e.what + ' -- not installed by nemoc (no platform bundle: spec.gitops.platform)' }
        for e in entries
      ]),
    },
}

