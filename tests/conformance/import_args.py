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

It also imports Mixtral 8x7B at 24.07 and 24.12: the Mixtral importer needs a local folder
(it asserts <input>/config.json exists), which an init container downloads.

Field review A21: at v2.0.0 and v2.1.0 (24.09, 24.12) the importer maps Llama 3.1's
rope_scaling {rope_type: llama3, factor: 8} to seq_len_interpolation_factor = 8 (:107-112) and
sets scale_positional_embedding = args.llama31 (:122): RoPE scaled twice. v2.2.0+ set the
factor to None for 'llama3' (:112-116, commit bce4a77ef4). The test runs each generated import
command line for real, with a stand-in converter that writes a .nemo (an uncompressed tar, as
save_restore_connector.py :591 does) the way the script at that tag fills model_config.yaml,
then extracts it as NeMo's _safe_extract does (every member in order, :612-618) and checks that
the model every reader restores scales RoPE once.

Usage: import_args.py <nemoc> <source dir>
"""
import argparse
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, mappings, require_yaml  # noqa: E402

yaml = require_yaml()
NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
SCRIPT = "/opt/NeMo/scripts/checkpoint_converters/convert_llama_hf_to_nemo.py"
# release -> does the script at its tag declare --llama31 (v2.0.0+: :65-71; r2.0.0rc1: no)
RELEASES = {"24.07": False, "24.09": True, "24.12": True, "25.02": True}
# release -> does its importer map rope_type 'llama3' to seq_len_interpolation_factor (A21):
# v2.0.0/v2.1.0 :107-112 yes; v2.2.0+ :112-116 None; r2.0.0rc1 reads rope_scaling['type'] (no Llama 3.1).
MAPS_LLAMA3_FACTOR = {"24.07": False, "24.09": True, "24.12": True, "25.02": False}

# The converter as the tag writes model_config.yaml, run in place of SCRIPT (argv unchanged).
FAKE_CONVERTER = r"""
import argparse, io, sys, tarfile
p = argparse.ArgumentParser()
p.add_argument("--input_name_or_path", type=str, required=True)
p.add_argument("--output_path", type=str, required=True)
p.add_argument("--precision", type=str, default="16")
if %(declares)r:
    p.add_argument("--llama31", type=bool, default=True, required=False)
args = p.parse_args()
llama31 = "meta-llama/Llama-3.1" in args.input_name_or_path
cfg = "rotary_base: 500000.0\n" if llama31 else "rotary_base: 10000.0\n"
if llama31 and %(maps)r:
    cfg += "seq_len_interpolation_factor: 8.0\n"
else:
    cfg += "seq_len_interpolation_factor: null\n"
cfg += "scale_positional_embedding: %%s\n" %% ("true" if getattr(args, "llama31", False) else "false")
with tarfile.open(args.output_path, "w:") as tar:
    for name, data in (("./model_config.yaml", cfg.encode()), ("./model_weights.ckpt", b"w")):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
