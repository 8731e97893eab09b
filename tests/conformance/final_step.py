#!/usr/bin/python3
"""The final training step is in every artifact the later stages read (field review A23, #42 item 3).

Lightning cannot be installed here, so the callbacks' decision of which step the artifact holds is
reproduced below from NeMo's source, per tag, and applied to the configuration nemoc generates for a
grid of (maxSteps, checkpoint.every, valCheckInterval):

NeMo 1 -- the readers (evaluation, LoRA merge, conversion, the next training of a chain, the engine
through the conversion) load the .nemo that NeMoModelCheckpoint.on_train_end saves
(nemo/utils/callbacks/nemo_model_checkpoint.py: r2.0.0rc1/v2.0.0 :247-287, v2.1.0 :249-289,
v2.2.1 :248-288, v2.3.0 :249-289, v2.4.0 :262-305). With save_best_model it first restores
best_model_path (r2.0.0rc1 :268-280, v2.1.0 :270-282, v2.4.0 :286-298): the best of the top-k
checkpoints by `monitor`; nemoc monitors 'step' in mode 'max', and the top-k saves happen at every
every_n_train_steps (Lightning ModelCheckpoint.on_train_batch_end), so best = the newest multiple of
every_n_train_steps. The end-of-training -last save (:253-265) is not a top-k entry.

NeMo 2 -- the readers take the newest *-last checkpoint directory
(libsonnet/stages/nemo2-checkpoint.libsonnet; AutoResume reads only *last, nemo/lightning/resume.py).
ModelCheckpoint writes -last beside each every_n_train_steps save and, in on_train_end, only when
save_last and val_check_interval != 0 and (int: global_step % val_check_interval != 0; float:
val_check_interval % global_step != 0)
(nemo/lightning/pytorch/callbacks/model_checkpoint.py v2.1.0 :281-292, v2.2.1/v2.3.0/v2.4.0
:380-391). When the spec sets no valCheckInterval the recipe's applies (10 to 2000 across
nemo/collections/llm/recipes at v2.3.0): unknown here, so it is taken as dividing maxSteps.

For each grid point the build either succeeds and the decision gives the final step, or is refused
with a located spec.final-step-unsaved error, and then (with what the spec says) the decision must
indeed miss the final step: no refusal of a spec that works.

Usage: final_step.py <nemoc> <source dir>
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])

# (maxSteps, checkpoint.every, valCheckInterval or None)
GRID = [(1000, 500, None), (1100, 1000, None), (1100, 1000, 100), (1100, 1000, 300), (1000, 300, None),
        (200, 500, None), (1000, 300, 250), (1200, 500, 400)]
NEMO1_RELEASES = ["24.12", "25.02", "25.04", "25.07"]
NEMO2_RELEASES = ["25.04", "25.07"]



def set_release(spec, release):
    """spec.image at `release`, and each eks-efa target's EFA image built from it
    (nemoc refuses an EFA image of another release: profiles/eks-efa.libsonnet)."""
    spec["spec"]["image"]["tag"] = release
    for target in spec["spec"]["targets"]:
        if "efa" in target:
            target["efa"]["image"]["tag"] = "nemo%s-efa" % release

def periodic_saves(max_steps, every):
    """Lightning ModelCheckpoint.on_train_batch_end: a top-k (and -last) save at each multiple."""
    return list(range(every, max_steps + 1, every)) if every and every > 0 else []


def nemo1_artifact_step(max_steps, cb):
    """Which step's weights NeMoModelCheckpoint.on_train_end writes into the .nemo."""
    assert cb["save_nemo_on_train_end"], "no .nemo at train end"
    saves = periodic_saves(max_steps, cb["every_n_train_steps"])
    if cb.get("save_best_model") and saves:
        # restore(best_model_path): monitor 'step', mode 'max' -> the newest top-k save
        assert cb["monitor"] == "step" and cb["mode"] == "max", cb
        return max(saves)
    return max_steps  # the in-memory model: the final step


def nemo2_artifact_step(max_steps, every, save_last, val_check_interval):
    """The step of the newest *-last directory after ModelCheckpoint.on_train_end."""
    saves = periodic_saves(max_steps, every) if save_last else []
    if save_last and val_check_interval != 0:
        v = val_check_interval
        if v is None:
            v = max_steps  # the recipe's: unknown, taken as dividing max_steps
        end = (isinstance(v, float) and v % max_steps != 0) or (isinstance(v, int) and max_steps % v != 0)
        if end:
            saves.append(max_steps)
    return max(saves) if saves else None


def write(tmp, name, spec):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    return path


def set_steps(stage, m, e, v):
    stage["maxSteps"] = m
    stage.setdefault("checkpoint", {})["every"] = e
    if v is None:
        stage.pop("valCheckInterval", None)
    else:
        stage["valCheckInterval"] = v


def nemo1_configs(out):
    """(stage, config.yaml) of every NeMo 1 training ConfigMap under out."""
    for root, _, files in os.walk(out):
        for f in files:
            if f.startswith("configmap-") and "-config-" in f:
                doc = yaml.safe_load(open(os.path.join(root, f)))
                if "config.yaml" in doc.get("data", {}):
                    yield doc["metadata"]["labels"]["app.kubernetes.io/component"], yaml.safe_load(doc["data"]["config.yaml"])


