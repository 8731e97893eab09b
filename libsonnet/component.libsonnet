// The platform component contract. A component is one file,
// libsonnet/components/<name>.libsonnet (or components/<name>.libsonnet in a
// --jpath directory, which replaces a built-in one of the same name), that
// extends this object:
//
//   local component = import 'nemoc/component.libsonnet';
//   component + { name: 'volcano', repo: '...', tag: 'v1.13.0', ... }
//
// The cluster bundle (platform.libsonnet, gitops.libsonnet) installs a
// component when a target needs it: its profile lists it (profile.platform),
// a runtime's kind needs it (runtime.platform), or another component needs it
// first (`needs`). nemoc collects the files into the table
// platform.libsonnet reads (the generated import 'nemoc/components.libsonnet';
// compiler/jsonnet_expander.cc), so a component of your own is one file under
// --jpath; docs/extending.md walks through adding one.
//
// The members without a default below are required: a component lacking one
// fails with an error naming each missing member (lacking, checked once per
// evaluation by platform.libsonnet).
local releases = (import 'nemoc/platform_releases.json').components;

local required = {
  name: 'name: the component name (the file name without .libsonnet)',
  repo: 'repo: the Git repository it is installed from (https://...git)',
  tag: 'tag: the release tag of that repository both engines check out',
  version: 'version: the released version targets default to (decision F2)',
  path: 'path: the chart or kustomization directory at that tag',
  kind: "kind: 'helm' (a chart directory) or 'kustomize' (a kustomization with local bases only)",
  namespace: 'namespace: where it is installed',
};

{
  // What the component lacks, as the error names it, or null. Not an
  // assert: libjsonnet 0.18 runs an object's assertions on every index of it,
  // and the components are indexed often (12.7 M instructions of one A4
  // target's build); platform.libsonnet checks each component once.
  // Native calls only on the path every component takes.
  lacking::
    if std.objectHasEx(self, 'name', true) && std.objectHasEx(self, 'repo', true) && std.objectHasEx(self, 'tag', true) && std.objectHasEx(self, 'version', true) && std.objectHasEx(self, 'path', true) && std.objectHasEx(self, 'kind', true) && std.objectHasEx(self, 'namespace', true)
    then null
    else 'component ' + (if std.objectHasEx(self, 'name', true) then self.name else '(no name)') + ' lacks '
         + std.join('; ', [required[m] for m in std.objectFields(required) if !std.objectHasEx(self, m, true)])
         + ' (libsonnet/component.libsonnet lists what a component provides)',

  isComponent:: true,

  // Components whose CRDs or webhooks this one uses: installed first (Argo CD
  // sync wave, Flux dependsOn).
  needs: [],

  // group/Kind of the objects that need this component installed (a
  // target whose tree holds one installs it): the Prometheus Operator's
  // ServiceMonitor, the Network Operator's NicClusterPolicy. A runtime's
  // workload kind is the runtime's to declare (runtime.libsonnet platform).
  kinds:: [],

  // group/Kind of cluster objects this component reads as its one
  // configuration (the Network Operator acts on the NicClusterPolicy named
  // nic-cluster-policy only): where the cluster already runs the component
  // (clusterHas), the object is the cluster's own and nemoc applies none.
  singletons:: [],

  // API groups every kind of which needs this component (Kueue's
  // kueue.x-k8s.io), and object labels that make an object need it (Kueue
  // admits a workload labelled kueue.x-k8s.io/queue-name).
  groups:: [],
  labels:: [],

  // What an object of one of its kinds provides once applied (a
  // NicClusterPolicy's RDMA resources), for SUMMARY.md.
  objectProvides(o):: [],

  // What SUMMARY.md adds where the cluster already runs it (clusterHas):
  // Kueue's note on the integrations it must have enabled.
  existingNote(ctx):: '',

  // The oldest version whose API nemoc's objects use, {version: 'vX.Y.Z',
  // why: where that was read}, or null: a cluster that runs an older one
  // (clusterHas.<name>: <version>) is a located error.
  minimumVersion:: null,

  // nemoc's values for the chart whatever the cloud, laid over the release
  // pins (C9); a cloud's own come from its profile (profile.componentValues).
  values(ctx):: {},

  // Names (extended resources, group/Kind of CRDs) it provides, for
  // SUMMARY.md's Platform section (tests/platform/bundle_releases.py checks
  // every one a workload uses is provided or a prerequisite).
  provides:: [],

  // The release row: {release: the artifact it corresponds to, pins: dotted
  // chart values that pin the released images ({} for none), patches?,
  // patchesSummary?, images}. A built-in component's is its row of the
  // reviewed table platform_releases.json; a component of your own writes its
  // own.
  release:: if std.objectHasEx(releases, self.name, false) then releases[self.name]
            else error 'component ' + self.name + ' has no release: write its release:: {release, pins} (libsonnet/component.libsonnet)',
}
