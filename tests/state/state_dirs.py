#!/usr/bin/python3
"""Two hashes (field review C16/C17, decision F15/F16): the directories a stage writes are named
by a state hash of what determines its artifact, the objects by a hash of everything in them.

Builds examples three ways and reads every state directory out of the emitted objects (NeMo
configs, Job arguments, Triton's config.pbtxt), per target:
  - a scheduling-only edit (the training's deadline, its shared-memory size, a node selector on
    the training pods) replaces the training workload (its name changes) and keeps every state
    directory: the new workload resumes where the old one wrote;
  - a learning-rate edit moves the training's directory and every directory after it (evaluate,
    the LoRA merge, the Hugging Face checkpoint, the engine), never one before it;
  - a new data version (stages.dataPrep.version / stages.<train>.dataVersion) moves the prepared
    set (F16) and everything after it;
  - SUMMARY.md's "State directories" lists exactly the directories the objects use;
  - the draft placeholder the hashes are taken with never reaches the output.

usage: state_dirs.py <repo> <nemoc>
"""
import copy
import os
import re
import subprocess
import sys
import tempfile

import yaml

KINDS = ["prepared", "import", "pretrain", "train", "merge-lora", "evaluate", "huggingface",
         "convert-scratch", "tensorrt-llm"]
# <mount>/<project>/<target>/<kind>/<12 hex>
STATE = re.compile(r"/([a-z0-9-]+)/([a-z0-9-]+)/(" + "|".join(KINDS) + r")/([0-9a-f]{12})(?![0-9a-f])")
DOWNSTREAM_OF_TRAIN = {"train", "merge-lora", "evaluate", "huggingface", "convert-scratch", "tensorrt-llm"}


def build(nemoc, spec, out):
    path = os.path.join(out, "spec.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    r = subprocess.run([nemoc, "build", "--quiet", "--out", os.path.join(out, "tree"), path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"nemoc build failed:\n{r.stderr}")
    return os.path.join(out, "tree", spec["metadata"]["name"])


def scan(tree):
    """target -> {kind: set of state hashes}, the workload names, the SUMMARY.md rows, and whether
    the draft placeholder appears anywhere."""
    states, names, summary, draft = {}, {}, {}, False
    for target in sorted(os.listdir(tree)):
        root = os.path.join(tree, target)
        if not os.path.isdir(root) or target.startswith("_"):
            continue
        got = states.setdefault(target, {})
        for dirpath, _, files in os.walk(root):
            for name in files:
                text = open(os.path.join(dirpath, name), encoding="utf-8").read()
                draft = draft or "@state" in text
                if name == "SUMMARY.md":
                    section = text.split("## State directories", 1)[1].split("\n## ", 1)[0] if "## State directories" in text else ""
                    summary[target] = set(re.findall(r"^\| `[0-9]{2}-[a-z0-9-]+` \| `([^`]+)` \|$", section, re.M))
                    continue
                if not name.endswith(".yaml") or "gitops" in dirpath:
                    continue
                for m in STATE.finditer(text):
                    if m.group(2) == target:
                        got.setdefault(m.group(3), set()).add(m.group(4))
                if re.match(r"(job|jobset|pytorchjob|trainjob)-", name):
                    names.setdefault(target, set()).add(name)
    return states, names, summary, draft


def train_keys(spec):
    return [k for k in ("pretrain", "train") if k in spec["spec"]["stages"]]


def scheduling_edit(spec):
    s = copy.deepcopy(spec)
    for k in train_keys(s):
        s["spec"]["stages"][k]["timeout"] = "72h"
        s["spec"]["stages"][k]["shmSize"] = "200Gi"
    for t in s["spec"]["targets"]:
        t["nodeSelector"] = dict(t.get("nodeSelector") or {}, **{"example.com/pool": "training-b"})
    return s


def lr_edit(spec):
    s = copy.deepcopy(spec)
    opt = s["spec"]["stages"]["train"].setdefault("optimizer", {})
    opt["lr"] = 0.000123
    return s


def data_edit(spec):
    s = copy.deepcopy(spec)
    stages = s["spec"]["stages"]
    if "dataPrep" in stages:
        stages["dataPrep"]["version"] = "2026-12-01"
    else:
        stages["train"]["dataVersion"] = "2026-12-01"
    return s


def main():
    repo, nemoc = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []
    examples = ["llama31-8b-pipeline.yaml", "llama31-8b-cpt-sft-gke-a4.yaml", "llama31-8b-lora-nemo2-eks.yaml",
                "llama2-7b-lora-serving-eks.yaml"]
    for example in examples:
        spec = yaml.safe_load(open(os.path.join(repo, "examples", example)))
        with tempfile.TemporaryDirectory() as tmp:
            trees = {}
            for label, s in [("base", spec), ("scheduling", scheduling_edit(spec)), ("lr", lr_edit(spec)),
                             ("data", data_edit(spec))]:
                os.makedirs(os.path.join(tmp, label))
                trees[label] = scan(build(nemoc, s, os.path.join(tmp, label)))
        base, base_names, base_summary, _ = trees["base"]
        kinds = sorted({k for t in base.values() for k in t})
        print(f"{example}: targets {sorted(base)}; state kinds {kinds}")
        if "train" not in kinds:
            failures.append(f"{example}: no training state directory found in the output")
        for label, (states, names, summary, draft) in trees.items():
            if draft:
                failures.append(f"{example} ({label}): the draft state '@state' reaches the output")
            for target, got in states.items():
                used = {h for hs in got.values() for h in hs}
                listed = {p.rstrip("/").split("/")[-2] if p.endswith("/engine") else p.rstrip("/").split("/")[-1]
                          for p in summary.get(target, set())}
                if used - listed:
                    failures.append(f"{example} ({label}) {target}: SUMMARY.md's State directories misses {sorted(used - listed)}")
                for kind, hashes in got.items():
                    if len(hashes) != 1:
                        failures.append(f"{example} ({label}) {target}: {kind} names {len(hashes)} states {sorted(hashes)}")
        for target in base:
            sched, lr, data = (trees[l][0][target] for l in ("scheduling", "lr", "data"))
            if trees["scheduling"][1][target] == base_names[target]:
                failures.append(f"{example} {target}: the scheduling edit replaced no workload (the test edits nothing)")
            if sched != base[target]:
                failures.append(f"{example} {target}: a scheduling-only edit moved state directories: "
                                f"{ {k: (sorted(base[target].get(k, [])), sorted(v)) for k, v in sched.items() if v != base[target].get(k)} }")
            for kind in base[target]:
                moved = lr.get(kind) != base[target][kind]
                if kind in DOWNSTREAM_OF_TRAIN and not moved:
                    failures.append(f"{example} {target}: the learning-rate edit kept the {kind} directory")
                if kind not in DOWNSTREAM_OF_TRAIN and moved:
                    failures.append(f"{example} {target}: the learning-rate edit moved the {kind} directory (before training)")
                dmoved = data.get(kind) != base[target][kind]
                before_data = kind in ("import",) or (kind == "pretrain" and "dataPrep" not in spec["spec"]["stages"])
                if not before_data and not dmoved and kind != "pretrain":
                    failures.append(f"{example} {target}: the data-version edit kept the {kind} directory")
                if before_data and dmoved:
                    failures.append(f"{example} {target}: the data-version edit moved the {kind} directory")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(examples)} examples, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
