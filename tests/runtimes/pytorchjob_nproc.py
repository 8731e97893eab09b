#!/usr/bin/python3
"""Every PyTorchJob sets spec.nprocPerNode to torchrun's --nproc-per-node (B16).

Without it the training operator computes WORLD_SIZE as replicas x 1
(kubeflow/training-operator v1.9.0 pkg/controller.v1/pytorch/envvar.go).
Usage: pytorchjob_nproc.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build_all, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def main():
    errors, jobs = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-pytorchjob-nproc-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    if not isinstance(doc, dict) or doc.get("kind") != "PyTorchJob":
                        continue
                    jobs += 1
                    master = doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
                    words = " ".join(master.get("command", []) + master.get("args", [])).split()
                    nproc = [w.split("=", 1)[1] for w in words if w.startswith("--nproc-per-node=")]
                    got = doc["spec"].get("nprocPerNode")
                    if not nproc or got != nproc[0]:
                        errors.append(f"{os.path.relpath(path, out)}: nprocPerNode {got!r}, torchrun {nproc}")
    if jobs == 0:
        errors.append("no PyTorchJob generated: the test checks nothing")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{jobs} PyTorchJobs checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
