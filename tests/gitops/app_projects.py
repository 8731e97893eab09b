#!/usr/bin/python3
"""Argo CD AppProjects of the committed trees, read the way Argo CD reads them (decision F14,
field review C22).

Argo CD refuses to sync a resource its Application's project does not permit
(argo-cd v3.5.1 controller/sync.go:650-670 validateSyncPermissions) with the rules of
pkg/apis/application/v1alpha1/app_project_types.go:399-418 IsGroupKindNamePermitted (a nil
namespaceResourceWhitelist permits every namespaced kind, an empty one none; an empty
clusterResourceWhitelist no cluster-scoped kind, an item without a name any name of its kind) and
:483-530 IsDestinationPermitted, with filepath.Match patterns (types.go:3843-3875). Ported here.

For every Argo CD target of out/ (and the roots AppProject of its cluster bundle):
  1. every Application's project exists (in the tree, the bundle, or Argo CD's own 'default'),
     permits the Application's destination and source, and permits every object the
     Application syncs -- otherwise the sync fails in the cluster;
  2. C22: a stage Application's project permits no kind in Argo CD's namespace (so no Secret,
     no argocd-cm: admin-equivalent); a root's project permits only Applications and AppProjects,
     only in Argo CD's namespace, and no cluster-scoped kind.
usage: app_projects.py <repo>
"""
import fnmatch
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "replay"))
from tree import Tree  # noqa: E402

CLUSTER_SCOPED = {("", "Namespace"), ("", "PersistentVolume"), ("rbac.authorization.k8s.io", "ClusterRole"),
                  ("rbac.authorization.k8s.io", "ClusterRoleBinding"), ("kueue.x-k8s.io", "ClusterQueue"),
                  ("kueue.x-k8s.io", "ResourceFlavor"), ("storage.k8s.io", "StorageClass"),
                  ("apiextensions.k8s.io", "CustomResourceDefinition"), ("scheduling.k8s.io", "PriorityClass"),
                  ("mellanox.com", "NicClusterPolicy"), ("kueue.x-k8s.io", "Topology"),
                  ("trainer.kubeflow.org", "ClusterTrainingRuntime")}
