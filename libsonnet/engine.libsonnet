// The contract of a GitOps engine (issue #48): what gitops.libsonnet asks of
// each engine spec.gitops.engines names. Argo CD and Flux are its two
// implementations (libsonnet/engines/argocd.libsonnet, flux.libsonnet); an
// engine file is `(import 'nemoc/engine.libsonnet') + { ... }`, with its
// description beside it, engines/<name>.json (schemas/contracts/
// engine.schema.json: title, notes, the schema of spec.gitops.<name>). An
// engine of your own is the same two files in a --jpath directory's engines/
// (docs/extending.md). What every engine shares -- stage directories and
// waves, names, the cluster, the platform bundle's object groups, the kept
// kinds -- is gitops.libsonnet's. C++ names no engine: the spec's schema,
// SUMMARY.md, the cluster bundle's SUMMARY.md and the namespace each object
// is verified in come from the description (compiler/engines.h) and from
// summary() below.
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
  // Whether platform() applies the cluster bundle (its components and cluster
  // objects). A spec whose engines none of which does cannot ask for the
  // bundle (spec.gitops.platform): gitops.libsonnet says so, located.
  installsPlatform:: false,

  // The cluster bundle's bootstrap command (with spec.gitops.platform), the
  // target's bootstrap in order (the bundle's first), how the target is
  // removed (F13; `kept`: what stays, in words).
  clusterBootstrap(ctx):: error 'engine ' + self.name + ' lacks clusterBootstrap(ctx)',
  bootstrap(ctx):: [],
  remove(ctx, kept):: [],
  // For people: what the cluster bundle's bootstrap does (its SUMMARY.md),
  // and what the engine does with a commit that edits a stage while one
  // runs (field review C24, SUMMARY.md). Every engine keeps these and its
  // title in its description, engines/<name>.json: the table nemoc generates
  // (nemoc/engines.libsonnet) adds them to the engine's object, and
  // compiler/cluster_bundle.cc reads them there too (a cluster's SUMMARY.md
  // is written from the targets' contributions on disk, which do not carry
  // them). The library does not import its description: its schema would be
  // parsed in every evaluation.
  clusterBootstrapNote:: '',
  editWhileRunning:: '',

  // Its rules about the spec's settings, located like a profile's checks
  // ([{code, pointer, message, hint?, severity?}], pointer into the spec: nemoc
  // turns each into file:line:column). The built-in engines' rules are C++,
  // checked before expansion (compiler/check_registry.h kEngine); an engine
  // of your own says its own here.
  diagnostics(ctx):: [],
}
