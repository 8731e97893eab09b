#!/usr/bin/python3
"""The HF -> NeMo import gives NeMo's Llama importer the --llama31 it needs (field review A9).

NVIDIA/NeMo scripts/checkpoint_converters/convert_llama_hf_to_nemo.py declares, from v2.0.0
(NeMo 24.09) to v2.4.0 (:65-71),
    parser.add_argument("--llama31", type=bool, default=True, required=False, ...)
so without the argument every import gets Llama 3.1's RoPE scaling (scale_positional_embedding)
and tokenizer; r2.0.0rc1 (24.07) has no such argument. This test builds
tests/specs/pipeline-variants.yaml (fine-tuning from a Hugging Face import) with each NeMo
release x {llama2-7b, llama3.1-8b}, takes the import Job's command line and parses it with the
script's own argparse declarations (the same `type=bool, default=True`), and checks that
args.llama31 is True exactly for Llama 3.1, and that 24.07 gets no --llama31 at all.

Usage: import_args.py <nemoc> <source dir>
"""
import argparse
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, mappings, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
SCRIPT = "/opt/NeMo/scripts/checkpoint_converters/convert_llama_hf_to_nemo.py"
# release -> does the script at its tag declare --llama31 (v2.0.0+: :65-71; r2.0.0rc1: no)
RELEASES = {"24.07": False, "24.09": True, "25.02": True}
PRESETS = {"llama2-7b": ("meta-llama/Llama-2-7b-hf", False), "llama3.1-8b": ("meta-llama/Llama-3.1-8B", True)}


def parse(argv, declares_llama31):
    """argparse as the script at that tag declares it."""
    p = argparse.ArgumentParser()
    p.add_argument("--input_name_or_path", type=str, required=True)
    p.add_argument("--output_path", type=str, required=True)
    p.add_argument("--hparams_file", type=str, required=False)
    if declares_llama31:
        p.add_argument("--llama31", type=bool, default=True, required=False)
    p.add_argument("--precision", type=str, default="16")
    return p.parse_args(argv)


def main():
    with open(os.path.join(SRC, "tests", "specs", "pipeline-variants.yaml")) as f:
        base = f.read()
    failures, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-import-args-") as tmp:
        for release, declares in RELEASES.items():
            for preset, (repo, is31) in PRESETS.items():
                if release == "24.07" and is31:
                    continue  # Llama 3.1 NeMo 1 training is refused on 24.07 (A8, F9)
                text = base.replace('tag: "24.07"}', 'tag: "%s"}' % release, 1)
                text = text.replace("preset: llama2-7b", "preset: " + preset)
                text = text.replace("huggingface: meta-llama/Llama-2-7b-hf", "huggingface: " + repo)
                spec = os.path.join(tmp, "%s-%s.yaml" % (release, preset))
                with open(spec, "w") as f:
                    f.write(text)
                out = os.path.join(tmp, "out-%s-%s" % (release, preset))
                run = build(NEMOC, SRC, out, [spec])
                if run.returncode != 0:
                    failures.append(f"{release} {preset}: build failed\n{run.stderr}")
                    continue
                jobs = glob.glob(os.path.join(out, "*", "*", "25-import-model", "*.yaml"))
                argvs = [c.get("command", []) + c.get("args", [])
                         for j in jobs for c in mappings(yaml.safe_load(open(j))) if "image" in c
                         if SCRIPT in c.get("command", []) + c.get("args", [])]
                if not argvs:
                    failures.append(f"{release} {preset}: no import Job running {SCRIPT}")
                for argv in argvs:
                    rest = argv[argv.index(SCRIPT) + 1:]
                    checked += 1
                    try:
                        args = parse(rest, declares)
                    except SystemExit:
                        failures.append(f"{release} {preset}: argparse of the script at that release refuses {rest}")
                        continue
                    if declares and args.llama31 != is31:
                        failures.append(f"{release} {preset}: args.llama31 = {args.llama31} ({rest})")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{checked} import command lines parsed, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
