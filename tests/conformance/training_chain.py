#!/usr/bin/python3
"""A training chain (spec.stages.pretrain, then spec.stages.train) against NeMo and the engines.

For every example and test spec target with a 28-pretrain stage, from the trees the nemoc
binary under test builds:
  - each stage's NeMo 1 config (the ConfigMap its pods mount as nemo-config) logs under its own
    directory (exp_manager.explicit_log_dir), and the pretraining saves its final .nemo:
    exp_manager puts the checkpoint callback under <explicit_log_dir>/checkpoints
    (NVIDIA/NeMo nemo/utils/exp_manager.py v2.1.0:1167) and NeMoModelCheckpoint writes
    <dirpath>/<exp_manager.name>.nemo when save_nemo_on_train_end is set
    (nemo/utils/callbacks/nemo_model_checkpoint.py v2.1.0:321-325);
  - the next stage restores exactly that file (model.restore_from_path, which
    megatron_gpt_finetuning.py and megatron_gpt_pretraining.py read);
  - the pretraining restores spec.model.source when there is one (continued pretraining:
    megatron_gpt_pretraining.py r2.0.0rc1..v2.4.0:44-55 reads cfg.model.restore_from_path),
    the import Job's output for a Hugging Face source, and nothing otherwise; it runs
    megatron_gpt_pretraining.py, the fine-tuning megatron_gpt_finetuning.py;
  - evaluation and conversion (or the LoRA merge) read the last stage's checkpoint, never the
    pretraining's;
  - the Flux Kustomization of 30-train depends on 28-pretrain's, Argo CD's sync waves order
    them, the DCGM alerts select both workloads' pods, and the NCCL preflight spans the wider
    stage's nodes.
Then it edits specs and rebuilds (field review C5): new pretraining renames the pretraining,
the fine-tuning and everything reading it; a new fine-tuning leaves the pretraining's name.
With NEMOC_NEMO_GIT=<NVIDIA/NeMo git dir> it reads megatron_gpt_pretraining.py at each tag
the outputs name and checks that it restores model.restore_from_path.

Usage: training_chain.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import (WORKLOADS, all_args, all_specs, build, build_all, load_dir, mappings, missing,  # noqa: E402
                         nemo_tag, require_yaml, workload_in)

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
RELEASES = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))["releases"]
PRETRAIN_SCRIPT = "megatron_gpt_pretraining.py"
FINETUNE_SCRIPT = "megatron_gpt_finetuning.py"


def run_of(obj):
    """(image, argv, mounted nemo-config ConfigMap) of a training workload."""
    image = argv = mounted = None
    for node in mappings(obj):
        if node.get("name") == "nemo-config" and isinstance(node.get("configMap"), dict):
            mounted = node["configMap"]["name"]
        args = [str(a) for a in (node.get("command") or []) + (node.get("args") or []) if isinstance(a, (str, int))]
        if "--config-name=config.yaml" in args and "image" in node:
            image, argv = node["image"], args
    return image, argv, mounted


def saved_nemo(cfg):
    """checkpoint_callback_params.dirpath when set (NeMoModelCheckpoint writes there), else
    <explicit_log_dir>/checkpoints."""
    em = cfg["exp_manager"]
    dirpath = (em.get("checkpoint_callback_params") or {}).get("dirpath") or f"{em['explicit_log_dir']}/checkpoints"
    return f"{dirpath}/{em['name']}.nemo"


def check_target(where, target, spec, errors, tags):
    docs = load_dir(target)
    configs = {o["metadata"]["name"]: yaml.safe_load(o["data"]["config.yaml"])
               for o in docs.values() if o["kind"] == "ConfigMap" and "config.yaml" in (o.get("data") or {})}
    stages = {}
    for key, directory in (("pretrain", "28-pretrain"), ("train", "30-train")):
        rel, obj = workload_in(docs, directory)
        if obj is None:
            errors.append(f"{where}: no single training workload in {directory}")
            return
        image, argv, mounted = run_of(obj)
        if mounted not in configs:
            errors.append(f"{where}: {rel} mounts ConfigMap {mounted}, which the tree lacks")
            return
        stages[key] = {"rel": rel, "obj": obj, "image": image, "argv": argv, "cfg": configs[mounted]}
    pre, ft = stages["pretrain"], stages["train"]
    tags.add(nemo_tag(pre["image"], RELEASES))
    if not any(a.endswith(PRETRAIN_SCRIPT) for a in pre["argv"]):
        errors.append(f"{where}: 28-pretrain does not run {PRETRAIN_SCRIPT}: {pre['argv'][:3]}")
    expected_script = PRETRAIN_SCRIPT if spec["spec"]["stages"]["train"]["mode"] == "pretrain" else FINETUNE_SCRIPT
    if not any(a.endswith(expected_script) for a in ft["argv"]):
        errors.append(f"{where}: 30-train does not run {expected_script}")
    pcfg, fcfg = pre["cfg"], ft["cfg"]
    if pcfg["exp_manager"]["explicit_log_dir"] == fcfg["exp_manager"]["explicit_log_dir"]:
        errors.append(f"{where}: both stages log to {pcfg['exp_manager']['explicit_log_dir']}")
    if not pcfg["exp_manager"].get("create_checkpoint_callback"):
        errors.append(f"{where}: the pretraining creates no checkpoint callback")
    if not pcfg["exp_manager"]["checkpoint_callback_params"].get("save_nemo_on_train_end"):
        errors.append(f"{where}: the pretraining does not save a .nemo at the end (save_nemo_on_train_end)")
    handed = saved_nemo(pcfg)
    if fcfg["model"].get("restore_from_path") != handed:
        errors.append(f"{where}: 30-train restores {fcfg['model'].get('restore_from_path')}, "
                      f"28-pretrain saves {handed}")
    # What the pretraining starts from.
    source = spec["spec"]["model"].get("source") or {}
    results = next(m["mountPath"] for m in mappings(pre["obj"]) if m.get("name") == "results" and "mountPath" in m)
    restored = pcfg["model"].get("restore_from_path")
    if "nemo" in source:
        if restored != f"{results}/{source['nemo']}":
            errors.append(f"{where}: the continued pretraining restores {restored}, not spec.model.source.nemo")
    elif "huggingface" in source:
        _, imp = workload_in(docs, "25-import-model")
        args = all_args(imp) if imp else []
        output = next((a.split("=", 1)[1] for a in args if a.startswith("--output_path=")), None)
        if imp is None or restored != output:
            errors.append(f"{where}: the continued pretraining restores {restored}, the import writes {output}")
    elif restored is not None:
        errors.append(f"{where}: pretraining from random weights restores {restored}")
    # Readers of the chain read the last stage (or its merged adapter), never the pretraining's .nemo.
    for r, obj in docs.items():
        if obj["kind"] in WORKLOADS and re.match(r"(35|40|50)-", r):
            args = " ".join(all_args(obj))
            if handed in args and not r.startswith("35-"):
                errors.append(f"{where}: {r} reads the pretraining's checkpoint instead of the fine-tuned one")
            if saved_nemo(fcfg) not in args and not re.search(r"merge-lora/[0-9a-f]{12}/merged\.nemo", args) and "checkpoint" not in spec["spec"]["stages"].get(r[3:].split("/")[0], {}):
                errors.append(f"{where}: {r} reads neither the fine-tuned .nemo nor the merged one")
    # GitOps order.
    names = {key: s["obj"]["metadata"]["name"] for key, s in stages.items()}
    flux = {o["spec"]["path"].rsplit("/", 1)[-1]: o for o in docs.values()
            if o["kind"] == "Kustomization" and o["apiVersion"].startswith("kustomize.toolkit.fluxcd.io")}
    if flux:
        depends = [d["name"] for d in flux["30-train"]["spec"].get("dependsOn", [])]
        if flux["28-pretrain"]["metadata"]["name"] not in depends:
            errors.append(f"{where}: Flux 30-train depends on {depends}, not on 28-pretrain's Kustomization")
    waves = [int(s["obj"]["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "-1"))
             for s in (pre, ft)]
    if any(o["kind"] == "Application" for o in docs.values()) and not (0 <= waves[0] < waves[1]):
        errors.append(f"{where}: Argo CD sync waves pretrain {waves[0]}, train {waves[1]}")
    # Alerts: both workloads' pods (the runtimes name pods <workload>-<replica>-...).
    for rule in (o for o in docs.values() if o["kind"] == "PrometheusRule"):
        exprs = [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"] if "DCGM" in r["expr"]]
        for expr in exprs:
            m = re.search(r'pod=~"([^"]+)"', expr)
            for key, name in names.items():
                if not m or not re.fullmatch(m.group(1), f"{name}-worker-0-0-abcde"):
                    errors.append(f"{where}: alert {expr[:60]}... does not select {key} pods ({name})")
    # NCCL preflight: the wider stage's nodes.
    _, nccl = workload_in(docs, "10-nccl-test")
    if nccl is not None:
        wide = max(("pretrain", "train"), key=lambda k: (spec["spec"]["stages"][k].get("nodes", 1), k == "pretrain"))
        text = json.dumps(nccl)
        nodes = spec["spec"]["stages"][wide].get("nodes", 1)
        wanted = [f'"parallelism": {nodes}', f'"numNodes": {nodes}', f'"nnodes": {nodes}',
                  f'"replicas": {nodes}', f'"completions": {nodes}']
        if not any(w in text for w in wanted):
            errors.append(f"{where}: the NCCL preflight does not span {wide}'s {nodes} nodes")


def names_in(target):
    """Workload name per stage directory, and "train-log": the fine-tuning's explicit_log_dir."""
    docs = load_dir(target)
    names = {r.split("/")[0]: o["metadata"]["name"] for r, o in docs.items()
             if o["kind"] in WORKLOADS and re.match(r"\d\d-", r)}
    _, train = workload_in(docs, "30-train")
    mounted = run_of(train)[2] if train else None
    for o in docs.values():
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == mounted:
            names["train-log"] = yaml.safe_load(o["data"]["config.yaml"])["exp_manager"]["explicit_log_dir"]
    return names


