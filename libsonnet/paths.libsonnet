// Where every stage reads and writes on shared storage: computed here and
// nowhere else, so training, evaluation and conversion agree.
{
  // ctx.storage is the target's resolved storage (results and data volumes).
  resultsDir(ctx):: ctx.storage.results.mountPath + '/' + ctx.project + '/' + ctx.target.name,
  trainDir(ctx):: $.resultsDir(ctx) + '/train',
  checkpointDir(ctx):: $.trainDir(ctx) + '/checkpoints',
  // DLLogger JSON (`nemoc metrics` reads rank-0/dllogger.json below it).
  dlloggerDir(ctx):: $.trainDir(ctx) + '/dllogger',
  dataDir(ctx):: ctx.storage.data.mountPath,
  dataFile(ctx, relative):: $.dataDir(ctx) + '/' + relative,
  // A .nemo checkpoint given relative to the results volume.
  resultsFile(ctx, relative):: ctx.storage.results.mountPath + '/' + relative,
  configDir:: '/config',
}
