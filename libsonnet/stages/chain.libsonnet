// The training chain: spec.stages.pretrain (optional: pretraining, or
// continued pretraining from spec.model.source) then spec.stages.train.
// Each training stage is built by stages/train.libsonnet with ctx.trainKey
// naming it; the first restores spec.model.source (if any), the next the
// .nemo its predecessor saves at the end. Evaluation, the LoRA merge,
// conversion and the engine read the last one (spec.stages.train).
{
  keys:: ['pretrain', 'train'],

  // The training stage being built: ctx.trainKey, else the last.
  key(ctx):: if std.objectHasEx(ctx, 'trainKey', false) then ctx.trainKey else 'train',
  stage(ctx):: ctx.spec.stages[$.key(ctx)],
  at(ctx, key):: ctx { trainKey: key },

  present(ctx):: [k for k in $.keys if std.objectHasEx(ctx.spec.stages, k, false)],
  // The training stage whose checkpoint the stage being built restores, or null.
  upstream(ctx)::
    if std.primitiveEquals($.key(ctx), 'train') && std.objectHasEx(ctx.spec.stages, 'pretrain', false) then 'pretrain' else null,
  // The stage spanning the most nodes (the first on a tie): the NCCL
  // preflight tests its nodes and fabric.
  widest(ctx)::
    local keys = $.present(ctx);
    std.foldl(function(best, k) if ctx.spec.stages[k].nodes > ctx.spec.stages[best].nodes then k else best, keys, keys[0]),
}
