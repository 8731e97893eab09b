#!/usr/bin/python3
"""Every queued workload nemoc emits is one Kueue v0.19.2 admits (issue #15: B2, B3, B4, B5, F1).

Builds every example and test spec, then replays, independently of nemoc's Jsonnet, what
kubernetes-sigs/kueue v0.19.2 does with each workload labelled kueue.x-k8s.io/queue-name:
  - the queue is a LocalQueue in the workload's own namespace, emitted in the same target
    tree (pkg/controller/jobframework/reconciler.go: the label names a LocalQueue of the
    job's namespace; without it the workload stays suspended) -- B2;
  - pod sets as the jobframework builds them (Job: parallelism; JobSet: replicas x
    parallelism per replicatedJob; PyTorchJob: one per replica type; TrainJob: numNodes x
    resourcesPerNode), a pod's requests = sum of its containers (requests, else limits);
  - every requested resource is covered by the ClusterQueue
    (pkg/scheduler/flavorassigner/flavorassigner.go:1071 "resource %s unavailable in
    ClusterQueue") -- the ClusterQueue in the tree when nemoc emits it (then also: the
    flavor exists, its nodeLabels agree with the pods' nodeSelector, the total fits the
    nominalQuota, a topology annotation names a level of the flavor's Topology), else the
    spec's kueue.covers -- B3;
  - a required topology at a level of single nodes holds one pod
    (apis/kueue/v1beta1/topology_types.go:22-28) -- B4;
  - the workload's framework is an enabled integration of the Kueue that runs: the one the
    tree's platform bundle installs (its manager config), else the spec's kueue.integrations or
    the defaults (charts/kueue/values.yaml:165-184: kubeflow.org/pytorchjob is off) -- B5, F2; PyTorchJob pod sets under topology
    share a podset-group-name (topology_types.go:82-84).

Usage: admission.py <nemoc> <source dir>
"""
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build_all, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
QUEUE = "kueue.x-k8s.io/queue-name"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
GROUP = "kueue.x-k8s.io/podset-group-name"
# Node labels whose every domain is a single node (GKE A4: a VM takes its whole host).
SINGLE_NODE_LEVELS = {"kubernetes.io/hostname", "cloud.google.com/gce-topology-host"}
# kubernetes-sigs/kueue v0.19.2 charts/kueue/values.yaml:165-184 (enabled by default).
DEFAULT_INTEGRATIONS = {
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
    "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob",
    "pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
}
INTEGRATION = {
    ("batch", "Job"): "batch/job",
    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/jobset",
    ("kubeflow.org", "PyTorchJob"): "kubeflow.org/pytorchjob",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/trainjob",
    ("kubeflow.org", "MPIJob"): "kubeflow.org/mpijob",
}
UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50,
         "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "m": 0.001}


def amount(q):
    if isinstance(q, (int, float)):
        return q
    s = str(q)
    for unit in sorted(UNITS, key=len, reverse=True):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * UNITS[unit]
    return float(s)


def container_requests(c):
    r = c.get("resources") or {}
    out = {k: amount(v) for k, v in (r.get("limits") or {}).items()}
    out.update({k: amount(v) for k, v in (r.get("requests") or {}).items()})
    return out


def pod_requests(pod_spec):
    total = {}
    for c in pod_spec.get("containers", []):
        for k, v in container_requests(c).items():
            total[k] = total.get(k, 0) + v
    for c in pod_spec.get("initContainers", []) or []:  # init containers run alone: max
        for k, v in container_requests(c).items():
            total[k] = max(total.get(k, 0), v)
    return total


