#!/usr/bin/python3
"""The 405B GKE A4 example runs the configuration of the recipe it reproduces (field review A20).

examples/llama31-405b-gke-a4.yaml says it reproduces AI-Hypercomputer/gpu-recipes@2e1fd5e
src/frameworks/a4/nemo-configs/llama3-1-405b-224gpus-a4-fp8.yaml. This test builds it, merges
the generated NeMo config (the train ConfigMap's config.yaml) with the `++key=value` overrides on
the training command line the way NeMo's Hydra entry point does (OmegaConf dot-list merge), and
compares the result with the recipe's values below (each with its line in that file).

Usage: recipe_parity.py <nemoc> <source dir>
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build, mappings, missing, require_yaml  # noqa: E402

yaml = require_yaml()
try:
    from omegaconf import OmegaConf
except ImportError:
    missing("python3-omegaconf", "python3-omegaconf not installed: skipped")

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
RECIPE = "gpu-recipes@2e1fd5e src/frameworks/a4/nemo-configs/llama3-1-405b-224gpus-a4-fp8.yaml"
WANT = {  # key: (value, line in RECIPE)
    "model.tp_only_amax_red": (True, 47),
    "model.global_batch_size": (2016, 50),
    "model.tensor_model_parallel_size": (4, 52),
    "model.pipeline_model_parallel_size": (14, 53),
    "model.virtual_pipeline_model_parallel_size": (9, 54),
    "model.context_parallel_size": (2, 55),
    "model.defer_embedding_wgrad_compute": (True, 122),
    "model.fp8": (True, 126),
    "model.ub_tp_comm_overlap": (True, 133),
    "model.overlap_p2p_comm": (True, 135),
    "model.batch_p2p_comm": (False, 136),
}


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nemoc-recipe-") as out:
        run = build(NEMOC, SRC, out, [os.path.join(SRC, "examples", "llama31-405b-gke-a4.yaml")])
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        target = os.path.join(out, "llama31-405b-pretrain", "gke-a4")
        [cm] = glob.glob(os.path.join(target, "00-base", "configmap-*train-config*.yaml"))
        config = OmegaConf.create(yaml.safe_load(open(cm))["data"]["config.yaml"])
        argv = []
        for path in glob.glob(os.path.join(target, "30-train", "*.yaml")):
            for m in mappings(yaml.safe_load(open(path))):
                if "image" in m:
                    argv += [a for a in m.get("command", []) + m.get("args", []) if isinstance(a, str)]
        overrides = [a[2:] for a in argv if a.startswith("++")]
        if not overrides:
            failures.append("no ++key=value overrides on the training command line")
        merged = OmegaConf.merge(config, OmegaConf.from_dotlist(overrides))
        for key, (value, line) in WANT.items():
            got = OmegaConf.select(merged, key)
            if got != value:
                failures.append(f"{key} = {got!r}; {RECIPE}:{line} has {value!r}")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"{len(WANT)} recipe values compared, {len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
