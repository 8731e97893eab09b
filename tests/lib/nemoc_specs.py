"""Scaffolding shared by the Python contract tests under tests/ (run with /usr/bin/python3).

A test script imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
    from nemoc_specs import ...
and calls `yaml = require_yaml()` before using yaml.

  missing(what)     a prerequisite is missing: exit 1 under CI=true, else 77 (ctest SKIP_RETURN_CODE).
  require_yaml()    python3-yaml, or missing().
  all_specs(src)    every example and test spec, sorted (examples/*.yaml, tests/specs/*.yaml).
  build(...)        `nemoc build --quiet --out OUT SPEC...` with NEMOC_DATA_DIR=<source dir>.
  build_all(...)    build() of all_specs(src) plus extra specs.
  pod_specs(doc)    every pod spec under a document (a mapping with a `containers` list).
  containers(doc)   every container-like mapping under a document (`resources` or
                    `resourcesPerNode`: containers, init containers, a TrainJob's spec.trainer).
  mappings(doc)     every mapping under a document, the document itself first.
  nemo_tag(image, releases)  NVIDIA/NeMo tag of an NGC nemo image (libsonnet/nemo/versions.json).
  git_show(git, tag, path, check=True)  a file at refs/tags/<tag> of a bare git mirror (the tests'
                    optional NEMOC_NEMO_GIT); with check=False, "" when it is missing.
  function_params(source, name)  the positional parameter names of Python function `name` in source.
"""
import glob
import os
import subprocess
import sys


def missing(what, skip_message=None):
    """Exits for a missing prerequisite `what`: 1 when CI=true (a test that would skip fails
    there), else 77 with skip_message (default "skipped: <what> is missing")."""
    if os.environ.get("CI") == "true":
        print(f"CI=true and {what} is missing", file=sys.stderr)
        sys.exit(1)
    print(skip_message or f"skipped: {what} is missing", file=sys.stderr)
    sys.exit(77)


def require_yaml(skip_message="python3-yaml not installed: skipped"):
    """The yaml module; without it missing("python3-yaml")."""
    try:
        import yaml
    except ImportError:  # python3-yaml
        missing("python3-yaml", skip_message)
    return yaml


def all_specs(src):
    """Sorted paths of every example and test spec of the source tree src."""
    return sorted(glob.glob(os.path.join(src, "examples", "*.yaml")) +
                  glob.glob(os.path.join(src, "tests", "specs", "*.yaml")))


def build(nemoc, src, out, specs):
    """Runs `nemoc build --quiet --out out specs...` with NEMOC_DATA_DIR=src; the CompletedProcess
    (text stdout/stderr captured)."""
    return subprocess.run([nemoc, "build", "--quiet", "--out", out] + list(specs),
                          capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=src))


def build_all(nemoc, src, out, extra=()):
    """build() of every example and test spec, then the extra spec paths, into out."""
    return build(nemoc, src, out, all_specs(src) + list(extra))