def pod_sets(o):
    """[(name, count, requests, pod template metadata, pod spec)] as Kueue's jobframework sees them."""
    group, kind = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else "", o["kind"]
    spec = o["spec"]
    if (group, kind) == ("batch", "Job"):
        t = spec["template"]
        return [("main", spec.get("parallelism", 1), pod_requests(t["spec"]), t.get("metadata", {}), t["spec"])]
    if (group, kind) == ("jobset.x-k8s.io", "JobSet"):
        out = []
        for rj in spec["replicatedJobs"]:
            js = rj["template"]["spec"]
            t = js["template"]
            out.append((rj["name"], rj.get("replicas", 1) * js.get("parallelism", 1),
                        pod_requests(t["spec"]), t.get("metadata", {}), t["spec"]))
        return out
    if (group, kind) == ("kubeflow.org", "PyTorchJob"):
        return [(n, rs.get("replicas", 1), pod_requests(rs["template"]["spec"]),
                 rs["template"].get("metadata", {}), rs["template"]["spec"])
                for n, rs in sorted(spec["pytorchReplicaSpecs"].items())]
    if (group, kind) == ("trainer.kubeflow.org", "TrainJob"):
        tr = spec["trainer"]
        req = container_requests({"resources": tr.get("resourcesPerNode", {})})
        return [("node", tr.get("numNodes", 1), req, {}, {})]
    raise AssertionError(f"queued workload of unknown kind {kind}")


def spec_targets():
    """(project, target) -> the target's kueue block as written in the spec."""
    out = {}
    specs = all_specs(SRC)
    for path in specs:
        with open(path) as f:
            doc = yaml.safe_load(f)
        for t in doc["spec"]["targets"]:
            out[(doc["metadata"]["name"], t["name"])] = t.get("kueue")
    return specs, out