DEFAULT_PROJECT = {"metadata": {"name": "default"}, "spec": {
    "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
    "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}}


def group_of(api_version):
    return api_version.split("/")[0] if "/" in api_version else ""


def match(pattern, value):
    return fnmatch.fnmatchcase(value, pattern)


def glob_match(pattern, value):  # app_project_types.go globMatch with negation
    if pattern.startswith("!"):
        return not fnmatch.fnmatchcase(value, pattern[1:])
    return pattern == "*" or fnmatch.fnmatchcase(value, pattern)


def kind_permitted(proj, group, kind, name, namespaced):
    spec = proj["spec"]
    if namespaced:
        white = spec.get("namespaceResourceWhitelist")
        black = spec.get("namespaceResourceBlacklist") or []
        listed = white is None or (len(white) != 0 and any(match(i["kind"], kind) and match(i.get("group", ""), group)
                                                            for i in white))
        blocked = any(match(i["kind"], kind) and match(i.get("group", ""), group) for i in black)
        return listed and not blocked
    white = spec.get("clusterResourceWhitelist") or []
    black = spec.get("clusterResourceBlacklist") or []

    def named(items):
        return any(match(i["kind"], kind) and match(i.get("group", ""), group)
                   and (not i.get("name") or match(i["name"], name)) for i in items)
    return named(white) and not named(black)


def destination_permitted(proj, server, namespace):
    ok = False
    for d in proj["spec"].get("destinations") or []:
        s, n = d.get("server", ""), d.get("namespace", "")
        if glob_match(s, server) and glob_match(n, namespace):
            ok = True
        elif (s.startswith("!") and not glob_match(s, server)) or (n.startswith("!") and not glob_match(n, namespace)):
            return False
    return ok


def source_permitted(proj, repo):
    return any(glob_match(r, repo) for r in proj["spec"].get("sourceRepos") or [])


def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if isinstance(d, dict)]


def main():
    repo = sys.argv[1]
    out = os.path.join(repo, "out")
    failures, apps_checked, objects_checked = [], 0, 0
    bundles = {}
    for cluster in sorted(os.listdir(os.path.join(out, "_clusters"))):
        d = os.path.join(out, "_clusters", cluster, "platform", "argocd")
        if os.path.isdir(d):
            bundles[cluster] = {o["metadata"]["name"]: o for f in sorted(os.listdir(d)) if f.startswith("appproject-")
                                for o in load(os.path.join(d, f))}
    for project in sorted(os.listdir(out)):
        if project.startswith("_") or not os.path.isdir(os.path.join(out, project)):
            continue
        for target in sorted(os.listdir(os.path.join(out, project))):
            root = os.path.join(out, project, target)
            argocd = os.path.join(root, "gitops", "argocd")
            if not os.path.isdir(argocd):
                continue
            tree = Tree(root)
            contribution = os.path.join(root, "gitops", "cluster-bundle.json")
            cluster = yaml.safe_load(open(contribution))["cluster"] if os.path.exists(contribution) else None
            projects = {"default": DEFAULT_PROJECT}
            projects.update(bundles.get(cluster, {}))
            apps = []
            for dirpath, _, files in os.walk(argocd):
                for f in sorted(files):
                    for o in load(os.path.join(dirpath, f)):
                        if o.get("kind") == "AppProject":
                            projects[o["metadata"]["name"]] = o
                        elif o.get("kind") == "Application":
                            apps.append(o)
                        elif o.get("kind") == "ApplicationSet":
                            for el in o["spec"]["generators"][0]["list"]["elements"]:
                                if el["target"] == target:
                                    app = yaml.safe_load(yaml.safe_dump(o["spec"]["template"]))
                                    app["metadata"]["name"] = el["name"]
                                    app["metadata"]["namespace"] = o["metadata"]["namespace"]
                                    app["spec"]["project"], app["spec"]["source"]["path"] = el["project"], el["path"]
                                    apps.append(app)
            where = f"{project}/{target}"
            for app in apps:
                name, spec = app["metadata"]["name"], app["spec"]
                proj = projects.get(spec["project"])
                if proj is None:
                    failures.append(f"{where}: Application {name} names project {spec['project']}, which nothing creates")
                    continue
                apps_checked += 1
                dest = spec["destination"]
                if not destination_permitted(proj, dest["server"], dest.get("namespace", "")):
                    failures.append(f"{where}: {name}: project {spec['project']} does not permit its destination {dest}")
                if not source_permitted(proj, spec["source"]["repoURL"]):
                    failures.append(f"{where}: {name}: project {spec['project']} does not permit {spec['source']['repoURL']}")
                local = tree.resolve(spec["source"]["path"])
                if local is None or not os.path.isdir(local):
                    failures.append(f"{where}: {name}: source {spec['source']['path']} is not in the tree")
                    continue
                is_root = (app["metadata"].get("labels") or {}).get("nemoc.dev/gitops-root") == "true"
                for o in tree.build(local):
                    g, k = group_of(o["apiVersion"]), o["kind"]
                    namespaced = (g, k) not in CLUSTER_SCOPED
                    ns = o["metadata"].get("namespace") or dest.get("namespace", "")
                    objects_checked += 1
                    if not kind_permitted(proj, g, k, o["metadata"]["name"], namespaced):
                        failures.append(f"{where}: {name}: {g}/{k} {o['metadata']['name']} is not permitted in project "
                                        f"{spec['project']}: the sync fails")
                    elif namespaced and not destination_permitted(proj, dest["server"], ns):
                        failures.append(f"{where}: {name}: namespace {ns} of {k} {o['metadata']['name']} is not permitted "
                                        f"in project {spec['project']}: the sync fails")
                if spec["project"] == "default":
                    continue  # the user's own choice (createProject: false): not nemoc's project
                argo_ns = app["metadata"]["namespace"]
                for g, k in (("", "Secret"), ("", "ConfigMap"), ("rbac.authorization.k8s.io", "RoleBinding")):
                    if kind_permitted(proj, g, k, "x", True) and destination_permitted(proj, dest["server"], argo_ns):
                        failures.append(f"{where}: {name} ({'root' if is_root else 'stage'}): project {spec['project']} "
                                        f"permits {k} in Argo CD's namespace {argo_ns} (admin-equivalent, C22)")
                if is_root:
                    if proj["spec"].get("namespaceResourceWhitelist") is None:
                        failures.append(f"{where}: root {name}: project {spec['project']} permits every namespaced kind")
                    if proj["spec"].get("clusterResourceWhitelist"):
                        failures.append(f"{where}: root {name}: project {spec['project']} permits cluster-scoped kinds")
                    if any(d.get("namespace") != argo_ns for d in proj["spec"].get("destinations") or []):
                        failures.append(f"{where}: root {name}: project {spec['project']} permits namespaces besides {argo_ns}")
                elif destination_permitted(proj, dest["server"], argo_ns) or destination_permitted(proj, "https://kubernetes.default.svc", argo_ns):
                    failures.append(f"{where}: stage Application {name}: project {spec['project']} may deploy into {argo_ns} (C22)")
    for f in failures:
        print("FAIL:", f)
    print(f"{apps_checked} Applications, {objects_checked} synced objects checked against their AppProjects; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
