"""Reading a generated target tree as the engines read it.

A tree is out/<project>/<target>/ (stage directories 00-base ... 70-serve, gitops/argocd,
gitops/flux, gitops/cluster-bundle.json). Nothing here interprets nemoc's intent: objects are
taken as they are, kustomization.yaml `resources` are followed as kustomize does (files and
directories, relative to the kustomization), and the cluster bundle's files are read from
cluster-bundle.json (the same objects nemoc writes to out/_clusters/<cluster>/platform/).
"""
import json
import re
import os

import yaml

WORKLOAD_KINDS = {  # (group, kind) -> where the suspend flag lives; the kinds Kueue suspends
    ("batch", "Job"): ("spec", "suspend"),
    ("kubeflow.org", "PyTorchJob"): ("spec", "runPolicy", "suspend"),
    ("kubeflow.org", "MPIJob"): ("spec", "runPolicy", "suspend"),
    ("jobset.x-k8s.io", "JobSet"): ("spec", "suspend"),
    ("trainer.kubeflow.org", "TrainJob"): ("spec", "suspend"),
    # A Volcano Job (the --jpath runtime of tests/extending/azure, issue #48): nothing suspends it.
    ("batch.volcano.sh", "Job"): None,
}


def group_of(api_version):
    return api_version.split("/")[0] if "/" in api_version else ""


def key_of(obj):
    """(group, kind, namespace, name): the identity both engines use."""
    md = obj.get("metadata") or {}
    return (group_of(obj.get("apiVersion", "")), obj.get("kind"), md.get("namespace") or "", md.get("name"))


def is_workload(obj):
    return (group_of(obj.get("apiVersion", "")), obj.get("kind")) in WORKLOAD_KINDS


def stage_of(obj):
    """The stage directory an object came from (set by the reader), e.g. '30-train'."""
    return obj.get("_stage")


