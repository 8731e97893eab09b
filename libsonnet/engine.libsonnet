// The contract of a GitOps engine (issue #48): what gitops.libsonnet asks of
// each engine spec.gitops.engines names. Argo CD and Flux are its two
// implementations (libsonnet/engines/argocd.libsonnet, flux.libsonnet); an
// engine file is `(import 'nemoc/engine.libsonnet') + { ... }`. What every
// engine shares -- stage directories and waves, names, the cluster, the
// platform bundle's object groups, the kept kinds -- is gitops.libsonnet's.
// C++ names no engine: SUMMARY.md, the cluster bundle's SUMMARY.md and the
// namespace each object is verified in come from summary() below.
{
  // spec.gitops.engines' name for it.
  name:: error 'a GitOps engine names itself (name)',
  // What people call it ("Argo CD").
  title:: self.name,
  // The directories of a target's tree whose objects live in the engine's
  // namespace (gitops/<name>/, its part of gitops/platform/), and that
  // namespace (spec.gitops.<name>.namespace).
  dirs:: error 'engine ' + self.name + ' lacks dirs: the directories of its objects',
  namespace(ctx):: error 'engine ' + self.name + ' lacks namespace(ctx)',
  // Whether it applies to a cluster by its API server (Argo CD) rather than
  // to the cluster it runs in (Flux): the cluster bundle compares servers.
  namesServer:: false,

  // What it adds to a stage object's annotations (`dir` its stage directory,
  // null for gitops/; `workload` whether its kind is a workload kind).
  stageAnnotations(ctx, dir, o, workload):: {},
  // The annotations that keep an object (gitops.keptKinds: the Namespace and
  // the claims holding data) when the engine prunes or deletes (F13).
  keepAnnotations:: {},
  // Its objects in the target's tree: "<dir>/<kind>-<name>.yaml" -> object.
  files(ctx, files):: {},
  // Kustomize roots without objects of their own: dir -> resources.
  kustomizations(ctx, files):: {},
  // Its part of the platform bundle (components: platform.installed;
  // objects: the cluster objects, gitops.objectGroups).
  platform(ctx, components, objects):: {},

  // The cluster bundle's bootstrap command (with spec.gitops.platform), the
  // target's bootstrap in order (the bundle's first), how the target is
  // removed (F13; `kept`: what stays, in words).
  clusterBootstrap(ctx):: error 'engine ' + self.name + ' lacks clusterBootstrap(ctx)',
  bootstrap(ctx):: [],
  remove(ctx, kept):: [],
  // For people: what the cluster bundle's bootstrap does (its SUMMARY.md),
  // and what the engine does with a commit that edits a stage while one
  // runs (field review C24, SUMMARY.md). The built-in engines keep these in
  // engines/<name>.json, which compiler/cluster_bundle.cc reads too: a
  // cluster's SUMMARY.md is written from the targets' contributions on
  // disk, which do not carry them.
  clusterBootstrapNote:: '',
  editWhileRunning:: '',
}
