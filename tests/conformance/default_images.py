#!/usr/bin/python3
"""Default images follow the accelerator; one TensorRT-LLM release per engine (#42 item 2, A26, F22).

examples/llama31-8b-pipeline.yaml (data prep through Triton serving) is built for its gke target
(profile gke-a4, B200) with every image removed from the spec: spec.image, each stage's image and
serve.triton.image. The build must succeed, and in the written tree

  - every NGC NeMo image is at least the B200's minimumRelease.nemo and every NGC tritonserver
    image at least its minimumRelease.tritonserver (libsonnet/accelerators.json), and each is the
    newest release nemoc has tables for (libsonnet/nemo/versions.json, the served releases of
    libsonnet/triton_templates.json): what the schema says the default is;
  - the Job that builds the engine and the Triton Deployment that loads it run one TensorRT-LLM
    release (an NGC tritonserver YY.MM names it: 25.01 ships TensorRT-LLM 0.17).

Then a hand-set mismatch (engine 25.01, server 24.07) is refused with spec.engine-release's message
at file:line:column of the server's tag, and nothing is written.

Usage: default_images.py <nemoc> <source dir>
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, mappings, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
NEMO, TRITON = "nvcr.io/nvidia/nemo", "nvcr.io/nvidia/tritonserver"


def release(tag):
    m = re.match(r"^(\d\d)\.(\d\d)", tag)
    return (int(m.group(1)), int(m.group(2))) if m else None


def strip_images(spec):
    spec["spec"].pop("image", None)
    for stage in spec["spec"]["stages"].values():
        if isinstance(stage, dict):
            stage.pop("image", None)
            if isinstance(stage.get("triton"), dict):
                stage["triton"].pop("image", None)
    spec["spec"]["targets"] = [t for t in spec["spec"]["targets"] if t["profile"] == "gke-a4"]
    spec["spec"]["gitops"]["clusters"] = {t["name"]: spec["spec"]["gitops"]["clusters"][t["name"]]
                                          for t in spec["spec"]["targets"]}
    spec["spec"]["gitops"].pop("argocd", None)
    return spec


def images(out):
    """(file, component, image) of every container in the written tree."""
    for root, _, files in os.walk(out):
        for f in sorted(files):
            if not f.endswith(".yaml") or f == "kustomization.yaml":
                continue
            for doc in yaml.safe_load_all(open(os.path.join(root, f))):
                if not isinstance(doc, dict):
                    continue
                component = doc.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/component", "")
                for m in mappings(doc):
                    if isinstance(m.get("image"), str) and ("name" in m) and ("command" in m or "args" in m or "ports" in m or "resources" in m):
                        yield f, component, m["image"]


def main():
    failures = []
    versions = json.load(open(os.path.join(SRC, "libsonnet", "nemo", "versions.json")))
    newest_nemo = max((k for k in versions["releases"]), key=release)
    gpus = json.load(open(os.path.join(SRC, "libsonnet", "accelerators.json")))["accelerators"]
    minimum = gpus["b200-180gb"]["minimumRelease"]
    base = yaml.safe_load(open(os.path.join(SRC, "examples", "llama31-8b-pipeline.yaml")))
    with tempfile.TemporaryDirectory(prefix="nemoc-default-images-") as tmp:
        spec = strip_images(yaml.safe_load(yaml.safe_dump(base)))
        path = os.path.join(tmp, "no-images.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(spec, f, sort_keys=False)
        out = os.path.join(tmp, "out")
        run = build(NEMOC, SRC, out, [path])
        if run.returncode != 0:
            failures.append("a gke-a4 spec through serving with no image set is refused:\n" + run.stderr)
        seen = list(images(out)) if run.returncode == 0 else []
        engine, server = set(), set()
        for f, component, image in seen:
            repo, _, tag = image.partition(":")
            tag = tag.split("@")[0]
            if repo == NEMO:
                if release(tag) < release(minimum["nemo"]):
                    failures.append(f"{f}: {image} is older than B200's minimum NeMo {minimum['nemo']}")
                if tag != newest_nemo:
                    failures.append(f"{f}: {image} is not nemoc's newest tested NeMo release {newest_nemo}")
            if repo == TRITON:
                if release(tag) < release(minimum["tritonserver"]):
                    failures.append(f"{f}: {image} is older than B200's minimum Triton {minimum['tritonserver']}")
                if component == "tensorrt-llm":
                    engine.add(release(tag))
                if component == "serve":
                    server.add(release(tag))
        if run.returncode == 0:
            if not any(image.startswith(NEMO + ":") for _, _, image in seen):
                failures.append("no NeMo image in the tree: " + repr(sorted({i for _, _, i in seen})))
            if len(engine) != 1 or engine != server:
                failures.append(f"engine build releases {sorted(engine)} and Triton releases {sorted(server)} "
                                "are not one TensorRT-LLM release")
        # A mismatch set by hand: refused at the server's tag, nothing written.
        bad = yaml.safe_load(yaml.safe_dump(spec))
        bad["spec"]["stages"]["tensorrtLLM"]["image"] = {"repository": TRITON, "tag": "25.01-trtllm-python-py3"}
        bad["spec"]["stages"]["serve"]["triton"]["image"] = {"repository": TRITON, "tag": "24.07-trtllm-python-py3"}
        bad_path = os.path.join(tmp, "mismatch.yaml")
        with open(bad_path, "w") as f:
            yaml.safe_dump(bad, f, sort_keys=False)
        bad_out = os.path.join(tmp, "out-mismatch")
        run = build(NEMOC, SRC, bad_out, [bad_path])
        m = re.search(r"^(\S+):(\d+):(\d+): error: spec\.stages\.serve\.triton\.image \S+ is not the TensorRT-LLM "
                      r"release of spec\.stages\.tensorrtLLM\.image", run.stderr, re.M)
        if run.returncode != 1 or not m:
            failures.append("an engine/server release mismatch is not refused, located:\n" + run.stderr)
        elif "24.07-trtllm-python-py3" not in open(bad_path).read().splitlines()[int(m.group(2)) - 1]:
            failures.append(f"the refusal points at line {m.group(2)}, not the server's tag")
        if os.path.exists(bad_out) and any(files for _, _, files in os.walk(bad_out)):
            failures.append("a refused build wrote files")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{len(seen)} container images checked, {len(failures)} failures")
    return 1 if failures or not seen else 0


if __name__ == "__main__":
    sys.exit(main())
