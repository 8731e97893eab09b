#!/usr/bin/python3
"""nemoc's Triton Python models run, and hand the engine what its config declares (issue #14, A15).

The model repository nemoc writes (libsonnet/stages/serve.libsonnet) holds two Python models of
its own, preprocessing and postprocessing (libsonnet/stages/triton/*.py). Triton's Python backend
imports model.py, calls initialize({"model_config": <the model's config as JSON>}) and then
execute(requests). This test does exactly that for every generated repository -- with the
stand-ins of triton_python.py for triton_python_backend_utils and the image's
transformers.AutoTokenizer -- and follows the ensemble's wiring:
  text_input/max_tokens/stop_words -> preprocessing -> a fake engine -> postprocessing -> text_output
checking that
  - each model initializes from its generated config and answers without error;
  - every output it returns is declared in its config, with the config's data_type and rank
    (batch dimension + dims);
  - what the ensemble maps from preprocessing into a required engine input is produced, with the
    engine input's data_type; END_ID is the tokenizer's EOS (generation stops at EOS);
  - the text comes back from postprocessing.
Both tensorrtllm_backend releases nemoc serves must be exercised (24.07: v0.11.0; 25.01: v0.17.0).

Usage: python_models.py <nemoc> <source dir>
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_python as tp  # noqa: E402  (exits 77, or 1 under CI=true, without numpy/yaml)
import numpy as np  # noqa: E402

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
RELEASES = {"24.07", "25.01"}
NUMPY_OF = tp.NUMPY_OF
failures = []
tp.install()


def check_outputs(label, name, config, response):
    if response.error is not None:
        failures.append("%s: %s answered with an error: %s" % (label, name, response.error))
        return {}
    declared = {o["name"]: o for o in config["output"]}
    got = {}
    for t in response.output_tensors:
        o = declared.get(t.name())
        if o is None:
            failures.append("%s: %s returns %s, which its config.pbtxt does not declare" % (label, name, t.name()))
            continue
        array = t.as_numpy()
        if array.dtype != np.dtype(NUMPY_OF[o["data_type"]]):
            failures.append("%s: %s output %s is %s, config says %s" % (label, name, t.name(), array.dtype, o["data_type"]))
        if array.ndim != len(o["dims"]) + 1:
            failures.append("%s: %s output %s has shape %s, config dims %s (+ batch)" % (label, name, t.name(), array.shape, o["dims"]))
        got[t.name()] = array
    return got


def check_repository(repo):
    label, engine = repo.label, repo.engine
    engine_inputs = {i["name"]: i for i in repo.config(engine)["input"]}
    in_map, out_map = repo.in_map, repo.out_map

    # Ensemble inputs of a text client: two prompts, max_tokens, a stop word.
    tensors = {"text_input": np.array([[b"Hello"], [b"Hi there"]], dtype=np.object_),
               "max_tokens": np.array([[8], [8]], dtype=np.int32),
               "stop_words": np.array([[b"stop"], [b"stop"]], dtype=np.object_)}

    # preprocessing
    pre_cfg = repo.config("preprocessing")
    request = repo.request("preprocessing", tensors)
    given = {t.name() for t in request.inputs()}
    missing = [i["name"] for i in pre_cfg["input"] if not i["optional"] and i["name"] not in given]
    if missing:
        failures.append("%s: the test gives preprocessing no %s" % (label, missing))
    got = check_outputs(label, "preprocessing", pre_cfg, repo.model("preprocessing").execute([request])[0])
    for out, tensor in out_map("preprocessing").items():
        if out in got:
            tensors[tensor] = got[out]
    for name, tensor in in_map(engine).items():
        wanted = engine_inputs[name]
        if tensor in tensors and name in engine_inputs:
            if tensors[tensor].dtype != np.dtype(NUMPY_OF[wanted["data_type"]]):
                failures.append("%s: engine input %s gets %s, declared %s" % (label, name, tensors[tensor].dtype, wanted["data_type"]))
        elif not wanted["optional"] and any(v == tensor for v in out_map("preprocessing").values()):
            failures.append("%s: preprocessing does not produce %s for the engine's required %s" % (label, tensor, name))
    end = in_map(engine).get("end_id")
    if end not in tensors or int(np.asarray(tensors[end]).ravel()[0]) != 2:
        failures.append("%s: end_id reaching the engine is %s, not the tokenizer's EOS 2" % (label, tensors.get(end)))

    # A fake engine: reads each row's first input_lengths ids (tensorrtllm_backend v0.17.0
    # inflight_batcher_llm/src/utils.cc:193-202), echoes the prompt, appends "ok" and EOS
    # (beam 1); rows padded after their length with -1 (src/model_instance_state.cc:966-969).
    ids, lengths = tensors[in_map(engine)["input_ids"]], tensors[in_map(engine)["input_lengths"]]
    rows = [list(ids[b][:int(lengths[b][0])]) + [ord("o") + 3, ord("k") + 3, 2] for b in range(ids.shape[0])]
    width = max(len(r) for r in rows)
    outputs = {"output_ids": np.array([[r + [-1] * (width - len(r))] for r in rows], dtype=np.int32),
               "sequence_length": np.array([[len(r)] for r in rows], dtype=np.int32)}
    for out, tensor in out_map(engine).items():
        if out in outputs:
            tensors[tensor] = outputs[out]

    # postprocessing
    post_cfg = repo.config("postprocessing")
    request = repo.request("postprocessing", tensors)
    got = check_outputs(label, "postprocessing", post_cfg, repo.model("postprocessing").execute([request])[0])
    text = [[x.decode() for x in row] for row in got.get("OUTPUT", [])]
    if text != [["Hellook"], ["Hi thereok"]]:
        failures.append("%s: postprocessing OUTPUT %r, want the prompts + 'ok'" % (label, text))
    tokenizer_dir = pre_cfg["parameters"]["tokenizer_dir"]["string_value"]
    if not tokenizer_dir.startswith("/") or tp.tokenizers[-2:] != [tokenizer_dir, tokenizer_dir]:
        failures.append("%s: tokenizer loaded from %s, tokenizer_dir %r" % (label, tp.tokenizers[-2:], tokenizer_dir))


seen, checked = set(), 0
for repo in tp.repositories(NEMOC, SRC, failures):
    seen.add(repo.release)
    try:
        check_repository(repo)
    except Exception as e:  # a model that raises is a finding, not a test crash
        failures.append("%s: %s: %r" % (repo.label, type(e).__name__, e))
    checked += 1
if seen != RELEASES:
    failures.append("Triton releases exercised: %s, want %s" % (sorted(seen), sorted(RELEASES)))
for f in failures:
    print(f, file=sys.stderr)
print("%d model repositories run (releases %s), %d problems" % (checked, sorted(seen), len(failures)))
sys.exit(1 if failures or checked == 0 else 0)
