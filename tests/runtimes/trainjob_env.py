#!/usr/bin/python3
"""TrainJob env goes through spec.trainer.env, never a runtimePatches container (B1).

Kubeflow Trainer v2.3.0 rejects env on the `node` (and initializer) containers of a
runtimePatches patch: kubeflow/trainer v2.3.0
pkg/runtime/framework/plugins/jobset/jobset.go (Validate, "must not have envs").
Builds every example and test spec, then checks each generated TrainJob:
  - no container or initContainer under spec.runtimePatches has `env`;
  - spec.trainer.env carries TP_SIZE (the parallel sizes moved there).

Usage: trainjob_env.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def containers_with_env(node, path="spec.runtimePatches"):
    """Paths of every container/initContainer under node that has env."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}"
            if key in ("containers", "initContainers") and isinstance(value, list):
                for i, c in enumerate(value):
                    if isinstance(c, dict) and "env" in c:
                        found.append(f"{sub}[{i}] ({c.get('name')})")
            found += containers_with_env(value, sub)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found += containers_with_env(item, f"{path}[{i}]")
    return found


def main():
    errors, trainjobs = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-trainjob-env-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    if not isinstance(doc, dict) or doc.get("kind") != "TrainJob":
                        continue
                    trainjobs += 1
                    spec = doc.get("spec", {})
                    for bad in containers_with_env(spec.get("runtimePatches", [])):
                        errors.append(f"{path}: env in {bad}")
                    names = [e.get("name") for e in spec.get("trainer", {}).get("env", [])]
                    if "TP_SIZE" not in names:
                        errors.append(f"{path}: spec.trainer.env lacks TP_SIZE ({names})")
    if trainjobs == 0:
        errors.append("no TrainJob generated: the test checks nothing")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{trainjobs} TrainJobs checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
