// The pipeline's stages in order: the table nemoc generates from the stage
// descriptions (what the libraries read of each, compiler/stages.cc
// StageTableSource) (libsonnet/stages/<key>.stage.json and a --jpath directory's
// stages/<key>.stage.json; schemas/contracts/stage.schema.json, compiler/stages.h),
// sorted by directory. The numeric prefix of a directory IS the stage's
// position: kustomize, SUMMARY.md and the GitOps objects (sync waves, Flux
// dependsOn) all derive the order from it. docs/stages.md adds one.
local table = import 'nemoc/stages.libsonnet';
// Plain data, bound once: a field that computes is computed again on every
// access, and every stage reads its directory from here.
local stages = std.parseJson('' + [
  {
    key: s.key,
    library: s.libraryPath,
    dir: s.description.dir,
    present: s.description.present,
    training: s.description.training,
    summaryLine: s.description.summaryLine,
    serving: s.description.serving,
    sharesLibrary: s.sharesLibrary,
  }
  for s in table
]);
local dirs = { [s.key]: s.dir for s in stages };

{
  stages: stages,
  dir: dirs,
  // Stage key -> its library (files(ctx), summary(ctx), ...).
  libraries: { [s.key]: s.library for s in table },
  // What serves the model once the pipeline has made it. Argo CD delivers
  // these directories in an Application of their own, after the pipeline's
  // (gitops.libsonnet, field review C11 and decision F4).
  servingDirs: [s.dir for s in stages if s.serving],
}
