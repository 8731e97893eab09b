#!/usr/bin/python3
"""Project names up to the real cap build; one more character is refused (B18).

The cap is 63: the project name is the value of the label
app.kubernetes.io/part-of on every object, and a Kubernetes label value has at
most 63 characters. Every object name nemoc derives from the project is cut to
fit its own limit with a hash of the whole (libsonnet/k8s.libsonnet
boundedName), so no derived name binds tighter.

1. Every example and test spec, renamed to a realistic 63-character name,
   builds (exit 0), and in what it writes:
   - every metadata.name is a DNS-1123 label (kinds whose names become DNS
     names, pod hostnames or label values) or subdomain (other kinds);
   - every label value (objects and pod templates) is a valid label value;
   - the pod hostnames and Services controllers derive from workload names
     fit a DNS-1123 label: Indexed Job <job>-<index>, JobSet
     <jobset>-<replicatedJob>-<job>-<pod>, TrainJob <trainjob>-node-0-<pod>,
     PyTorchJob <job>-worker-<i> / <job>-master-0;
   - the project name is kept whole as the app.kubernetes.io/part-of value.
2. A 64-character name: exit 1, an error located at the metadata.name line
   that names the label and the maximum 63.

Usage: project_name.py <nemoc> <source dir>
"""
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
CAP = 63
# A realistic long name, padded with a run number to exactly CAP characters.
STEM = "nemotron4-340b-sft-applied-research-europe-west4-prod-run"
NAME = STEM + "1" * (CAP - len(STEM))
assert len(NAME) == CAP

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
# As compiler/output_verifier.cc kLabelNamedKinds.
LABEL_NAMED = {"Namespace", "Service", "Job", "CronJob", "PyTorchJob", "MPIJob", "TrainJob",
               "JobSet", "Deployment", "StatefulSet", "DaemonSet"}


def is_label(s):
    return isinstance(s, str) and 0 < len(s) <= 63 and DNS_LABEL.match(s) is not None


def rename(text, name):
    new, n = re.subn(r"(?m)^(metadata:\n(?:  #.*\n)*  name: )\S+", lambda m: m.group(1) + name, text, count=1)
    return new if n == 1 else None


def label_maps(node, path):
    """(path, labels) of every metadata.labels under node (pod templates too)."""
    if isinstance(node, dict):
        meta = node.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("labels"), dict):
            yield path + ".metadata.labels", meta["labels"]
        for k, v in node.items():
            yield from label_maps(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from label_maps(v, f"{path}[{i}]")


def hostnames(o):
    """Pod hostnames / Service names a controller derives from the object's name."""
    kind, name, spec = o["kind"], o["metadata"]["name"], o.get("spec", {})
    if kind == "Job" and spec.get("completionMode") == "Indexed":
        return [f"{name}-{spec.get('completions', 1) - 1}"]
    if kind == "JobSet":
        return [f"{name}-{rj['name']}-{rj.get('replicas', 1) - 1}-{rj['template']['spec'].get('completions', 1) - 1}"
                for rj in spec.get("replicatedJobs", [])]
    if kind == "TrainJob":
        return [f"{name}-node-0-{spec.get('trainer', {}).get('numNodes', 1) - 1}"]
    if kind == "PyTorchJob":
        reps = spec.get("pytorchReplicaSpecs", {})
        out = [f"{name}-master-0"]
        if "Worker" in reps:
            out.append(f"{name}-worker-{reps['Worker'].get('replicas', 1) - 1}")
        return out
    return []


def check_tree(root, errors):
    objects = 0
    for path in glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True):
        with open(path) as f:
            docs = list(yaml.safe_load_all(f))
        for o in docs:
            if not isinstance(o, dict) or "kind" not in o or not isinstance(o.get("metadata"), dict):
                continue
            if o["kind"] == "Kustomization" and o.get("apiVersion", "").startswith("kustomize.config"):
                continue
            objects += 1
            where = f"{os.path.relpath(path, root)} {o['kind']}"
            name = o["metadata"].get("name", "")
            ok = is_label(name) if o["kind"] in LABEL_NAMED else (
                isinstance(name, str) and len(name) <= 253 and DNS_SUBDOMAIN.match(name) is not None)
            if not ok:
                errors.append(f"{where}: name {name!r} ({len(name)})")
            for lpath, labels in label_maps(o, ""):
                for k, v in labels.items():
                    if not isinstance(v, str) or len(v) > 63 or not LABEL_VALUE.match(v):
                        errors.append(f"{where}{lpath}: label {k}={v!r}")
                    platform = os.path.relpath(path, root).split(os.sep)[0] == "_clusters"
                    if k == "app.kubernetes.io/part-of" and not platform and v != NAME:
                        errors.append(f"{where}{lpath}: part-of {v!r} is not the project name")
            for h in hostnames(o):
                if not is_label(h):
                    errors.append(f"{where}: derived hostname {h!r} ({len(h)})")
    return objects


def main():
    specs = all_specs(SRC)
    errors, objects = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-project-name-") as tmp:
        for spec in specs:
            with open(spec) as f:
                text = rename(f.read(), NAME)
            if text is None:
                errors.append(f"{spec}: no metadata.name to rename")
                continue
            path = os.path.join(tmp, os.path.basename(spec))
            with open(path, "w") as f:
                f.write(text)
            out = os.path.join(tmp, "out-" + os.path.basename(spec))
            run = build(NEMOC, SRC, out, [path])
            if run.returncode != 0:
                errors.append(f"{spec} named {NAME} ({CAP}): exit {run.returncode}\n{run.stderr}")
                continue
            objects += check_tree(os.path.join(out, NAME), errors)

        # One character over the cap: a located error at metadata.name, exit 1.
        with open(os.path.join(SRC, "examples", "gpt-tp2-trainjob.yaml")) as f:
            text = rename(f.read(), NAME + "2")
        path = os.path.join(tmp, "too-long.yaml")
        with open(path, "w") as f:
            f.write(text)
        line = text.splitlines().index("  name: " + NAME + "2") + 1
        run = build(NEMOC, SRC, os.path.join(tmp, "too-long"), [path])
        if run.returncode != 1:
            errors.append(f"{CAP + 1} characters: exit {run.returncode}, expected 1")
        located = f"{path}:{line}:9: error: metadata.name"
        if located not in run.stderr:
            errors.append(f"{CAP + 1} characters: no error located at {located}:\n{run.stderr}")
        for needed in ("63", "app.kubernetes.io/part-of"):
            if needed not in run.stderr:
                errors.append(f"{CAP + 1} characters: the error does not name {needed!r}:\n{run.stderr}")
        if os.path.exists(os.path.join(tmp, "too-long", NAME + "2")):
            errors.append(f"{CAP + 1} characters: a tree was written")

    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(specs)} specs named with {CAP} characters, {objects} objects checked; "
          f"{CAP + 1} refused; {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
