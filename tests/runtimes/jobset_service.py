#!/usr/bin/python3
"""nemoc emits no Service named like a JobSet's subdomain (B15).

The JobSet controller creates that headless Service itself and owns it
(kubernetes-sigs/jobset v0.12.0 pkg/controllers/jobset_controller.go
createHeadlessSvcIfNecessary); a Git-managed Service of the same name is
adopted and garbage-collected with the JobSet. Also checks TrainJobs, whose
JobSet carries the TrainJob's name.
Usage: jobset_service.py <nemoc> <source dir>
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
    errors, owners, services = [], {}, []
    with tempfile.TemporaryDirectory(prefix="nemoc-jobset-service-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "**", "*.yaml"), recursive=True):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    if not isinstance(doc, dict):
                        continue
                    meta = doc.get("metadata") or {}
                    key = (meta.get("namespace"), meta.get("name"))
                    if doc.get("kind") == "JobSet":
                        sub = ((doc.get("spec") or {}).get("network") or {}).get("subdomain") or meta.get("name")
                        owners[(meta.get("namespace"), sub)] = path
                    elif doc.get("kind") == "TrainJob":
                        owners[key] = path
                    elif doc.get("kind") == "Service" and doc.get("apiVersion") == "v1":
                        services.append((key, path))
    for key, path in services:
        if key in owners:
            errors.append(f"{os.path.relpath(path, out)}: Service {key} collides with {os.path.relpath(owners[key], out)}")
    if not owners:
        errors.append("no JobSet or TrainJob generated: the test checks nothing")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(owners)} JobSets/TrainJobs, {len(services)} Services checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
