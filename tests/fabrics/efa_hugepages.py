#!/usr/bin/python3
"""Hugepages are requested only when libfabric uses them (B7).

A container with FI_EFA_USE_HUGE_PAGE=0 that requests hugepages-2Mi reserves
memory for nothing and stays Pending on nodes without preallocated hugepages.
Builds every example and test spec and checks every container (and a TrainJob's
spec.trainer): a hugepages-* request or limit needs FI_EFA_USE_HUGE_PAGE unset or
not "0". At least one EFA container (FI_PROVIDER=efa) must be generated.
Usage: efa_hugepages.py <nemoc> <source dir>
"""
import glob
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # python3-yaml
    if os.environ.get("CI") == "true":
        print("CI=true and python3-yaml is missing", file=sys.stderr)
        sys.exit(1)
    print("python3-yaml not installed: skipped", file=sys.stderr)
    sys.exit(77)

NEMOC, SRC = sys.argv[1], sys.argv[2]


def containers(node):
    """(env list, resources dict) of every container-like object under node."""
    if isinstance(node, dict):
        if "env" in node and ("resources" in node or "resourcesPerNode" in node):
            yield node.get("env") or [], node.get("resources") or node.get("resourcesPerNode") or {}
        for value in node.values():
            yield from containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from containers(item)


def main():
    specs = sorted(glob.glob(os.path.join(SRC, "examples", "*.yaml")) +
                   glob.glob(os.path.join(SRC, "tests", "specs", "*.yaml")))
    errors, efa = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-efa-hugepages-") as out:
        run = subprocess.run([NEMOC, "build", "--quiet", "--out", out] + specs,
                             capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=SRC))
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    for env, resources in containers(doc):
                        values = {e.get("name"): e.get("value") for e in env if isinstance(e, dict)}
                        if values.get("FI_PROVIDER") == "efa":
                            efa += 1
                        asked = [k for part in ("requests", "limits")
                                 for k in (resources.get(part) or {}) if k.startswith("hugepages-")]
                        if asked and values.get("FI_EFA_USE_HUGE_PAGE") == "0":
                            errors.append(f"{os.path.relpath(path, out)}: {asked} with FI_EFA_USE_HUGE_PAGE=0")
    if efa == 0:
        errors.append("no EFA container generated: the test checks nothing")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{efa} EFA containers checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
