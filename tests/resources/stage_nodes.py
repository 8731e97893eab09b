#!/usr/bin/python3
"""Single-node stages run on the nodes the target gives them (B19), engines where they were built.

Builds every example and test spec. For each target: a stage named in targets[].stageNodes runs
with exactly that node selection (instanceType -> node.kubernetes.io/instance-type, plus
nodeSelector); other stages keep the training nodes; the TensorRT-LLM build and Triton always
select the same nodes (an engine runs only on the GPU model it was built on). At least one
target must move a stage (examples/llama31-8b-pipeline.yaml eks: engine + Triton on g6e).
Usage: stage_nodes.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build_all, pod_specs, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
DIRS = {"20-data-prep": "dataPrep", "25-import-model": "importModel", "35-merge-lora": "mergeLora",
        "40-evaluate": "evaluate",
        "50-convert": "convert", "60-tensorrt-llm": "tensorrtLLM", "70-serve": "serve"}


def selectors(obj):
    return [pod.get("nodeSelector") or {} for pod in pod_specs(obj)]


def main():
    specs = all_specs(SRC)
    errors, moved = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-stage-nodes-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for spec in specs:
            with open(spec) as f:
                doc = yaml.safe_load(f)
            for t in doc["spec"]["targets"]:
                tree = os.path.join(out, doc["metadata"]["name"], t["name"])
                nodes = t.get("stageNodes") or {}
                train_sel = None
                for path in glob.glob(os.path.join(tree, "30-train", "*.yaml")):
                    with open(path) as f:
                        sels = selectors(yaml.safe_load(f))
                    if sels:
                        train_sel = sels[0]
                seen = {}
                for d, key in DIRS.items():
                    for path in glob.glob(os.path.join(tree, d, "*.yaml")):
                        with open(path) as f:
                            for sel in selectors(yaml.safe_load(f)):
                                seen[key] = sel
                                where = os.path.relpath(path, out)
                                if key in nodes:
                                    moved += 1
                                    want = dict(nodes[key].get("nodeSelector") or {})
                                    if "instanceType" in nodes[key]:
                                        want["node.kubernetes.io/instance-type"] = nodes[key]["instanceType"]
                                    if sel != want:
                                        errors.append(f"{where}: nodeSelector {sel}, stageNodes.{key} asks {want}")
                                elif train_sel is not None and t["profile"] == "eks-efa" and \
                                        sel.get("node.kubernetes.io/instance-type") != t.get("instanceType"):
                                    errors.append(f"{where}: left the training instance type without stageNodes")
                if "tensorrtLLM" in seen and "serve" in seen and seen["tensorrtLLM"] != seen["serve"]:
                    errors.append(f"{doc['metadata']['name']}/{t['name']}: engine built on {seen['tensorrtLLM']}, served on {seen['serve']}")
    if moved < 2:
        errors.append(f"too little to prove anything: {moved} stage pods moved by stageNodes")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{moved} stage pods on their stageNodes: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
