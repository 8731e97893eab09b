"""Stand-ins for running the NeMo 2 Jobs' Python programs outside a NeMo container, and the
checkpoint directory a NeMo 2 training run leaves, for conformance.nemo2_export and
conformance.nemo2_evaluate (both programs pick their checkpoint with
libsonnet/stages/nemo2-checkpoint.libsonnet)."""
import os
import time

# nemo.utils.exp_manager._filter_out_unfinished_checkpoints with NeMo's marker rule:
# <checkpoint>-unfinished exists (nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:439-469).
EXP_MANAGER_STUBS = {
    "nemo/__init__.py": "",
    "nemo/utils/__init__.py": "",
    "nemo/utils/exp_manager.py": """
from pathlib import Path
def _filter_out_unfinished_checkpoints(checkpoint_paths):
    # NeMoModelCheckpoint.is_checkpoint_unfinished: <checkpoint>-unfinished exists
    return [p for p in checkpoint_paths if not Path(str(p) + "-unfinished").exists()]
""",
}

# What the program says when no finished *last checkpoint exists.
NO_CHECKPOINT = "no finished *-last checkpoint in "


def write_site(root, stubs):
    """Writes {relative path: text} under <root>/site (the PYTHONPATH) and returns that directory."""
    site = os.path.join(root, "site")
    for rel, text in {**EXP_MANAGER_STUBS, **stubs}.items():
        os.makedirs(os.path.dirname(os.path.join(site, rel)), exist_ok=True)
        with open(os.path.join(site, rel), "w") as f:
            f.write(text)
    return site


def training_checkpoints(root):
    """<root>/checkpoints as a run leaves it: finished *last copies, a newer unfinished one and a
    newest non-last one. Returns (directory, the checkpoint AutoResume would pick)."""
    ckpts = os.path.join(root, "checkpoints")
    names = {  # name -> (age in seconds, unfinished marker)
        "m--val_loss=1.10-step=99-consumed_samples=1600.0-last": (300, False),
        "m--val_loss=0.95-step=149-consumed_samples=2400.0-last": (200, False),
        "m--val_loss=0.90-step=199-consumed_samples=3200.0-last": (100, True),
        "m--val_loss=0.80-step=199-consumed_samples=3200.0": (50, False),
    }
    now = time.time()
    for name, (age, unfinished) in names.items():
        os.makedirs(os.path.join(ckpts, name, "weights"))
        os.utime(os.path.join(ckpts, name), (now - age, now - age))
        if unfinished:
            open(os.path.join(ckpts, name + "-unfinished"), "w").close()
    return ckpts, os.path.join(ckpts, "m--val_loss=0.95-step=149-consumed_samples=2400.0-last")


def unfinished_checkpoints(root):
    """<root>/empty: a *last checkpoint that never finished, nothing to pick."""
    empty = os.path.join(root, "empty")
    os.makedirs(os.path.join(empty, "x-last"))
    open(os.path.join(empty, "x-last-unfinished"), "w").close()
    return empty
