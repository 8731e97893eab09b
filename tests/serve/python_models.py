#!/usr/bin/python3
"""nemoc's Triton Python models run, and hand the engine what its config declares (issue #14, A15).

The model repository nemoc writes (libsonnet/stages/serve.libsonnet) holds two Python models of
its own, preprocessing and postprocessing (libsonnet/stages/triton/*.py). Triton's Python backend
imports model.py, calls initialize({"model_config": <the model's config as JSON>}) and then
execute(requests). This test does exactly that for every generated repository -- with a stand-in
for triton_python_backend_utils (Tensor, InferenceResponse, get_input_tensor_by_name,
triton_string_to_numpy, as the Python backend defines them) and a stand-in tokenizer (the image's
transformers.AutoTokenizer) -- and follows the ensemble's wiring:
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
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pbtxt  # noqa: E402
from nemoc_specs import missing  # noqa: E402

for module in ("yaml", "numpy"):
    try:
        __import__(module)
    except ImportError:
        missing("python3-" + module, "python3-%s not installed: skipped" % module)
import numpy as np  # noqa: E402
import yaml  # noqa: E402

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
RELEASES = {"24.07", "25.01"}
failures = []

# --- stand-ins for what the tritonserver image provides -------------------------------------
NUMPY_OF = {"TYPE_BOOL": np.bool_, "TYPE_UINT8": np.uint8, "TYPE_UINT32": np.uint32,
            "TYPE_UINT64": np.uint64, "TYPE_INT8": np.int8, "TYPE_INT32": np.int32,
            "TYPE_INT64": np.int64, "TYPE_FP16": np.float16, "TYPE_FP32": np.float32,
            "TYPE_BF16": np.float32, "TYPE_STRING": np.object_}


class Tensor:
    def __init__(self, name, array):
        self._name, self._array = name, np.asarray(array)

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array


class InferenceResponse:
    def __init__(self, output_tensors, error=None):
        self.output_tensors, self.error = output_tensors, error


class TritonError(Exception):
    pass


pb_utils = types.ModuleType("triton_python_backend_utils")
pb_utils.Tensor = Tensor
pb_utils.InferenceResponse = InferenceResponse
pb_utils.TritonError = TritonError
pb_utils.get_input_tensor_by_name = lambda request, name: request.get(name)
pb_utils.triton_string_to_numpy = lambda t: NUMPY_OF[t]


class Tokenizer:
    """Byte-level: <s>=1, </s>=2, character c = ord(c) + 3; no pad token (as Llama's)."""
    eos_token, bos_token = "</s>", "<s>"

    def __init__(self, path):
        self.path, self.pad_token = path, None

    def encode(self, text, add_special_tokens=True):
        special = {"</s>": 2, "<s>": 1}
        ids = [special[text]] if text in special else [ord(c) + 3 for c in text]
        return ([1] if add_special_tokens and text not in special else []) + ids

    def decode(self, ids, skip_special_tokens=True):
        return "".join("" if i < 3 and skip_special_tokens else chr(int(i) - 3) if i >= 3 else "<%d>" % i for i in ids)

    def __len__(self):
        return 259


tokenizers = []


def from_pretrained(path, **kwargs):
    tokenizers.append(path)
    return Tokenizer(path)


transformers = types.ModuleType("transformers")
transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=from_pretrained)
sys.modules["triton_python_backend_utils"] = pb_utils
sys.modules["transformers"] = transformers


# --- Triton's view of a config.pbtxt --------------------------------------------------------
def model_config(message):
    """The model configuration as JSON, as Triton hands it to a Python model's initialize()."""
    def tensor(t):
        return {"name": str(pbtxt.one(t, "name")), "data_type": str(pbtxt.one(t, "data_type")),
                "dims": [int(d) for d in pbtxt.all_of(t, "dims") if not isinstance(d, pbtxt.EmptyList)],
                "optional": str(pbtxt.one(t, "optional", "false")) == "true"}
    return {"name": str(pbtxt.one(message, "name")),
            "max_batch_size": int(pbtxt.one(message, "max_batch_size", 0)),
            "input": [tensor(t) for t in pbtxt.all_of(message, "input")],
            "output": [tensor(t) for t in pbtxt.all_of(message, "output")],
            "parameters": {k: {"string_value": v} for k, (v, _) in pbtxt.parameters(message).items()}}


