#!/usr/bin/python3
"""Cloud Storage FUSE volumes of hostNetwork pods use the pod's service account (B11).

GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.0 docs/authentication.md:29-40: a pod on the host
network reaches Workload Identity only with the volume attribute hostNetworkPodKSA: "true"
(pkg/csi_driver/utils.go:63 VolumeContextKeyHostNetworkPodKSA); other pods must not set it.
Builds every example and test spec and checks each pod template with a gcsfuse CSI volume.

Usage: gcsfuse_host_network.py <nemoc> <source dir>
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
    errors, host, other = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="nemoc-gcsfuse-") as out:
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for path in glob.glob(os.path.join(out, "*", "*", "[0-9][0-9]-*", "*.yaml")):
            with open(path) as f:
                doc = yaml.safe_load(f)
            for pod in pod_specs(doc):
                for v in pod.get("volumes", []) or []:
                    csi = v.get("csi") or {}
                    if csi.get("driver") != "gcsfuse.csi.storage.gke.io":
                        continue
                    ksa = (csi.get("volumeAttributes") or {}).get("hostNetworkPodKSA")
                    if pod.get("hostNetwork"):
                        host += 1
                        if ksa != "true":
                            errors.append(f"{os.path.relpath(path, out)}: hostNetwork pod, volume {v['name']} without hostNetworkPodKSA")
                    else:
                        other += 1
                        if ksa is not None:
                            errors.append(f"{os.path.relpath(path, out)}: pod network, volume {v['name']} sets hostNetworkPodKSA")
    if host < 3 or other < 3:
        errors.append(f"too few gcsfuse volumes to prove anything: {host} on hostNetwork pods, {other} on others")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{host} gcsfuse volumes on hostNetwork pods, {other} on others: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