def nemo2_settings(out, component):
    """max_steps, every_n_train_steps, save_last, val_check_interval as recipe.py sets them."""
    for root, _, files in os.walk(out):
        for f in files:
            if f.startswith("configmap-") and "-%s-config-" % component in f:
                doc = yaml.safe_load(open(os.path.join(root, f)))
                text = doc.get("data", {}).get("recipe.py")
                if text is None:
                    continue

                def value(key):
                    m = re.search(r"^\s*recipe\.%s = (.+)$" % re.escape(key), text, re.M)
                    return None if m is None else eval(m.group(1), {"True": True, "False": False, "None": None})
                yield (value("trainer.max_steps"), value("log.ckpt.every_n_train_steps"),
                       value("log.ckpt.save_last"), value("trainer.val_check_interval"))


UNSAVED = "NeMo 2 saves no checkpoint at step"  # the spec.final-step-unsaved message


def refused(run):
    return run.returncode != 0 and UNSAVED in run.stderr


def located(run, spec_path):
    """file:line:column on the refusal, pointing into the spec (at checkpoint.every)."""
    m = re.search(r"^(\S+):(\d+):(\d+): error: .*" + re.escape(UNSAVED), run.stderr, re.M)
    if not m or os.path.basename(m.group(1)) != os.path.basename(spec_path):
        return False
    line = open(spec_path).read().splitlines()[int(m.group(2)) - 1]
    return "every" in line


def main():
    failures, checked, refusals = [], 0, 0
    nemo1_base = yaml.safe_load(open(os.path.join(SRC, "tests", "specs", "training-chain.yaml")))
    nemo2_base = yaml.safe_load(open(os.path.join(SRC, "examples", "llama31-8b-lora-nemo2-eks.yaml")))
    chain2_base = yaml.safe_load(open(os.path.join(SRC, "tests", "specs", "nemo2-training-chain.yaml")))
    with tempfile.TemporaryDirectory(prefix="nemoc-final-step-") as tmp:
        # NeMo 1: every grid point builds, and every .nemo a reader loads holds the final step.
        for release in NEMO1_RELEASES:
            for m, e, v in GRID:
                spec = yaml.safe_load(yaml.safe_dump(nemo1_base))
                set_release(spec, release)
                for key in ("pretrain", "train"):
                    set_steps(spec["spec"]["stages"][key], m, e, v)
                name = "nemo1-%s-%d-%d-%s" % (release, m, e, v)
                path = write(tmp, name, spec)
                out = os.path.join(tmp, "out-" + name)
                run = build(NEMOC, SRC, out, [path])
                if run.returncode != 0:
                    failures.append(f"{name}: refused\n{run.stderr}")
                    continue
                configs = list(nemo1_configs(out))
                if not configs:
                    failures.append(f"{name}: no NeMo 1 config.yaml")
                for stage, cfg in configs:
                    checked += 1
                    step = nemo1_artifact_step(cfg["trainer"]["max_steps"], cfg["exp_manager"]["checkpoint_callback_params"])
                    if step != m:
                        failures.append(f"{name} {stage}: the .nemo holds step {step} of {m}")
        # NeMo 2: the newest *-last holds the final step, or the spec is refused, located, for a reason.
        cases = [("train", nemo2_base, ["train"]), ("chain", chain2_base, ["pretrain"])]
        for release in NEMO2_RELEASES:
            for label, base, keys in cases:
                for m, e, v in GRID:
                    spec = yaml.safe_load(yaml.safe_dump(base))
                    set_release(spec, release)
                    for key in keys:
                        set_steps(spec["spec"]["stages"][key], m, e, v)
                    name = "nemo2-%s-%s-%d-%d-%s" % (label, release, m, e, v)
                    path = write(tmp, name, spec)
                    out = os.path.join(tmp, "out-" + name)
                    run = build(NEMOC, SRC, out, [path])
                    save_last = spec["spec"]["stages"][keys[0]].get("checkpoint", {}).get("saveLast", True)
                    expected = nemo2_artifact_step(m, e, save_last, v)
                    if refused(run):
                        refusals += 1
                        if expected == m:
                            failures.append(f"{name}: refused, but the final step would be saved\n{run.stderr}")
                        if not located(run, path):
                            failures.append(f"{name}: refusal not located at file:line:column\n{run.stderr}")
                        continue
                    if run.returncode != 0:
                        failures.append(f"{name}: build failed\n{run.stderr}")
                        continue
                    settings = list(nemo2_settings(out, keys[0]))
                    if not settings:
                        failures.append(f"{name}: no recipe.py for {keys[0]}")
                    for max_steps, every, last, validation in settings:
                        checked += 1
                        step = nemo2_artifact_step(max_steps, every, last, validation)
                        if step != m:
                            failures.append(f"{name}: the newest *-last checkpoint is step {step} of {m}")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{checked} training configurations decided, {refusals} refusals checked, {len(failures)} failures")
    return 1 if failures or checked == 0 or refusals == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