def mappings(node):
    """Every mapping under node, pre-order (a mapping before the mappings inside it)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from mappings(value)
    elif isinstance(node, list):
        for item in node:
            yield from mappings(item)


def bundle_helm_installs(plat):
    """Every Helm install of a cluster bundle (out/_clusters/<cluster>/platform), as both engines
    hold it: Argo CD Applications with a helm source (apps/argocd/) and Flux HelmReleases
    (flux/**, with their GitRepository's url and tag). Dicts: file, release, namespace, tag,
    source ("owner/repo@tag:path"), values."""
    import re
    yaml = require_yaml()
    short = lambda url: re.sub(r"^https://github.com/|\.git$", "", url)  # noqa: E731
    out = []
    for f in sorted(glob.glob(os.path.join(plat, "apps", "argocd", "application-*.yaml"))):
        spec = yaml.safe_load(open(f))["spec"]
        src = spec["source"]
        if "helm" in src:
            out.append({"file": f, "release": src["helm"]["releaseName"], "namespace": spec["destination"].get("namespace"),
                        "tag": src["targetRevision"], "source": f"{short(src['repoURL'])}@{src['targetRevision']}:{src['path']}",
                        "values": src["helm"].get("valuesObject") or {}})
    repos = {}
    for f in glob.glob(os.path.join(plat, "flux", "gitrepository-*.yaml")):
        o = yaml.safe_load(open(f))
        repos[o["metadata"]["name"]] = (short(o["spec"]["url"]), o["spec"]["ref"].get("tag"))
    for f in sorted(glob.glob(os.path.join(plat, "flux", "**", "helmrelease-*.yaml"), recursive=True)):
        spec = yaml.safe_load(open(f))["spec"]
        repo, tag = repos[spec["chart"]["spec"]["sourceRef"]["name"]]
        out.append({"file": f, "release": spec["releaseName"], "namespace": spec.get("targetNamespace"), "tag": tag,
                    "source": f"{repo}@{tag}:{spec['chart']['spec']['chart'].lstrip('./')}",
                    "values": spec.get("values") or {}})
    return out


def pod_specs(node):
    """Every pod spec under node, pre-order: a mapping whose `containers` is a list (pod templates
    of Job, JobSet, PyTorchJob, Deployment..., a TrainJob's runtimePatches, a TrainingRuntime)."""
    for m in mappings(node):
        if isinstance(m.get("containers"), list):
            yield m


def containers(node):
    """Every container-like mapping under node, pre-order: one with a `resources` or
    `resourcesPerNode` key (containers and init containers of every pod spec that state
    resources, a TrainJob's spec.trainer) whose resources_of() is a mapping (not a
    Kustomization's `resources:` file list)."""
    for m in mappings(node):
        if ("resources" in m or "resourcesPerNode" in m) and isinstance(resources_of(m), dict):
            yield m


def resources_of(container):
    """A container's `resources`, else a TrainJob trainer's `resourcesPerNode`, else {}."""
    return container.get("resources") or container.get("resourcesPerNode") or {}


def nemo_tag(image, releases):
    """NeMo git tag of an NGC nemo image 'nvcr.io/nvidia/nemo:25.02' (None if unknown), from
    libsonnet/nemo/versions.json's releases table."""
    repo, _, tag = image.rpartition(":")
    if repo.rsplit("/", 1)[-1] != "nemo":
        return None
    row = releases.get(tag[:5])
    return row["nemo"] if row else None


def git_show(git, tag, path, check=True):
    """The text of path at refs/tags/<tag> of the git directory git (a bare mirror such as
    NEMOC_NEMO_GIT); with check=False, "" when the path does not exist there."""
    return subprocess.run(["git", f"--git-dir={git}", "show", f"refs/tags/{tag}:{path}"],
                          capture_output=True, text=True, check=check).stdout


def function_params(source, name):
    """The positional parameter names of the (first) Python function `name` defined in source."""
    import ast
    fn = next(f for f in ast.walk(ast.parse(source)) if isinstance(f, ast.FunctionDef) and f.name == name)
    return [a.arg for a in fn.args.args]


def nemo2_recipe(target, key="train"):
    """The assignments of the NeMo 2 recipe module (recipe.py in the ConfigMap of training stage
    `key` under <target>/00-base) as {target expression: ast value}, or None without one."""
    import ast
    import glob
    import os
    yaml = require_yaml()
    for cm in glob.glob(os.path.join(target, "00-base", f"configmap-*-{key}-config-*.yaml")):
        recipe = yaml.safe_load(open(cm))["data"].get("recipe.py")
        if recipe is not None:
            return {ast.unparse(n.targets[0]): n.value for n in ast.walk(ast.parse(recipe)) if isinstance(n, ast.Assign)}
    return None


# The workload kinds nemoc runs a stage as (runtimes/*.libsonnet).
WORKLOADS = ("JobSet", "PyTorchJob", "TrainJob", "Job")


def load_dir(target):
    """{path relative to target: object} of every YAML object of a target tree's stage directories
    and gitops/<engine>/ directories."""
    yaml = require_yaml()
    docs = {}
    for path in sorted(glob.glob(os.path.join(target, "*", "*.yaml")) +
                       glob.glob(os.path.join(target, "gitops", "*", "*.yaml"))):
        with open(path) as f:
            obj = yaml.safe_load(f)
        if isinstance(obj, dict) and "kind" in obj:
            docs[os.path.relpath(path, target)] = obj
    return docs


def workload_in(docs, directory):
    """(relative path, object) of the one workload in a stage directory of load_dir's docs, else
    (None, None)."""
    found = [(r, o) for r, o in docs.items() if r.startswith(directory + "/") and o["kind"] in WORKLOADS]
    return found[0] if len(found) == 1 else (None, None)


def all_args(obj):
    """Every command and args entry of every container-like mapping under obj, as strings."""
    return [str(a) for node in mappings(obj) for a in (node.get("command") or []) + (node.get("args") or [])
            if isinstance(a, (str, int))]
