// The NeMo 2 checkpoint a stage reads from a NeMo 2 training run: the one
// AutoResume would resume, the newest (by mtime) finished *last directory of
// <explicit_log_dir>/checkpoints (NVIDIA/NeMo nemo/lightning/resume.py
// v2.1.0:195-256, with NeMo's own _filter_out_unfinished_checkpoints,
// nemo/utils/exp_manager.py). Its name,
// "{model_name}--{val_loss}-{step}-{consumed_samples}-last", holds the
// validation loss and step and is known only at run time, so the Jobs that
// read it (50-convert's export, 40-evaluate's model server) pick it in
// Python with this function, ahead of their own program.
{
  // Whether spec.stages.<key> reads a NeMo 2 training run: it names no
  // checkpoint of its own and the train stage is framework nemo2.
  reads(ctx, key)::
    local stages = ctx.spec.stages;
    !std.objectHasEx(stages[key], 'checkpoint', false)
    && std.objectHasEx(stages, 'train', false) && std.primitiveEquals(stages.train.framework, 'nemo2'),

  pick: |||
    import sys
    from pathlib import Path
    from nemo.utils.exp_manager import _filter_out_unfinished_checkpoints
    def newest_last(checkpoints):
        last = _filter_out_unfinished_checkpoints(
            [d for d in checkpoints.glob("*") if d.is_dir() and d.match("*last")])
        if not last:
            sys.exit("no finished *-last checkpoint in " + str(checkpoints))
        return max(last, key=lambda d: d.stat().st_mtime)
  |||,
}
