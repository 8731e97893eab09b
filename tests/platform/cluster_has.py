#!/usr/bin/python3
"""What a cluster already runs: nemoc installs nothing for it, and says how to check it (issue #43
item 1, field review D4 and B22, decision F12).

  1. For each profile, an example's target with every platform component declared as already on
     the cluster (targets[].clusterHas: {<component>: <its pinned version>}): its cluster bundle
     installs nothing -- no component Application (Argo CD), no component GitRepository,
     HelmRelease or Kustomization (Flux) -- and its SUMMARY.md "The cluster must already have"
     lists every CRD and every extended resource the project tree uses, each with a check that
     names exactly it: `kubectl get crd <name>` with the CRD's name in ../shared/kube-schemas
     (index.json `crd`), or the nodes' `.status.allocatable.<resource>`.
  2. Every CRD check in every SUMMARY.md of out/ and tests/golden names a CRD as kube-schemas
     does (no made-up plural).
  3. B22, no takeover: on gke-a4 (Cluster Toolkit's A4 blueprint installs Kueue and JobSet as Helm
     releases kueue in kueue-system and jobset in jobset-system:
     GoogleCloudPlatform/cluster-toolkit v1.95.0 modules/management/kubectl-apply/main.tf:204-213,
     271-280), no bundle of out/ installs a release of those names or into those namespaces.
  4. Refusals, located: a declared Kueue older than the API nemoc's objects use
     (kueue.x-k8s.io/v1beta2, Kueue v0.15.0), and two targets naming one cluster that disagree on
     what it runs (one bundle would install what the other says is there).

usage: cluster_has.py <nemoc> <source dir>
"""
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build, bundle_helm_installs, missing, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], sys.argv[2]
INDEX = os.path.join(SRC, "..", "shared", "kube-schemas", "index.json")
BUILTIN_GROUPS = {"", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
                  "networking.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "coordination.k8s.io"}
PLAIN_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage"}
TOOLKIT_RELEASES = {("kueue", "kueue-system"), ("jobset", "jobset-system")}


def crd_names():
    index = json.load(open(INDEX))
    out = {}
    for s in index["schemas"]:
        crd = (s.get("source") or {}).get("crd")
        if crd:
            out[s["apiVersion"].split("/")[0] + "/" + s["kind"]] = crd
    return out


def must_have(summary):
    """[(what, [names], [checks])] of SUMMARY.md's "The cluster must already have" table."""
    text = open(summary).read()
    m = re.search(r"^\| The cluster must already have \| Provides \| Check \|\n\|---\|---\|---\|\n((?:\|.*\n)*)", text, re.M)
    rows = []
    for line in (m.group(1).splitlines() if m else []):
        cells = line.split(" | ")
        rows.append((cells[0][2:], re.findall(r"`([^`]+)`", cells[-2]), re.findall(r"`([^`]+)`", cells[-1])))
    return rows


def used(tree):
    """CRDs (group/Kind) and extended resources the stage objects use."""
    kinds, resources = set(), set()

    def walk(node):
        if isinstance(node, dict):
            for key in ("requests", "limits"):
                if isinstance(node.get(key), dict):
                    resources.update(n for n in node[key] if n not in PLAIN_RESOURCES)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    for path in glob.glob(os.path.join(tree, "[0-9][0-9]-*", "*.yaml")):
        if os.path.basename(path) == "kustomization.yaml":
            continue
        for o in yaml.safe_load_all(open(path)):
            if not o:
                continue
            group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
            if group not in BUILTIN_GROUPS:
                kinds.add(f"{group}/{o['kind']}")
            walk(o)
    return kinds, resources


def check_names(check, crds):
    """What a check names: ('crd', name) / ('resource', name) / (None, check)."""
    m = re.fullmatch(r"kubectl get crd (\S+)", check)
    if m:
        return "crd", m.group(1)
    m = re.search(r"\.status\.allocatable\.(\S+)$", check)
    if m:
        return "resource", m.group(1).replace("\\.", ".")
    return None, check


def installs(plat):
    """Component install objects of a cluster bundle: (file, kind, name). Not installs: the
    Applications/Kustomizations of the bundle's own objects (a source path in out/_clusters), the
    roots and the bundle's own GitRepository (a branch, not a component's tag)."""
    out = []
    for f in glob.glob(os.path.join(plat, "apps", "argocd", "application-*.yaml")):
        o = yaml.safe_load(open(f))
        if not o["spec"]["source"].get("path", "").startswith("out/_clusters/"):
            out.append((f, o["kind"], o["metadata"]["name"]))
    for f in glob.glob(os.path.join(plat, "flux", "**", "*.yaml"), recursive=True):
        if os.path.basename(f) == "kustomization.yaml":
            continue
        o = yaml.safe_load(open(f))
        if o["kind"] == "GitRepository" and "branch" in o["spec"].get("ref", {}):
            continue
        if o["kind"] == "Kustomization" and ("/platform/objects" in o["spec"]["path"]
                                             or o["spec"]["path"].rstrip("/").endswith("/platform/flux")):
            continue
        out.append((f, o["kind"], o["metadata"]["name"]))
    return out


def main():
    if not os.path.exists(INDEX):
        missing("../shared/kube-schemas")
    crds = crd_names()
    releases = json.load(open(os.path.join(SRC, "libsonnet", "platform_releases.json")))["components"]
    every = {n: r["version"] for n, r in releases.items()}
    errors, proved = [], {}
    with tempfile.TemporaryDirectory(prefix="nemoc-cluster-has-") as tmp:
        # 1. per profile: every component already there
        specs = []
        for path in sorted(glob.glob(os.path.join(SRC, "examples", "*.yaml"))):
            doc = yaml.safe_load(open(path))
            if "gitops" not in doc["spec"]:
                continue  # no cluster bundle to prove anything about
            for t in doc["spec"]["targets"]:
                if t["profile"] in proved:
                    continue
                spec = copy.deepcopy(doc)
                spec["metadata"]["name"] = doc["metadata"]["name"] + "-has"
                spec["spec"]["targets"] = [dict(copy.deepcopy(t), clusterHas=dict(every))]
                spec["spec"]["gitops"]["clusters"] = {k: v for k, v in (spec["spec"]["gitops"].get("clusters") or {}).items()
                                                      if k == t["name"]}
                spec["spec"]["gitops"]["platform"] = True
                if spec["spec"]["gitops"].get("argocd", {}).get("applicationSet"):
                    spec["spec"]["gitops"]["argocd"]["applicationSet"] = False
                p = os.path.join(tmp, f"{t['profile']}.yaml")
                with open(p, "w") as f:
                    yaml.safe_dump(spec, f, sort_keys=False)
                proved[t["profile"]] = (p, spec["metadata"]["name"], t["name"])
        out = os.path.join(tmp, "out")
        run = build(NEMOC, SRC, out, [p for p, _, _ in proved.values()])
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for profile, (_, project, target) in sorted(proved.items()):
            tree = os.path.join(out, project, target)
            cluster = json.load(open(os.path.join(tree, "gitops", "cluster-bundle.json")))["cluster"]
            for f, kind, name in installs(os.path.join(out, "_clusters", cluster, "platform")):
                errors.append(f"{profile}: every component is on the cluster, yet its bundle installs {kind} {name} "
                              f"({os.path.relpath(f, out)})")
            rows = must_have(os.path.join(tree, "SUMMARY.md"))
            named = {}
            for what, names, checks in rows:
                if len(names) != len(checks):
                    errors.append(f"{profile}: SUMMARY.md row {what[:60]!r} has {len(names)} names and {len(checks)} checks")
                for n, c in zip(names, checks):
                    named[n] = check_names(c, crds)
            kinds, resources = used(tree)
            for k in sorted(kinds):
                want = crds.get(k)
                if k not in named:
                    errors.append(f"{profile}: the tree uses {k}, which SUMMARY.md's \"The cluster must already have\" does not list")
                elif want and named[k] != ("crd", want):
                    errors.append(f"{profile}: {k} is checked with {named[k]}, not `kubectl get crd {want}`")
            for r in sorted(resources):
                if r not in named:
                    errors.append(f"{profile}: the tree requests {r}, which SUMMARY.md's \"The cluster must already have\" does not list")
                elif named[r] != ("resource", r):
                    errors.append(f"{profile}: {r} is checked with {named[r]}, which does not name that resource")
            print(f"{profile}: {len(kinds)} CRDs and {len(resources)} extended resources listed with their checks")
        # 2. every CRD check of the committed trees
        crd_checks = 0
        for summary in sorted(glob.glob(os.path.join(SRC, "out", "*", "*", "SUMMARY.md"))
                              + glob.glob(os.path.join(SRC, "tests", "golden", "*", "*", "SUMMARY.md"))):
            for what, names, checks in must_have(summary):
                for n, c in zip(names, checks):
                    kind, name = check_names(c, crds)
                    if kind == "crd":
                        crd_checks += 1
                        if crds.get(n) and crds[n] != name:
                            errors.append(f"{os.path.relpath(summary, SRC)}: {n} checked as CRD {name}; kube-schemas names it {crds[n]}")
        if crd_checks < 10:
            errors.append(f"too few CRD checks in the committed trees: {crd_checks}")
        # 3. B22: no gke-a4 bundle takes over Cluster Toolkit's releases
        for cj in glob.glob(os.path.join(SRC, "out", "_clusters", "*", "cluster.json")):
            plat = os.path.join(os.path.dirname(cj), "platform")
            profile = (json.load(open(cj)) or {}).get("profile")
            if profile != "gke-a4":
                continue
            for install in bundle_helm_installs(plat):
                release, ns = install["release"], install["namespace"]
                if release in {r for r, _ in TOOLKIT_RELEASES} or ns in {n for _, n in TOOLKIT_RELEASES}:
                    errors.append(f"{os.path.relpath(install['file'], SRC)}: installs Helm release {release} in {ns}, which "
                                  "Cluster Toolkit's A4 blueprint owns on gke-a4 clusters (B22)")
        # 4. refusals, located
        p, project, target = proved["gke-a4"]
        spec = yaml.safe_load(open(p))
        spec["spec"]["targets"][0]["clusterHas"] = {"kueue": "v0.14.2"}
        old = os.path.join(tmp, "old-kueue.yaml")
        with open(old, "w") as f:
            yaml.safe_dump(spec, f, sort_keys=False)
        line = next(i for i, l in enumerate(open(old), 1) if "kueue: v0.14.2" in l)
        r = build(NEMOC, SRC, os.path.join(tmp, "out-old"), [old])
        if r.returncode != 1 or not re.search(rf"{re.escape(old)}:{line}:\d+: error: .*kueue v0\.14\.2, older than v0\.15\.0", r.stderr):
            errors.append(f"a declared Kueue v0.14.2 is not refused at {old}:{line}: exit {r.returncode}\n{r.stderr}")
        spec = yaml.safe_load(open(p))
        t = spec["spec"]["targets"][0]
        t["cluster"] = "shared-a4"
        # Its own namespace: two targets writing one object on one cluster are
        # refused on their own (spec.targets-collide, #45); this is about clusterHas.
        two = dict(copy.deepcopy(t), name=t["name"] + "-two", clusterHas={"kueue": False},
                   overrides={"namespace": spec["spec"]["namespace"] + "-two"})
        spec["spec"]["targets"].append(two)
        if "gitops" in spec["spec"] and t["name"] in (spec["spec"]["gitops"].get("clusters") or {}):
            spec["spec"]["gitops"]["clusters"][two["name"]] = spec["spec"]["gitops"]["clusters"][t["name"]]
        both = os.path.join(tmp, "disagree.yaml")
        with open(both, "w") as f:
            yaml.safe_dump(spec, f, sort_keys=False)
        r = build(NEMOC, SRC, os.path.join(tmp, "out-two"), [both])
        if r.returncode != 1 or not re.search(rf"{re.escape(both)}:\d+:\d+: error: cluster 'shared-a4': target \S+ has components already on the cluster", r.stderr):
            errors.append(f"two targets disagreeing on what cluster shared-a4 runs are not refused, located: exit {r.returncode}\n{r.stderr}")
    if len(proved) < 3:
        errors.append(f"only {sorted(proved)} profiles proved")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(proved)} profiles with every component already there, {crd_checks} CRD checks of the committed "
          f"trees: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