"""



def with_release(text, release):
    """The spec text with spec.image at `release` and every EFA image built from it
    (nemoc refuses an EFA image of another release: profiles/eks-efa.libsonnet)."""
    text = text.replace('tag: "24.07"}', 'tag: "%s"}' % release, 1)
    return re.sub(r'tag: "nemo[0-9]{2}\.[0-9]{2}-efa"', 'tag: "nemo%s-efa"' % release, text)

def restored_config(release, argv, tmp):
    """Run the generated import argv with the stand-in converter of that release, then restore
    model_config.yaml as NeMo does; returns the config dict."""
    import subprocess
    import tarfile
    fake = os.path.join(tmp, "fake-converter-%s.py" % release)
    with open(fake, "w") as f:
        f.write(FAKE_CONVERTER % {"declares": RELEASES[release], "maps": MAPS_LLAMA3_FACTOR[release]})
    nemo = os.path.join(tmp, "import-%s.nemo" % release)
    # The directories the container's shell creates and its completion marker (pod.runOnce)
    # moved under tmp: a test writes nothing outside it (and a marker left by an earlier run
    # would skip the import).
    start = argv.index("python3")
    argv = argv[:4] + [os.path.join(tmp, "vol") + a if a.startswith("/") else a for a in argv[4:start]] + argv[start:]
    run = [sys.executable if a == "python3" else a for a in argv]
    run = [fake if a == SCRIPT else a for a in run]
    run = ["--output_path=" + nemo if a.startswith("--output_path=") else a for a in run]
    proc = subprocess.run(run, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("import command failed: %s\n%s" % (run, proc.stderr))
    out = os.path.join(tmp, "restored-%s" % release)
    with tarfile.open(nemo, "r:") as tar:
        for member in tar.getmembers():  # _safe_extract: every member, in order
            tar.extract(member, out)
    with open(os.path.join(out, "model_config.yaml")) as f:
        return yaml.safe_load(f)
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


MIXTRAL = "/opt/NeMo/scripts/checkpoint_converters/convert_mixtral_hf_to_nemo.py"


def parse_mixtral(argv, declares_tokenizer):
    """argparse of convert_mixtral_hf_to_nemo.py: r2.0.0rc1 :50-67, v2.1.0+ :52-76 (adds
    --tokenizer_type/--tokenizer_path); --precision choices [16, '16', 'bf16', '16-mixed', 'bf16-mixed']."""
    p = argparse.ArgumentParser()
    p.add_argument("--input_name_or_path", type=str, required=True)
    p.add_argument("--output_path", type=str, required=True)
    p.add_argument("--precision", type=str, default="bf16", choices=[16, "16", "bf16", "16-mixed", "bf16-mixed"])
    if declares_tokenizer:
        p.add_argument("--tokenizer_type", type=str, default="sentencepiece")
        p.add_argument("--tokenizer_path", type=str, default=None)
    p.add_argument("--low-ram", action="store_true")
    p.add_argument("--tmp-dir", default="/tmp/mixtral_ckpt_parts/")
    return p.parse_args(argv)


def check_mixtral(tmp, base, failures):
    """The Mixtral importer asserts os.path.exists(<input>/config.json) before loading
    (load_hf_model_args, r2.0.0rc1 :151-155, v2.4.0 :167-171): its input must be a folder on
    shared storage that an init container downloads the repository into, config included."""
    checked = 0
    for release, declares in (("24.07", False), ("24.12", True)):
        text = with_release(base, release).replace("preset: llama2-7b", "preset: mixtral-8x7b")
        text = text.replace("huggingface: meta-llama/Llama-2-7b-hf", "huggingface: mistralai/Mixtral-8x7B-v0.1")
        text = text.replace("tasks: [piqa]\n      tensorParallel: 1\n", "tasks: [piqa]\n      tensorParallel: 4\n      pipelineParallel: 1\n")  # 93 GB of weights
        text = text.replace("parallelism: {tensor: 2}\n", "parallelism: {tensor: 4, pipeline: 4}\n", 1)
        spec = os.path.join(tmp, "mixtral-%s.yaml" % release)
        with open(spec, "w") as f:
            f.write(text)
        out = os.path.join(tmp, "out-mixtral-" + release)
        run = build(NEMOC, SRC, out, [spec])
        jobs = [j for j in glob.glob(os.path.join(out, "*", "*", "25-import-model", "*.yaml"))
                if not j.endswith("/kustomization.yaml")]
        if not jobs:
            failures.append(f"mixtral {release}: no import Job\n{run.stderr}")
            continue
        for j in jobs:
            doc = yaml.safe_load(open(j))
            pod = next(m for m in mappings(doc) if isinstance(m.get("containers"), list))
            main = pod["containers"][0]
            argv = main.get("command", []) + main.get("args", [])
            if MIXTRAL not in argv:
                failures.append(f"mixtral {release}: the import does not run {MIXTRAL}: {argv}")
                continue
            checked += 1
            try:
                args = parse_mixtral(argv[argv.index(MIXTRAL) + 1:], declares)
            except SystemExit:
                failures.append(f"mixtral {release}: argparse refuses {argv}")
                continue
            folder = args.input_name_or_path
            mounts = [m["mountPath"] for m in main.get("volumeMounts", []) if m["mountPath"] != "/dev/shm"]
            init = [a for c in pod.get("initContainers", []) for a in c.get("command", []) + c.get("args", [])]
            if not any(folder.startswith(m + "/") for m in mounts):
                failures.append(f"mixtral {release}: --input_name_or_path={folder} is not on a mounted volume")
            if "mistralai/Mixtral-8x7B-v0.1" not in init or folder not in init or "config.json" not in init:
                failures.append(f"mixtral {release}: no init container downloads the repository's config into {folder}")
    return checked


def main():
    with open(os.path.join(SRC, "tests", "specs", "pipeline-variants.yaml")) as f:
        base = f.read()
    failures, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="nemoc-import-args-") as tmp:
        for release, declares in RELEASES.items():
            for preset, (repo, is31) in PRESETS.items():
                if release == "24.07" and is31:
                    continue  # Llama 3.1 NeMo 1 training is refused on 24.07 (A8, F9)
                text = with_release(base, release)
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
                    try:
                        cfg = restored_config(release, argv, tmp)
                    except RuntimeError as e:
                        failures.append(f"{release} {preset}: {e}")
                        continue
                    scaled = (cfg["seq_len_interpolation_factor"] is not None) + bool(cfg["scale_positional_embedding"])
                    if scaled != (1 if is31 else 0):
                        failures.append(f"{release} {preset}: the imported .nemo scales RoPE {scaled} times "
                                        f"(seq_len_interpolation_factor={cfg['seq_len_interpolation_factor']}, "
                                        f"scale_positional_embedding={cfg['scale_positional_embedding']}), want {int(is31)}")
        checked += check_mixtral(tmp, base, failures)
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{checked} import command lines parsed, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