def main():
    specs, kueue_of = spec_targets()
    errors = []
    queued_count, per_profile, trees_with_cq = 0, set(), 0
    bundles_read = [0]
    with tempfile.TemporaryDirectory(prefix="nemoc-kueue-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for tree in sorted(glob.glob(os.path.join(out, "*", "*"))):
            project, target = tree.split(os.sep)[-2:]
            objects = []
            for path in sorted(glob.glob(os.path.join(tree, "[0-9][0-9]-*", "*.yaml"))):
                with open(path) as f:
                    for o in yaml.safe_load_all(f):
                        if o and o.get("kind") != "Kustomization":
                            objects.append((os.path.relpath(path, out), o))
            by_kind = {}
            for rel, o in objects:
                by_kind.setdefault(o["kind"], {})[(o["metadata"].get("namespace"), o["metadata"]["name"])] = o
            if by_kind.get("ClusterQueue"):
                trees_with_cq += 1
            spec_kueue = kueue_of.get((project, target))
            integrations = set(spec_kueue.get("integrations", DEFAULT_INTEGRATIONS)) if spec_kueue else DEFAULT_INTEGRATIONS
            # Where the target's cluster bundle installs Kueue (<out>/_clusters/<cluster>/platform,
            # named by the target's gitops/cluster-bundle.json), the Kueue that runs is that one:
            # its chart reads managerConfig.controllerManagerConfigYaml with fromYaml
            # (charts/kueue/templates/manager/manager-config.yaml), the chart default otherwise.
            bundle = ""
            contribution = os.path.join(tree, "gitops", "cluster-bundle.json")
            if os.path.exists(contribution):
                with open(contribution) as f:
                    cluster = json.load(f)["cluster"]
                bundle = os.path.join(os.path.dirname(os.path.dirname(tree)), "_clusters", cluster,
                                      "platform", "flux", "components", "kueue",
                                      "helmrelease-platform-kueue.yaml")
            if bundle and os.path.exists(bundle):
                with open(bundle) as f:
                    values = yaml.safe_load(f)["spec"].get("values") or {}
                text = (values.get("managerConfig") or {}).get("controllerManagerConfigYaml")
                integrations = set(yaml.safe_load(text)["integrations"]["frameworks"]) if text else DEFAULT_INTEGRATIONS
                bundles_read[0] += 1
            for rel, o in objects:
                labels = o["metadata"].get("labels") or {}
                if QUEUE not in labels:
                    continue
                queued_count += 1
                ns = o["metadata"].get("namespace")
                where = f"{rel}"
                if spec_kueue is None:
                    errors.append(f"{where}: queued but the spec's target has no kueue")
                    continue
                per_profile.add(target)
                lq = by_kind.get("LocalQueue", {}).get((ns, labels[QUEUE]))
                if lq is None:  # B2
                    errors.append(f"{where}: no LocalQueue {labels[QUEUE]} in namespace {ns} (B2)")
                    continue
                group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
                integration = INTEGRATION.get((group, o["kind"]))
                if integration not in integrations:  # B5
                    errors.append(f"{where}: {integration} is not an enabled Kueue integration (B5)")
                cq_name = lq["spec"]["clusterQueue"]
                cq = by_kind.get("ClusterQueue", {}).get((None, cq_name))
                sets = pod_sets(o)
                totals = {}
                for name, count, req, meta, pod in sets:
                    for k, v in req.items():
                        totals[k] = totals.get(k, 0) + count * v
                    ann = (meta or {}).get("annotations") or {}
                    level = ann.get(REQUIRED)
                    if level in SINGLE_NODE_LEVELS and count > 1:  # B4
                        errors.append(f"{where}: pod set {name} requires {count} pods in one {level} domain (B4)")
                if o["kind"] == "PyTorchJob" and any(
                        REQUIRED in (m or {}).get("annotations", {}) or PREFERRED in (m or {}).get("annotations", {})
                        for _, _, _, m, _ in sets):
                    groups = {((m or {}).get("annotations") or {}).get(GROUP) for _, _, _, m, _ in sets}
                    if len(groups) != 1 or None in groups:
                        errors.append(f"{where}: PyTorchJob pod sets under topology without one podset-group-name")
                if cq is None:
                    covered = set(spec_kueue.get("covers", []))
                    if spec_kueue.get("clusterObjects"):
                        errors.append(f"{where}: clusterObjects but no ClusterQueue {cq_name} in the tree")
                else:
                    covered = {r for g in cq["spec"]["resourceGroups"] for r in g["coveredResources"]}
                    flavors = [f for g in cq["spec"]["resourceGroups"] for f in g["flavors"]]
                    for f in flavors:
                        rf = by_kind.get("ResourceFlavor", {}).get((None, f["name"]))
                        if rf is None:
                            errors.append(f"{where}: ClusterQueue {cq_name} names a missing ResourceFlavor {f['name']}")
                            continue
                        quota = {r["name"]: amount(r["nominalQuota"]) for r in f["resources"]}
                        for k, v in totals.items():
                            if k in quota and v > quota[k]:
                                errors.append(f"{where}: requests {k} {v} > nominalQuota {quota[k]} of {cq_name}")
                        labels_rf = (rf.get("spec") or {}).get("nodeLabels") or {}
                        for _, _, _, _, pod in sets:
                            for k, v in (pod.get("nodeSelector") or {}).items():
                                if k in labels_rf and labels_rf[k] != v:
                                    errors.append(f"{where}: nodeSelector {k}={v} conflicts with flavor {f['name']}")
                        for _, _, _, meta, _ in sets:
                            ann = (meta or {}).get("annotations") or {}
                            level = ann.get(REQUIRED) or ann.get(PREFERRED)
                            if level:
                                topo = by_kind.get("Topology", {}).get((None, (rf.get("spec") or {}).get("topologyName")))
                                if topo is None or level not in [lv["nodeLabel"] for lv in topo["spec"]["levels"]]:
                                    errors.append(f"{where}: topology level {level} not in the flavor's Topology")
                for k in sorted(totals):  # B3
                    if k not in covered:
                        errors.append(f"{where}: resource {k} unavailable in ClusterQueue {cq_name} (B3)")
    if queued_count < 10 or trees_with_cq < 2 or len(per_profile) < 4 or bundles_read[0] < 2:
        errors.append(f"too few queued workloads to prove anything: {queued_count} workloads, "
                      f"{trees_with_cq} trees with nemoc's ClusterQueue, targets {sorted(per_profile)}, "
                      f"{bundles_read[0]} Kueue bundles read")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{queued_count} queued workloads in {len(per_profile)} targets, {trees_with_cq} with nemoc's ClusterQueue: "
          f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
