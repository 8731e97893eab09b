#!/usr/bin/python3
"""One owner per object on a cluster (field review C20, issue #41 item 3).

Two projects that each apply one object fight over it: Argo CD reports SharedResourceWarning and
the two Applications flip its labels for ever (argo-cd v3.5.1 controller/state.go:804-812), and a
rename in one project prunes what the other still uses (kustomize-controller v1.9.4
kustomization_controller.go:1409). nemoc's rule: a Namespace belongs to the cluster bundle
(out/_clusters/<cluster>/platform/objects), which every project naming it contributes to
identically; everything else a project applies is its own.

Checks
  1. the committed out/: per cluster (cluster.json), every object key (group, kind, namespace,
     name) is applied by one owner only -- one target tree or the cluster bundle -- and no target
     tree whose cluster has a bundle holds a Namespace;
  2. two projects (the same example under two names) on one cluster in one namespace, built
     together and built one after the other into one output root: the bundle holds the Namespace
     once, neither project does, and no key has two owners.

usage: one_owner.py <repo> <nemoc>
"""
import os
import subprocess
import sys
import tempfile

import yaml


def objects_in(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".yaml") or f == "kustomization.yaml":
                continue
            for d in yaml.safe_load_all(open(os.path.join(dirpath, f))):
                if isinstance(d, dict) and "kind" in d and "metadata" in d:
                    group = d["apiVersion"].split("/")[0] if "/" in d["apiVersion"] else ""
                    key = (group, d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
                    out.setdefault(key, os.path.relpath(os.path.join(dirpath, f), root))
    return out


def check_root(out_root, failures, where):
    clusters = os.path.join(out_root, "_clusters")
    if not os.path.isdir(clusters):
        failures.append(f"{where}: no cluster bundles")
        return 0
    checked = 0
    for cluster in sorted(os.listdir(clusters)):
        meta = yaml.safe_load(open(os.path.join(clusters, cluster, "cluster.json")))
        owners = {}
        bundle = objects_in(os.path.join(clusters, cluster, "platform"))
        for key in bundle:
            owners.setdefault(key, []).append(f"_clusters/{cluster}")
        for target in meta["targets"]:
            tree = objects_in(os.path.join(out_root, target))
            for key, path in tree.items():
                owners.setdefault(key, []).append(target)
                if key[1] == "Namespace":
                    failures.append(f"{where}: {target}/{path}: a project tree applies Namespace {key[3]} "
                                    f"(cluster {cluster} has a bundle, which owns it)")
        namespaces = [k for k in bundle if k[1] == "Namespace"]
        if not namespaces:
            failures.append(f"{where}: cluster {cluster}'s bundle owns no Namespace")
        for key, who in sorted(owners.items()):
            if len(who) > 1:
                failures.append(f"{where}: cluster {cluster}: {key[1]} {key[2] + '/' if key[2] else ''}{key[3]} "
                                f"is applied by {', '.join(who)}")
        checked += 1
    return checked


def main():
    repo, nemoc = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []
    n = check_root(os.path.join(repo, "out"), failures, "out/")
    print(f"out/: {n} clusters checked")
    base = yaml.safe_load(open(os.path.join(repo, "examples", "llama2-7b-lora-eks.yaml")))
    specs = []
    for name in ("team-a", "team-b"):
        s = yaml.safe_load(yaml.safe_dump(base))
        s["metadata"]["name"] = name
        s["spec"]["namespace"] = "shared-ml"
        for t in s["spec"]["targets"]:
            t["cluster"] = "shared-cluster"
        specs.append(s)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for s in specs:
            p = os.path.join(tmp, s["metadata"]["name"] + ".yaml")
            with open(p, "w") as f:
                yaml.safe_dump(s, f, sort_keys=False)
            paths.append(p)
        for label, runs in (("together", [paths]), ("one after the other", [[p] for p in paths])):
            out = os.path.join(tmp, label.replace(" ", "-"))
            for run in runs:
                r = subprocess.run([nemoc, "build", "--quiet", "--out", out] + run, capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"two projects ({label}): nemoc build exit {r.returncode}: {r.stderr}")
                    break
            else:
                meta = yaml.safe_load(open(os.path.join(out, "_clusters", "shared-cluster", "cluster.json")))
                if sorted(t.split("/")[0] for t in meta["targets"]) != ["team-a", "team-b"]:
                    failures.append(f"two projects ({label}): cluster shared-cluster names {meta['targets']}")
                check_root(out, failures, f"two projects ({label})")
                ns = [k for k in objects_in(os.path.join(out, "_clusters", "shared-cluster", "platform"))
                      if k[1] == "Namespace" and k[3] == "shared-ml"]
                if len(ns) != 1:
                    failures.append(f"two projects ({label}): the bundle holds {len(ns)} Namespace shared-ml objects")
                print(f"two projects ({label}): {meta['targets']}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
