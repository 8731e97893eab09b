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
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, containers, require_yaml, resources_of  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def main():
    errors, efa = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-efa-hugepages-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    for c in containers(doc):
                        if "env" not in c:
                            continue
                        env, resources = c.get("env") or [], resources_of(c)
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