class Tree:
    """One target tree (a revision): its stage directories and its GitOps objects."""

    def __init__(self, root, label=None):
        self.root = root
        self.label = label or root
        self.stages = sorted(d for d in os.listdir(root)
                             if os.path.isdir(os.path.join(root, d)) and d[:2].isdigit())
        bundle = os.path.join(root, "gitops", "cluster-bundle.json")
        self.bundle = json.load(open(bundle)) if os.path.exists(bundle) else None

    # -- kustomize ----------------------------------------------------------------------------
    def build(self, path):
        """The objects of a kustomization directory (kustomize build, resources only). The
        objects are shared between calls: callers copy before they change one."""
        path = os.path.normpath(path)
        cache = self.__dict__.setdefault("_built", {})
        if path not in cache:
            cache[path] = self._build(path)
        return list(cache[path])

    def _build(self, path):
        if os.path.isfile(path):
            return [self._tag(d, path) for d in yaml.safe_load_all(open(path)) if d]
        kfile = os.path.join(path, "kustomization.yaml")
        if not os.path.exists(kfile):
            out = []
            for f in sorted(os.listdir(path)):
                if f.endswith(".yaml"):
                    out += self.build(os.path.join(path, f))
            return out
        k = yaml.safe_load(open(kfile)) or {}
        out = []
        for r in k.get("resources", []):
            out += self.build(os.path.join(path, r))
        return out

    def _tag(self, obj, path):
        rel = os.path.relpath(path, self.root).split(os.sep)
        if rel[0][:2].isdigit():
            obj["_stage"] = rel[0]
        return obj

    def resolve(self, repo_path):
        """A path as a GitOps source names it (repository-relative, out/<p>/<t>/...) -> local."""
        p = repo_path.lstrip("./")
        marker = "/".join(self.root.rstrip("/").split("/")[-2:]) + "/"
        i = p.find(marker)
        if i < 0:
            return None
        return os.path.join(self.root, p[i + len(marker):])

    def missing(self, repo_path):
        """Whether a source path of this target no longer exists at this revision."""
        local = self.resolve(repo_path)
        return local is not None and not os.path.exists(local)

    def stage_objects(self):
        out = []
        for s in self.stages:
            out += self.build(os.path.join(self.root, s))
        return out

    # -- engines' own objects -----------------------------------------------------------------
    def argocd_objects(self):
        d = os.path.join(self.root, "gitops", "argocd")
        return self.build(d) if os.path.isdir(d) else []

    def summary_row(self, name):
        """The value cell of SUMMARY.md's row `| name | ... |`, or None."""
        summary = os.path.join(self.root, "SUMMARY.md")
        if not os.path.exists(summary):
            return None
        row = next((l for l in open(summary) if l.startswith(f"| {name} |")), None)
        return row.split("|")[2].strip() if row else None

    def bootstrap_wait(self, engine):
        """The cluster bundle root SUMMARY.md's "Apply once" row waits for under this engine
        (`kubectl wait ... application/<name>` or `kustomization/<name>`), or None."""
        row = self.summary_row("Apply once") or ""
        for step in row.split(";"):
            if f"/platform/{engine}`" not in step:
                continue
            m = re.search(r"kubectl wait -n \S+ (?:application|kustomization)/(\S+) ", step)
            if m:
                return m.group(1)
            m = re.search(r"kubectl wait -n \S+ kustomization -l (\S+) ", step)
            if m:
                return "-l " + m.group(1)  # every Kustomization with that label
        return None

    def bootstrap_objects(self, engine):
        """What the user applies by hand, once, for this engine: the target SUMMARY.md's "Apply
        once" row (the documented bootstrap), each `kubectl apply -k <dir>` built as kustomize does;
        an ApplicationSet is expanded into this target's Application (its list generator's element
        for this target, Go-template placeholders filled), as the ApplicationSet controller would.
        A tree without SUMMARY.md (the d2b6ef1 fixtures) follows the README of its time:
        kubectl apply -k gitops/<engine>."""
        if not os.path.exists(os.path.join(self.root, "SUMMARY.md")):
            d = os.path.join(self.root, "gitops", engine)
            return self.build(d) if os.path.isdir(d) else []
        out = []
        for step in (self.summary_row("Apply once") or "").split(";"):
            step = step.strip()
            # D10: paths from the repository root (out/<project>/<target>/gitops/...).
            step = re.sub(r"^from the repository root: ", "", step)
            m = re.match(r"`kubectl apply --server-side -k (\S+)`", step)
            if m and f"/gitops/{engine}" in m.group(1):
                rel = m.group(1)[m.group(1).index("/gitops/") + 1:]
                out += self.expand(self.build(os.path.join(self.root, rel)))
            m = re.match(r"nothing for Argo CD: .* in `(\S+)/(gitops/argocd/applicationset)`", step)
            if m and engine == "argocd":
                d = os.path.join(os.path.dirname(self.root.rstrip("/")), os.path.basename(m.group(1)), m.group(2))
                out += self.expand(self.build(d))
        return out

    def expand(self, objs):
        target = os.path.basename(self.root.rstrip("/"))
        out = []
        for o in objs:
            if o.get("kind") != "ApplicationSet":
                out.append(o)
                continue
            for g in o["spec"]["generators"]:
                for e in (g.get("list") or {}).get("elements", []):
                    if e.get("target") != target:
                        continue
                    app = json.loads(re.sub(r"\{\{\.(\w+)\}\}", lambda m: e[m.group(1)],
                                            json.dumps(o["spec"]["template"])))
                    app["metadata"]["namespace"] = o["metadata"]["namespace"]
                    out.append(dict({"apiVersion": o["apiVersion"], "kind": "Application"}, **app))
        return out

    def flux_objects(self):
        d = os.path.join(self.root, "gitops", "flux")
        return self.build(d) if os.path.isdir(d) else []

    def bundle_files(self, prefix):
        """Cluster-bundle objects under prefix ('argocd/', 'flux/', 'apps/argocd/', 'objects/')."""
        if not self.bundle:
            return {}
        return {p: o for p, o in self.bundle["files"].items() if p.startswith(prefix)}

    def health_lua(self):
        """argocd-cm resource.customizations.health.<group>_<kind> of the cluster bundle."""
        for o in self.bundle_files("argocd/").values():
            if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == "argocd-cm":
                pre = "resource.customizations.health."
                return {tuple(k[len(pre):].rsplit("_", 1)): v
                        for k, v in (o.get("data") or {}).items() if k.startswith(pre)}
        return {}

    def bundle_source(self, repo_path):
        """Objects of a cluster-bundle directory named by a source path
        (out/_clusters/<cluster>/platform/<dir>), read from cluster-bundle.json; None when the
        path is not the bundle's."""
        if not self.bundle or "/_clusters/" not in "/" + repo_path:
            return None
        sub = repo_path.split("/platform/", 1)[1].strip("/") + "/"
        files = self.bundle_files(sub)
        return [dict(o, _bundle=p) for p, o in sorted(files.items())
                if "/" not in p[len(sub):]]


def component_of(name, cluster):
    """platform-<cluster>-<component> or platform-<component> -> component."""
    for pre in (f"platform-{cluster}-", "platform-"):
        if name.startswith(pre):
            return name[len(pre):]
    return None


class ProjectsTree:
    """What one repository holds for several projects on one cluster at one revision, as the
    engines read it: each project's target tree, and the cluster bundle as nemoc merged it from
    every project (out/_clusters/<cluster>/platform/, which cluster-bundle.json of one target
    only contributes to). Source paths resolve in the tree they name."""

    def __init__(self, trees, out_root, label):
        self.trees, self.label = trees, label
        self.root = trees[0].root
        cluster = trees[0].bundle["cluster"]
        platform = os.path.join(out_root, "_clusters", cluster, "platform")
        files = {}
        for dirpath, _, names in os.walk(platform):
            for f in sorted(names):
                if f.endswith(".yaml") and f != "kustomization.yaml":
                    path = os.path.join(dirpath, f)
                    docs = [d for d in yaml.safe_load_all(open(path)) if d]
                    if len(docs) == 1:
                        files[os.path.relpath(path, platform)] = docs[0]
        self.bundle = dict(trees[0].bundle, files=files)

    def _owner(self, path):
        for t in self.trees:
            if t.resolve(path) is not None:
                return t
        return None

    def resolve(self, repo_path):
        t = self._owner(repo_path)
        return t.resolve(repo_path) if t else None

    def missing(self, repo_path):
        t = self._owner(repo_path)
        return t is not None and t.missing(repo_path)

    def build(self, path):
        for t in self.trees:
            if os.path.commonpath([os.path.abspath(path), os.path.abspath(t.root)]) == os.path.abspath(t.root):
                return t.build(path)
        return []

    bundle_files = Tree.bundle_files
    bundle_source = Tree.bundle_source
