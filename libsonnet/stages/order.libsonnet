// The pipeline's stages in order: the table nemoc generates from the stage
// descriptions, libsonnet/stages/<key>.stage.json and a --jpath directory's
// stages/<key>.stage.json (what the libraries read of each: compiler/stages.cc
// StageTableSource; the contract schemas/contracts/stage.schema.json), sorted
// by directory. The numeric prefix of a directory IS the stage's
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
// What each library must have for its description (docs/stages.md), named
// when it lacks it: files(ctx) always; summary(ctx) with a SUMMARY.md line;
// enabled(ctx) when implied; stateDir(ctx) beside state(ctx).
local lacks(row) =
  local lib = row.library;
  local d = row.description;
  [m for m in ['files']
              + (if d.summaryLine then ['summary'] else [])
              + (if std.primitiveEquals(d.present, 'implied') then ['enabled'] else [])
              + (if std.objectHasEx(lib, 'state', true) then ['stateDir'] else [])
   if !std.objectHasEx(lib, m, true)];
local problems = [
  'stage ' + row.key + ': its library ' + row.libraryPath + ' lacks ' + std.join(', ', [m + '(ctx)' for m in lacks(row)])
  + ' (docs/stages.md: what a stage library has for its description)'
  for row in table
  if std.length(lacks(row)) > 0
];

{
  stages: stages,
  dir: dirs,
  // Stage key -> its library (files(ctx), summary(ctx), ...); an error naming
  // every member a library lacks (nemoc.libsonnet binds this once).
  libraries: if std.length(problems) > 0 then error std.join('; ', problems) else { [s.key]: s.library for s in table },
  // What serves the model once the pipeline has made it. Argo CD delivers
  // these directories in an Application of their own, after the pipeline's
  // (gitops.libsonnet, field review C11 and decision F4).
  servingDirs: [s.dir for s in stages if s.serving],
}
