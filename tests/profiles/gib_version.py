#!/usr/bin/python3
"""The gIB NCCL plugin each gke-a4 pod installs matches its training image's NeMo release (B12).

AI-Hypercomputer/gpu-recipes (A4, commit 2e1fd5e) pairs the plugin with the NCCL of the image:
  nemo25.02 images  -> nccl-plugin-gib:v1.0.5 (pytorch-gpu-nemo-nccl:nemo25.02-gib1.0.5-A4)
  nemo2507 recipes  -> v1.1.0 (training/a4/llama31_405b/nemo-gke/nemo2507/*/recipe/recipe/values.yaml:4)
  nemo2511, nemo2602 recipes -> v1.1.1 (training/a4/*/nemo2511|nemo2602/*/values.yaml)
Builds every example and test spec plus one 25.11 variant, then checks each gke-a4 target's
nccl-plugin-installer image against the release of the spec's training image.

Usage: gib_version.py <nemoc> <source dir>
"""
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build_all, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
PAIRS = [("25.11", "v1.1.1"), ("25.07", "v1.1.0"), ("25.02", "v1.0.5")]


def release_of(image):
    tag = str(image.get("tag", ""))
    m = re.match(r"^(\d\d\.\d\d)(?!\d)", tag) if image.get("repository", "").endswith("/nemo") else None
    m = m or re.search(r"nemo(\d\d\.\d\d)(?!\d)", tag)
    return m.group(1) if m else None


def expected(release):
    for first, tag in PAIRS:
        if release is None or release >= first:
            return tag
    return PAIRS[-1][1]


def main():
    specs = all_specs(SRC)
    errors, checked, tags = [], 0, set()
    with tempfile.TemporaryDirectory(prefix="nemoc-gib-") as tmp:
        # A 25.11 variant of the GKE example: the newest pairing.
        with open(os.path.join(SRC, "examples", "llama31-405b-gke-a4-nemo2.yaml")) as f:
            doc = yaml.safe_load(f)
        doc["metadata"]["name"] = "gib-2511"
        doc["spec"]["image"] = {"repository": "nvcr.io/nvidia/nemo", "tag": "25.11"}
        variant = os.path.join(tmp, "gib-2511.yaml")
        with open(variant, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        out = os.path.join(tmp, "out")
        run = build_all(NEMOC, SRC, out, [variant])
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for spec_path in specs + [variant]:
            with open(spec_path) as f:
                doc = yaml.safe_load(f)
            project = doc["metadata"]["name"]
            train = doc["spec"].get("stages", {}).get("train")
            if train is None:
                continue
            image = train.get("image") or doc["spec"].get("image") or {}
            want = expected(release_of(image))
            for t in doc["spec"]["targets"]:
                if t["profile"] != "gke-a4":
                    continue
                for path in glob.glob(os.path.join(out, project, t["name"], "[0-9][0-9]-*", "*.yaml")):
                    text = open(path).read()
                    for got in re.findall(r"nccl-plugin-gib:(v[0-9.]+)", text):
                        checked += 1
                        tags.add(got)
                        if got != want:
                            errors.append(f"{os.path.relpath(path, out)}: gIB {got}, image {image} needs {want}")
    if checked < 5 or len(tags) < 3:
        errors.append(f"too little to prove anything: {checked} installer images, tags {sorted(tags)}")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} gIB installer images checked, tags {sorted(tags)}: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