def load(label, name, source):
    path = os.path.join(tempfile.mkdtemp(prefix="nemoc-triton-"), name + "_model.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("nemoc_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TritonPythonModel()


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


def check_repository(label, configmap, release):
    data = configmap["data"]
    configs = {}
    for key, text in data.items():
        if key.endswith("config.pbtxt"):
            message = pbtxt.parse(text)
            configs[str(pbtxt.one(message, "name"))] = message
    ensemble = next(m for m in configs.values() if str(pbtxt.one(m, "platform", "")) == "ensemble")
    engine = next(n for n, m in configs.items() if str(pbtxt.one(m, "backend", "")) == "tensorrtllm")
    steps = {str(pbtxt.one(s, "model_name")): s
             for s in pbtxt.all_of(pbtxt.one(ensemble, "ensemble_scheduling"), "step")}
    engine_inputs = {i["name"]: i for i in model_config(configs[engine])["input"]}

    def in_map(step):  # model input -> ensemble tensor
        return {str(pbtxt.one(m, "key")): str(pbtxt.one(m, "value")) for m in pbtxt.all_of(steps[step], "input_map")}

    def out_map(step):  # model output -> ensemble tensor
        return {str(pbtxt.one(m, "key")): str(pbtxt.one(m, "value")) for m in pbtxt.all_of(steps[step], "output_map")}

    # Ensemble inputs of a text client: two prompts, max_tokens, a stop word.
    tensors = {"text_input": np.array([[b"Hello"], [b"Hi there"]], dtype=np.object_),
               "max_tokens": np.array([[8], [8]], dtype=np.int32),
               "stop_words": np.array([[b"stop"], [b"stop"]], dtype=np.object_)}

    # preprocessing
    pre_cfg = model_config(configs["preprocessing"])
    pre = load(label, "preprocessing", data["preprocessing.model.py"])
    pre.initialize({"model_config": json.dumps(pre_cfg)})
    request = {k: Tensor(k, tensors[v]) for k, v in in_map("preprocessing").items() if v in tensors}
    missing = [i["name"] for i in pre_cfg["input"] if not i["optional"] and i["name"] not in request]
    if missing:
        failures.append("%s: the test gives preprocessing no %s" % (label, missing))
    got = check_outputs(label, "preprocessing", pre_cfg, pre.execute([request])[0])
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

    # A fake engine: echoes the prompt without padding, appends "ok" and EOS (beam 1).
    ids, lengths = tensors[in_map(engine)["input_ids"]], tensors[in_map(engine)["input_lengths"]]
    rows = [list(ids[b][ids.shape[1] - int(lengths[b][0]):]) + [ord("o") + 3, ord("k") + 3, 2] for b in range(ids.shape[0])]
    width = max(len(r) for r in rows)
    outputs = {"output_ids": np.array([[r + [2] * (width - len(r))] for r in rows], dtype=np.int32),
               "sequence_length": np.array([[len(r)] for r in rows], dtype=np.int32)}
    for out, tensor in out_map(engine).items():
        if out in outputs:
            tensors[tensor] = outputs[out]

    # postprocessing
    post_cfg = model_config(configs["postprocessing"])
    post = load(label, "postprocessing", data["postprocessing.model.py"])
    post.initialize({"model_config": json.dumps(post_cfg)})
    request = {k: Tensor(k, tensors[v]) for k, v in in_map("postprocessing").items() if v in tensors}
    got = check_outputs(label, "postprocessing", post_cfg, post.execute([request])[0])
    text = [[x.decode() for x in row] for row in got.get("OUTPUT", [])]
    if text != [["Hellook"], ["Hi thereok"]]:
        failures.append("%s: postprocessing OUTPUT %r, want the prompts + 'ok'" % (label, text))
    tokenizer_dir = pre_cfg["parameters"]["tokenizer_dir"]["string_value"]
    if not tokenizer_dir.startswith("/") or tokenizers[-2:] != [tokenizer_dir, tokenizer_dir]:
        failures.append("%s: tokenizer loaded from %s, tokenizer_dir %r" % (label, tokenizers[-2:], tokenizer_dir))


specs = [p for p in sorted(glob.glob(os.path.join(SRC, "examples", "*.yaml")) + glob.glob(os.path.join(SRC, "tests", "specs", "*.yaml")))
         if re.search(r"^\s+serve:", open(p).read(), re.M)]
seen, checked = set(), 0
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, NEMOC_DATA_DIR=SRC)
    for spec in specs:
        out = os.path.join(tmp, os.path.basename(spec))
        r = subprocess.run([NEMOC, "build", "--quiet", "--out", out, spec], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            failures.append("%s: build failed\n%s" % (spec, r.stderr))
            continue
        for path in sorted(glob.glob(os.path.join(out, "*", "*", "70-serve", "*.yaml"))):
            with open(path) as f:
                doc = yaml.safe_load(f)
            if doc.get("kind") != "ConfigMap" or "preprocessing.model.py" not in (doc.get("data") or {}):
                continue
            label = os.path.relpath(path, tmp)
            deployment = [yaml.safe_load(open(p)) for p in glob.glob(os.path.join(os.path.dirname(path), "deployment-*.yaml"))]
            release = deployment[0]["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[1][:5]
            seen.add(release)
            try:
                check_repository(label, doc, release)
            except Exception as e:  # a model that raises is a finding, not a test crash
                failures.append("%s: %s: %r" % (label, type(e).__name__, e))
            checked += 1
if seen != RELEASES:
    failures.append("Triton releases exercised: %s, want %s" % (sorted(seen), sorted(RELEASES)))
for f in failures:
    print(f, file=sys.stderr)
print("%d model repositories run (releases %s), %d problems" % (checked, sorted(seen), len(failures)))
sys.exit(1 if failures or checked == 0 else 0)