def hash_chain(tmp, errors):
    """C5 on tests/specs/training-chain.yaml: what is renamed when each stage changes."""
    spec_path = os.path.join(SRC, "tests", "specs", "training-chain.yaml")
    with open(spec_path) as f:
        text = f.read()

    def names(label, edited):
        path = os.path.join(tmp, f"{label}.yaml")
        with open(path, "w") as f:
            f.write(edited)
        out = os.path.join(tmp, label)
        r = build(NEMOC, SRC, out, [path])
        if r.returncode != 0:
            errors.append(f"hash chain {label}: nemoc build exit {r.returncode}: {r.stderr}")
            return {}
        return names_in(os.path.join(out, "training-chain", "eks"))

    base = names("base", text)
    new_pretrain = names("new-pretrain", text.replace("maxSteps: 2000", "maxSteps: 3000"))
    new_train = names("new-train", text.replace("maxSteps: 500", "maxSteps: 600"))
    # Scheduling only (F15): the fine-tuning's deadline and /dev/shm replace its workload.
    sched = names("scheduling", text.replace("      maxSteps: 500\n", "      maxSteps: 500\n      timeout: 24h\n      shmSize: 128Gi\n", 1))
    if not base or not new_pretrain or not new_train or not sched:
        return
    for d in ("28-pretrain", "30-train", "35-merge-lora", "40-evaluate", "50-convert", "60-tensorrt-llm"):
        if base.get(d) == new_pretrain.get(d):
            errors.append(f"hash chain: new pretraining keeps {d}'s name {base.get(d)}")
    # exp_manager resumes the newest *-last checkpoint of explicit_log_dir (resume_if_exists;
    # NVIDIA/NeMo v2.2.1 nemo/utils/exp_manager.py:813-880): after new pretraining the
    # fine-tuning must log elsewhere, or it restores the old fine-tuning at max_steps and
    # never trains on the new base. A changed fine-tuning (its config: the state hash, F15)
    # logs in a new directory too (C17); a scheduling-only change resumes its own run.
    if "train-log" not in base or base.get("train-log") == new_pretrain.get("train-log"):
        errors.append(f"hash chain: after new pretraining the fine-tuning logs (and resumes) in the old "
                      f"directory {base.get('train-log')}")
    if base.get("train-log") == new_train.get("train-log"):
        errors.append("hash chain: a changed fine-tuning keeps its log directory: it would resume the old run (C17)")
    if base.get("train-log") != sched.get("train-log"):
        errors.append("hash chain: a scheduling-only change moved the fine-tuning's log directory (it would not resume)")
    if base.get("30-train") == sched.get("30-train"):
        errors.append("hash chain: the scheduling-only change did not replace the fine-tuning workload (the test edits nothing)")
    if base.get("28-pretrain") != new_train.get("28-pretrain"):
        errors.append("hash chain: a new fine-tuning renames the pretraining")
    for d in ("30-train", "35-merge-lora", "40-evaluate"):
        if base.get(d) == new_train.get(d):
            errors.append(f"hash chain: a new fine-tuning keeps {d}'s name")
    # Nothing reads the fine-tuned model: the pretraining still saves the .nemo the chain hands on.
    alone = os.path.join(tmp, "alone.yaml")
    cut = text[:text.index("    evaluate:")] + text[text.index("  monitoring:"):]
    with open(alone, "w") as f:
        f.write(cut)
    r = build(NEMOC, SRC, os.path.join(tmp, "alone"), [alone])
    config = None
    for path in glob.glob(os.path.join(tmp, "alone", "training-chain", "eks", "00-base", "configmap-*-pretrain-config-*.yaml")):
        with open(path) as f:
            config = yaml.safe_load(yaml.safe_load(f)["data"]["config.yaml"])
    if r.returncode != 0 or config is None:
        errors.append(f"hash chain: the chain without readers does not build: {r.stderr}")
    elif not config["exp_manager"]["checkpoint_callback_params"].get("save_nemo_on_train_end"):
        errors.append("a chain without evaluate or convert: the pretraining saves no .nemo for 30-train")
    # The NCCL preflight tests the widest stage's nodes; it depends on no training config.
    if base.get("10-nccl-test") != new_train.get("10-nccl-test"):
        errors.append("hash chain: a new fine-tuning renames the NCCL preflight")


