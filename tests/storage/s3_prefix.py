#!/usr/bin/python3
"""An S3 data prefix written with a trailing slash mounts that prefix, not `p//` (B10), with
the pod's credentials when the target has an IAM role (B9).

Builds tests/specs/profile-matrix.yaml with the eks-pytorchjob data prefix set to
`tokenized/` and to `tokenized`, and checks that every Mountpoint PersistentVolume
(csi.driver s3.csi.aws.com) has the mount option `prefix tokenized/` and no `//`.
Usage: s3_prefix.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def check(prefix):
    with open(os.path.join(SRC, "tests", "specs", "profile-matrix.yaml")) as f:
        spec = yaml.safe_load(f)
    spec["spec"]["targets"] = [t for t in spec["spec"]["targets"]
                               if t["name"] == "eks-pytorchjob"]
    spec["spec"]["targets"][0]["storage"]["data"]["s3"]["prefix"] = prefix
    spec["spec"].pop("gitops", None)
    errors, pvs = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-s3-prefix-") as tmp:
        path = os.path.join(tmp, "profile-matrix.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(spec, f)
        run = build(NEMOC, SRC, os.path.join(tmp, "out"), [path])
        if run.returncode != 0:
            return [f"prefix {prefix!r}: build failed: {run.stderr}"]
        for out in glob.glob(os.path.join(tmp, "out", "**", "*.yaml"), recursive=True):
            with open(out) as f:
                for doc in yaml.safe_load_all(f):
                    if not isinstance(doc, dict) or doc.get("kind") != "PersistentVolume":
                        continue
                    if doc["spec"].get("csi", {}).get("driver") != "s3.csi.aws.com":
                        continue
                    pvs += 1
                    # B9: the target has an IAM role (iamRoleArn): Mountpoint mounts with the
                    # pod's credentials (awslabs/mountpoint-s3-csi-driver v2.7.0
                    # docs/CONFIGURATION.md:375), not the driver's role.
                    auth = doc["spec"]["csi"].get("volumeAttributes", {}).get("authenticationSource")
                    if auth != "pod":
                        errors.append(f"prefix {prefix!r}: {os.path.basename(out)} authenticationSource {auth!r}, expected 'pod'")
                    opts = doc["spec"].get("mountOptions", [])
                    if "prefix tokenized/" not in opts or any("//" in o for o in opts):
                        errors.append(f"prefix {prefix!r}: {os.path.basename(out)} mountOptions {opts}")
    if pvs == 0:
        errors.append(f"prefix {prefix!r}: no Mountpoint PersistentVolume generated")
    return errors


errors = check("tokenized/") + check("tokenized")
for e in errors:
    print(e, file=sys.stderr)
print(f"{len(errors)} errors")
sys.exit(1 if errors else 0)
