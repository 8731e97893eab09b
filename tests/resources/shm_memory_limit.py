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


def pod_specs(node):
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list) and isinstance(node.get("volumes"), list):
            yield node
        for value in node.values():
            yield from pod_specs(value)
    elif isinstance(node, list):
        for item in node:
            yield from pod_specs(item)


def main():
    specs = sorted(glob.glob(os.path.join(SRC, "examples", "*.yaml")) +
                   glob.glob(os.path.join(SRC, "tests", "specs", "*.yaml")))
    errors, requested = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-shm-memory-") as out:
        run = subprocess.run([NEMOC, "build", "--quiet", "--out", out] + specs,
                             capture_output=True, text=True, env=dict(os.environ, NEMOC_DATA_DIR=SRC))
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    for pod in pod_specs(doc):
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