def per_stage_images(tmp, errors):
    """Stages of a chain on different NeMo images: on gke-a4 each stage's pods get the gIB NCCL
    plugin of its own image's release (field review B12; profiles/gke-a4.libsonnet gib.versions),
    and the NCCL preflight runs the image of the stage whose nodes it tests (the widest)."""
    with open(os.path.join(SRC, "examples", "llama31-8b-cpt-sft-gke-a4.yaml")) as f:
        spec = yaml.safe_load(f)
    stages = spec["spec"]["stages"]
    stages["pretrain"]["image"] = {"repository": "nvcr.io/nvidia/nemo", "tag": "25.07"}
    stages["ncclTest"] = {}
    path = os.path.join(tmp, "images.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f)
    r = build(NEMOC, SRC, os.path.join(tmp, "images"), [path])
    if r.returncode != 0:
        errors.append(f"per-stage images: nemoc build exit {r.returncode}: {r.stderr}")
        return
    docs = load_dir(os.path.join(tmp, "images", spec["metadata"]["name"], "gke-a4"))

    def images(directory):
        _, obj = workload_in(docs, directory)
        return {m["image"] for m in mappings(obj) if isinstance(m.get("image"), str)} if obj else set()

    def gib(directory):
        return sorted(i.rsplit(":", 1)[1] for i in images(directory) if "nccl-plugin-gib" in i)

    # gib.versions: 25.07 -> v1.1.0; the nemo25.02 image -> v1.0.5.
    if gib("28-pretrain") != ["v1.1.0"] or gib("30-train") != ["v1.0.5"]:
        errors.append(f"per-stage images: gIB plugin pretrain {gib('28-pretrain')}, train {gib('30-train')} "
                      "(want v1.1.0 for NeMo 25.07, v1.0.5 for nemo25.02)")
    if "nvcr.io/nvidia/nemo:25.07" not in images("10-nccl-test"):
        errors.append(f"per-stage images: the NCCL preflight tests pretrain's 4 nodes but runs {sorted(images('10-nccl-test'))}")


def upstream_reads_restore(tags, errors):
    git = os.environ.get("NEMOC_NEMO_GIT")
    if not git:
        return 0
    tags = sorted(t for t in tags if t)
    for tag in tags:
        r = subprocess.run(["git", "--git-dir", git, "show",
                            f"refs/tags/{tag}:examples/nlp/language_modeling/{PRETRAIN_SCRIPT}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"NeMo {tag}: cannot read {PRETRAIN_SCRIPT}: {r.stderr.strip()}")
        elif 'cfg.model.get("restore_from_path")' not in r.stdout or "restore_from(" not in r.stdout:
            errors.append(f"NeMo {tag}: {PRETRAIN_SCRIPT} no longer restores cfg.model.restore_from_path")
    return len(tags)


def main():
    errors, checked, tags = [], 0, set()
    with tempfile.TemporaryDirectory(prefix="nemoc-chain-") as tmp:
        out = os.path.join(tmp, "all")
        r = build_all(NEMOC, SRC, out)
        if r.returncode != 0:
            print(f"FAIL: nemoc build exit {r.returncode}\n{r.stderr}")
            return 1
        for spec_path in all_specs(SRC):
            with open(spec_path) as f:
                spec = yaml.safe_load(f)
            # NeMo 2 chains: tests/conformance/nemo2_chain.py.
            if spec["spec"]["stages"].get("pretrain", {}).get("framework", "nemo1") != "nemo1" or \
                    "pretrain" not in spec["spec"]["stages"]:
                continue
            for t in spec["spec"]["targets"]:
                target = os.path.join(out, spec["metadata"]["name"], t["name"])
                where = f"{os.path.relpath(spec_path, SRC)} -> {t['name']}"
                before = len(errors)
                check_target(where, target, spec, errors, tags)
                checked += 1
                print(("ok   " if len(errors) == before else "FAIL ") + where)
        hash_chain(tmp, errors)
        per_stage_images(tmp, errors)
    upstream = upstream_reads_restore(tags, errors)
    for e in errors:
        print(f"FAIL {e}")
    print(f"{checked} chained targets checked, hash chain rebuilt 3 times"
          + (f", {upstream} NeMo tags read" if upstream else "") + f", {len(errors)} problems")
    if checked < 3:
        print("FAIL: expected the examples' and tests/specs' chains (at least 3 targets)")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
