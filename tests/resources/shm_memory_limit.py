#!/usr/bin/python3
"""No memory limit on a container whose pod has a Memory-medium /dev/shm (B6).

A memory-backed emptyDir counts against the containers' memory limits
(k8s.io/api core/v1 EmptyDirVolumeSource.SizeLimit), so EKS training pods with
memory 32000Mi requests = limits and a 256Gi /dev/shm were OOM-killed. Builds every
example and test spec; for each pod template with a Memory emptyDir, no container
may have limits.memory, and memory must stay requested where it was asked for.
Usage: shm_memory_limit.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, pod_specs, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def main():
    errors, requested = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-shm-memory-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    for pod in pod_specs(doc):
                        if not isinstance(pod.get("volumes"), list):
                            continue
                        if not any((v.get("emptyDir") or {}).get("medium") == "Memory"
                                   for v in pod["volumes"] if isinstance(v, dict)):
                            continue
                        for c in pod["containers"] + pod.get("initContainers", []):
                            res = c.get("resources") or {}
                            if "memory" in (res.get("requests") or {}):
                                requested += 1
                            if "memory" in (res.get("limits") or {}):
                                errors.append(f"{os.path.relpath(path, out)}: container {c.get('name')} "
                                              f"limits.memory {res['limits']['memory']} under a Memory /dev/shm")
    if requested == 0:
        errors.append("no container requests memory: the test checks nothing")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{requested} containers with a memory request checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
