#!/usr/bin/python3
"""Hugging Face Hub access of generated pods (field-review.md A3).

For every example and tests/specs spec: each training container gets HF_HOME on a
volume it mounts (one download shared by all ranks, not one per pod) and, when the
spec names model.source.hfTokenSecret, HF_TOKEN from that Secret (key HF_TOKEN).
A spec whose pipeline downloads a gated repository (meta-llama/*) and names no token
Secret is refused with a located error.

usage: hf_access.py --nemoc BIN [--source DIR]   (exit 0 pass, 1 fail, 77 skip)
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, mappings, require_yaml  # noqa: E402

yaml = require_yaml()


def is_train(container):
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    return "--config-name=config.yaml" in argv or any(a.endswith("recipe.py") for a in argv)


def expect_located(nemoc, source, tmp, rel, old, new, at_line, needle, what):
    """Builds spec `rel` with `old` replaced by `new`; 0 when nemoc exits 1 with an error at the
    first line `at_line` accepts that mentions `needle`, else 1 (printed)."""
    with open(os.path.join(source, rel)) as f:
        text = f.read()
    changed = text.replace(old, new)
    if changed == text:
        print(f"FAIL: {rel} no longer holds {old!r} as this test expects")
        return 1
    name = what.replace(" ", "-") + ".yaml"
    bad = os.path.join(tmp, name)
    with open(bad, "w") as f:
        f.write(changed)
    r = subprocess.run([nemoc, "build", "--quiet", "--out", os.path.join(tmp, "out-" + name), bad],
                       cwd=source, capture_output=True, text=True)
    line = next(i + 1 for i, l in enumerate(changed.splitlines()) if at_line(l))
    if r.returncode != 1 or f"{name}:{line}:" not in r.stderr or needle not in r.stderr:
        print(f"FAIL: {what}: exit {r.returncode}, want a located error at line {line}\n{r.stderr}")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nemoc", required=True)
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    args = ap.parse_args()
    source = os.path.abspath(args.source)
    failures, checked = 0, 0
    specs = all_specs(source)
    with tempfile.TemporaryDirectory(prefix="nemoc-hf-") as tmp:
        for spec in specs:
            with open(spec) as f:
                doc = yaml.safe_load(f)
            secret = (((doc["spec"].get("model") or {}).get("source")) or {}).get("hfTokenSecret")
            out = os.path.join(tmp, os.path.basename(spec))
            r = subprocess.run([args.nemoc, "build", "--quiet", "--out", out, spec], cwd=source,
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {spec}: build exit {r.returncode}\n{r.stderr}")
                failures += 1
                continue
            for path in sorted(glob.glob(os.path.join(out, "*", "*", "*", "*.yaml"))):
                with open(path) as f:
                    for d in yaml.safe_load_all(f):
                        for c in mappings(d):
                            if "image" not in c or not is_train(c):
                                continue
                            checked += 1
                            env = {e["name"]: e for e in c.get("env") or []}
                            # TrainJob: mounts come through runtimePatches of the same document.
                            mounts = [m["mountPath"] for n in mappings(d) for m in n.get("volumeMounts") or []
                                      if isinstance(m, dict) and "mountPath" in m]
                            where = os.path.relpath(path, out)
                            home = (env.get("HF_HOME") or {}).get("value")
                            if not home or not any(home.startswith(m.rstrip("/") + "/") for m in mounts):
                                print(f"FAIL {where}: HF_HOME {home!r} not on a mounted volume {mounts}")
                                failures += 1
                            token = env.get("HF_TOKEN")
                            ref = ((token or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
                            if secret and (ref.get("name") != secret or ref.get("key") != "HF_TOKEN"):
                                print(f"FAIL {where}: no HF_TOKEN from Secret {secret} (got {token})")
                                failures += 1
        # A gated tokenizer without a token Secret: a located error.
        failures += expect_located(args.nemoc, source, tmp, "tests/specs/profile-matrix.yaml",
                                   "model: {preset: llama3-8b, source: {hfTokenSecret: hf-token}}",
                                   "model: {preset: llama3-8b}",
                                   lambda l: "preset: llama3-8b" in l, "meta-llama/Meta-Llama-3-8B",
                                   "gated tokenizer without hfTokenSecret")
        # The conversion downloads the original (gated) repository: without a
        # token Secret, a located error at stages.convert (A10) besides the one
        # at the import's source.
        failures += expect_located(args.nemoc, source, tmp, "tests/specs/pipeline-variants.yaml",
                                   "source: {huggingface: meta-llama/Llama-2-7b-hf, hfTokenSecret: hf-token}",
                                   "source: {huggingface: meta-llama/Llama-2-7b-hf}",
                                   lambda l: l.strip() == "convert:", "converter loads",
                                   "conversion of a gated repo without hfTokenSecret")
        # NeMo 1 fine-tuning of a Llama 3 .nemo restores the tokenizer the
        # importer named: the Hub repository (convert_llama_hf_to_nemo.py
        # v2.4.0:314-329). Without a token Secret: located at source.nemo.
        spec = os.path.join(source, "tests", "specs", "llama2-7b-lora-nemo1.yaml")
        with open(spec) as f:
            text = f.read()
        llama3 = text.replace("preset: llama2-7b", "preset: llama3-8b")
        bad = os.path.join(tmp, "llama3-lora-no-token.yaml")
        with open(bad, "w") as f:
            f.write(llama3)
        r = subprocess.run([args.nemoc, "build", "--quiet", "--out", os.path.join(tmp, "bad3"), bad],
                           cwd=source, capture_output=True, text=True)
        line = next((i + 1 for i, l in enumerate(llama3.splitlines()) if l.strip().startswith("nemo: ")), 0)
        if llama3 == text or "hfTokenSecret" in llama3 or r.returncode != 1 \
                or f"llama3-lora-no-token.yaml:{line}:" not in r.stderr or "Meta-Llama-3-8B" not in r.stderr:
            print(f"FAIL: NeMo 1 LoRA of a Llama 3 .nemo without hfTokenSecret: exit {r.returncode}, want a located error at line {line}\n{r.stderr}")
            failures += 1
        # A Hugging Face tokenizer directory on shared storage (tokenizer.type:
        # /abs/path; AutoTokenizer.from_pretrained takes a directory) needs no
        # Hub token; a path with '..' is refused by the schema.
        spec = os.path.join(source, "examples", "llama31-405b-gke-a4.yaml")
        with open(spec) as f:
            text = f.read()
        for tok, want in (("/data/tokenizers/llama31", 0), ("/data/../etc", 1)):
            local = text.replace("    source: {hfTokenSecret: hf-token}",
                                 "    tokenizer: {library: huggingface, type: " + tok + "}  #")
            path = os.path.join(tmp, "local-tokenizer.yaml")
            with open(path, "w") as f:
                f.write(local)
            r = subprocess.run([args.nemoc, "build", "--quiet", "--out", os.path.join(tmp, "tok"), path],
                               cwd=source, capture_output=True, text=True)
            if local == text or r.returncode != want:
                print(f"FAIL: tokenizer.type {tok} without hfTokenSecret: exit {r.returncode}, want {want}\n{r.stderr}")
                failures += 1
    print(f"{checked} training containers checked, {failures} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
