#!/usr/bin/python3
"""Single-node stages run on the nodes the target gives them (B19), engines where they were built.

Builds every example and test spec. For each target: a stage named in targets[].stageNodes runs
with exactly that node selection (instanceType -> node.kubernetes.io/instance-type, plus
nodeSelector); other stages keep the training nodes; the TensorRT-LLM build and Triton always
select the same nodes (an engine runs only on the GPU model it was built on). At least one
target must move a stage (examples/llama31-8b-pipeline.yaml eks: engine + Triton on g6e).

B20: every instance type a GPU pod selects is one the cluster bundle's NVIDIA device plugin runs on
(its node.kubernetes.io/instance-type affinity, k8s-device-plugin v0.20.0
deployments/helm/nvidia-device-plugin/templates/daemonset-device-plugin.yml:268): on another type
nvidia.com/gpu is never advertised and the pod stays Pending. A stage node type the plugin does not
serve is refused at its instanceType (profile.stage-instance-type).
Usage: stage_nodes.py <nemoc> <source dir>
"""
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build, build_all, containers, mappings, pod_specs, require_yaml, resources_of  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
DIRS = {"20-data-prep": "dataPrep", "25-import-model": "importModel", "35-merge-lora": "mergeLora",
        "40-evaluate": "evaluate",
        "50-convert": "convert", "60-tensorrt-llm": "tensorrtLLM", "70-serve": "serve"}


def selectors(obj):
    return [pod.get("nodeSelector") or {} for pod in pod_specs(obj)]


def plugin_instance_types(out, cluster):
    """The instance types the cluster bundle's NVIDIA device plugin selects (None: no such affinity)."""
    found = None
    for path in glob.glob(os.path.join(out, "_clusters", cluster, "**", "*nvidia-device-plugin*.yaml"), recursive=True):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                # Flux's HelmRelease spec.values, Argo CD's source.helm.valuesObject: both mappings.
                for m in mappings(doc):
                    if m.get("key") == "node.kubernetes.io/instance-type" and m.get("operator") == "In":
                        found = set(found or ()) | set(m.get("values") or ())
    return found


def gpu_instance_types(tree):
    """{instance type: file} of every pod under tree that requests nvidia.com/gpu."""
    types = {}
    for path in glob.glob(os.path.join(tree, "*", "*.yaml")):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                for pod in pod_specs(doc):
                    gpus = any("nvidia.com/gpu" in (resources_of(c).get("limits") or {}) for c in containers(pod))
                    kind = (pod.get("nodeSelector") or {}).get("node.kubernetes.io/instance-type")
                    if gpus and kind:
                        types[kind] = path
    return types


def refused_stage_type(errors):
    """A stage node type the device plugin does not serve is a located error."""
    example = os.path.join(SRC, "examples", "llama31-8b-pipeline.yaml")
    text = open(example).read()
    bad = text.replace("serve: {instanceType: g6e.4xlarge}", "serve: {instanceType: m6i.4xlarge}")
    if bad == text:
        errors.append("the example no longer puts serve on g6e.4xlarge: update refused_stage_type")
        return
    with tempfile.TemporaryDirectory(prefix="nemoc-stage-type-") as tmp:
        spec = os.path.join(tmp, "bad.yaml")
        with open(spec, "w") as f:
            f.write(bad)
        run = build(NEMOC, SRC, os.path.join(tmp, "out"), [spec])
        line = bad[:bad.index("m6i.4xlarge")].count("\n") + 1
        want = re.compile(re.escape(spec) + ":%d:\\d+: error: target eks: stageNodes.serve: instance type m6i.4xlarge "
                          "is not a GPU type the cluster bundle's NVIDIA device plugin serves" % line)
        if run.returncode != 1 or not want.search(run.stderr) or os.path.exists(os.path.join(tmp, "out")):
            errors.append(f"a stage on m6i.4xlarge: exit {run.returncode}, expected the located refusal:\n{run.stderr[-1500:]}")


def main():
    specs = all_specs(SRC)
    errors, moved, served = [], 0, 0
    refused_stage_type(errors)
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
                # B20: the device plugin of the target's cluster runs where its GPU pods run.
                summary = open(os.path.join(tree, "SUMMARY.md")).read()
                cluster = re.search(r"\(cluster `([^`]+)`", summary)
                plugin = plugin_instance_types(out, cluster.group(1)) if cluster else None
                if plugin is not None:
                    for kind, path in sorted(gpu_instance_types(tree).items()):
                        served += 1
                        if kind not in plugin:
                            errors.append(f"{os.path.relpath(path, out)}: GPU pod on {kind}, which the NVIDIA device "
                                          f"plugin of cluster {cluster.group(1)} does not select (B20)")
    if moved < 2:
        errors.append(f"too little to prove anything: {moved} stage pods moved by stageNodes")
    if served < 2:
        errors.append(f"too little to prove anything: {served} GPU instance types checked against a device plugin")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{moved} stage pods on their stageNodes, {served} GPU instance types served by their cluster's "
          f"device plugin: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
