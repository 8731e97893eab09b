#!/usr/bin/python3
"""Everything a target's workloads use is installed by its platform bundle or named as a cluster
prerequisite in its SUMMARY.md (issue #17 acceptance; F1/F3 of field-review.md).

Builds every example and test spec, reads each target's SUMMARY.md "## Platform" tables (the
backticked names in their Provides column) and collects what the target's stage objects use:

  * extended resources in container requests/limits (and a TrainJob's resourcesPerNode), other
    than cpu, memory and ephemeral-storage;
  * CSI drivers (inline volumes and PersistentVolumes) and PVC storage classes; claims a pod
    mounts that the tree does not create (PersistentVolumeClaim/<name>);
  * custom kinds (group/Kind outside the built-in API groups);
  * Multus networks (k8s.v1.cni.cncf.io/networks) and GKE multi-networking networks
    (networking.gke.io/interfaces, except the pod network `default`) as network/<name>;
  * metrics: a Prometheus for ServiceMonitors/PodMonitors/PrometheusRules, the custom metrics API
    for each HPA Pods metric (custom.metrics.k8s.io/<name>), DCGM series in alert expressions
    (DCGM_FI_*, the exporter must keep the workload's pod labels).

Each must be provided by one of the two lists ("prefix*" provides every name with that prefix).
And the converse (field review B24): every row of "The cluster must already have" provides at
least one name the tree uses -- a prerequisite nothing needs sends the operator to install it.
Usage: cluster_needs.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, containers, mappings, require_yaml, resources_of  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
# "storage": a PersistentVolumeClaim's spec.resources (containers() sees every `resources`).
PLAIN_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage"}
BUILTIN_GROUPS = {"", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
                  "networking.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "coordination.k8s.io"}
MONITORING_KINDS = {"ServiceMonitor", "PodMonitor", "PrometheusRule"}


def provided_by_summary(path):
    """The backticked names of the Provides column of SUMMARY.md's Platform tables."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"^## Platform\n(.*?)^## ", text, re.M | re.S)
    if not m:
        return None
    names = set()
    for line in m.group(1).splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) >= 2 and not line.startswith("|---"):
            names.update(re.findall(r"`([^`]+)`", cells[1]))  # Provides (a third column: the checks)
    return names


def used_by(tree):
    """name -> first file that uses it, over the target's stage objects."""
    used = {}

    def use(name, where):
        used.setdefault(name, where)

    made_claims = set()
    for path in sorted(glob.glob(os.path.join(tree, "[0-9][0-9]-*", "*.yaml"))):
        with open(path) as f:
            made_claims |= {d["metadata"]["name"] for d in yaml.safe_load_all(f)
                            if d and d.get("kind") == "PersistentVolumeClaim"}

    for path in sorted(glob.glob(os.path.join(tree, "[0-9][0-9]-*", "*.yaml"))):
        if os.path.basename(path) == "kustomization.yaml":
            continue
        where = os.path.relpath(path, tree)
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        for obj in docs:
            api = obj.get("apiVersion", "")
            group = api.split("/")[0] if "/" in api else ""
            if group not in BUILTIN_GROUPS:
                use(f"{group}/{obj['kind']}", where)
            if obj["kind"] in MONITORING_KINDS:
                use("Prometheus", where)
            if obj["kind"] == "HorizontalPodAutoscaler":
                for metric in obj["spec"].get("metrics", []):
                    if metric["type"] == "Pods":
                        use("custom.metrics.k8s.io/" + metric["pods"]["metric"]["name"], where)
            if obj["kind"] == "PrometheusRule":
                for series in re.findall(r"\b(DCGM_FI_[A-Z0-9_]+)", json.dumps(obj["spec"])):
                    use(series, where)
            if obj["kind"] == "PersistentVolumeClaim" and obj["spec"].get("storageClassName"):
                use(obj["spec"]["storageClassName"], where)
            if obj["kind"] == "PersistentVolume" and "csi" in obj["spec"]:
                use(obj["spec"]["csi"]["driver"], where)
            for c in containers(obj):
                res = resources_of(c)
                for key in ("requests", "limits"):
                    for name in (res.get(key) or {}):
                        if name not in PLAIN_RESOURCES:
                            use(name, where)
            for m in mappings(obj):
                pvc = m.get("persistentVolumeClaim")
                if isinstance(pvc, dict) and pvc.get("claimName") not in made_claims:
                    use("PersistentVolumeClaim/" + pvc["claimName"], where)  # one the cluster must have
                if isinstance(m.get("csi"), dict) and "driver" in m["csi"]:
                    use(m["csi"]["driver"], where)
                ann = m.get("annotations")
                if isinstance(ann, dict):
                    for n in str(ann.get("k8s.v1.cni.cncf.io/networks", "")).split(","):
                        if n.strip():
                            use("network/" + n.strip().split("@")[0], where)
                    if "networking.gke.io/interfaces" in ann:
                        for i in json.loads(ann["networking.gke.io/interfaces"]):
                            if i["network"] != "default":
                                use("network/" + i["network"], where)
    return used


def prerequisite_rows(path):
    """(what, [names]) of each row of SUMMARY.md's "The cluster must already have" table."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"^\| The cluster must already have \| Provides \| Check \|\n\|---\|---\|---\|\n((?:\|.*\n)*)", text, re.M)
    if not m:
        return []
    rows = []
    for line in m.group(1).splitlines():
        cells = line.split(" | ")
        rows.append((cells[0][2:], re.findall(r"`([^`]+)`", cells[1])))
    return rows


def covered(name, provided):
    return name in provided or any(p.endswith("*") and name.startswith(p[:-1]) for p in provided)


def main():
    errors, checked, targets = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="nemoc-cluster-needs-") as tmp:
        run = build_all(NEMOC, SRC, tmp)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for summary in sorted(glob.glob(os.path.join(tmp, "*", "*", "SUMMARY.md"))):
            if os.path.relpath(summary, tmp).startswith("_clusters" + os.sep):
                continue  # a cluster's bundle, not a target
            tree = os.path.dirname(summary)
            rel = os.path.relpath(tree, tmp)
            provided = provided_by_summary(summary)
            if provided is None:
                errors.append(f"{rel}/SUMMARY.md has no Platform section")
                continue
            targets += 1
            used = used_by(tree)
            for name, where in sorted(used.items()):
                checked += 1
                if not covered(name, provided):
                    errors.append(f"{rel}/{where}: uses {name}, which SUMMARY.md's Platform section "
                                  "neither installs nor names as a cluster prerequisite")
            # B24: and nothing is asked of the cluster that no object of the tree uses.
            for what, names in prerequisite_rows(summary):
                if not names or "-- not installed by nemoc" in what:
                    continue  # a description without names; a component (its needs chain: D4)
                if not any(covered(u, set([n])) for n in names for u in used):
                    errors.append(f"{rel}/SUMMARY.md: the cluster must already have \"{what}\" "
                                  f"(provides {', '.join(names) or 'nothing named'}), which no object of the tree uses")
    if targets < 10 or checked < 100:
        errors.append(f"too little to prove anything: {targets} targets, {checked} names")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{targets} targets, {checked} used names checked against their SUMMARY.md Platform "
          f"section: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
