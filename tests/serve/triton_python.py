"""Stand-ins for what the tritonserver image gives nemoc's Triton Python models, and the generated
model repositories they run in; shared by serve.python_models and serve.batched_prompts.

nemoc writes two Python models of its own, preprocessing and postprocessing
(libsonnet/stages/triton/*.py, emitted into the 70-serve ConfigMap as <model>.model.py). Triton's
Python backend imports model.py, calls initialize({"model_config": <its config as JSON>}) and then
execute(requests). The image provides triton_python_backend_utils and transformers; here:

  pb_utils                the parts of triton_python_backend_utils the models use, as the Python
                          backend defines them: Tensor, InferenceRequest (inputs(), what execute()
                          receives), InferenceResponse, TritonError, get_input_tensor_by_name (None
                          for an input the request does not carry), triton_string_to_numpy.
  Tokenizer               transformers.AutoTokenizer.from_pretrained's stand-in: byte-level, <s>=1,
                          </s>=2, byte b = b + 3, no pad token (as Llama's). Padding as transformers
                          does it: encode() never pads; __call__(texts, padding=True) and pad() pad to
                          the longest on self.padding_side (from_pretrained's padding_side, default
                          "right") with pad_token_id, and refuse without a pad token; decode() of a
                          negative id raises (a real tokenizer cannot decode the engine's -1 pads).
  install()               puts both into sys.modules (before load()).
  tokenizers, instances    tokenizer_dir of every from_pretrained call, and the Tokenizer it
                          returned, in order.
  model_config(message)   a config.pbtxt message as the JSON Triton hands initialize().
  load(name, source)      the TritonPythonModel of a model.py's text.
  repositories(nemoc, src, failures)  builds every example and test spec with a serve stage and
                          yields a Repository per generated model repository (70-serve ConfigMap).
  NUMPY_OF                Triton data type -> numpy dtype.
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

NUMPY_OF = {"TYPE_BOOL": np.bool_, "TYPE_UINT8": np.uint8, "TYPE_UINT32": np.uint32,
            "TYPE_UINT64": np.uint64, "TYPE_INT8": np.int8, "TYPE_INT32": np.int32,
            "TYPE_INT64": np.int64, "TYPE_FP16": np.float16, "TYPE_FP32": np.float32,
            "TYPE_BF16": np.float32, "TYPE_STRING": np.object_}


# --- triton_python_backend_utils ------------------------------------------------------------
class Tensor:
    def __init__(self, name, array):
        self._name, self._array = name, np.asarray(array)

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array


class InferenceRequest:
    def __init__(self, inputs, requested_output_names=(), model_name=""):
        self._inputs, self.requested_output_names, self.model_name = list(inputs), list(requested_output_names), model_name

    def inputs(self):
        return list(self._inputs)


class InferenceResponse:
    def __init__(self, output_tensors, error=None):
        self.output_tensors, self.error = output_tensors, error


class TritonError(Exception):
    pass


def get_input_tensor_by_name(request, name):
    return next((t for t in request.inputs() if t.name() == name), None)


pb_utils = types.ModuleType("triton_python_backend_utils")
pb_utils.Tensor = Tensor
pb_utils.InferenceRequest = InferenceRequest
pb_utils.InferenceResponse = InferenceResponse
pb_utils.TritonError = TritonError
pb_utils.get_input_tensor_by_name = get_input_tensor_by_name
pb_utils.triton_string_to_numpy = lambda t: NUMPY_OF[t]


# --- transformers.AutoTokenizer -------------------------------------------------------------
class Tokenizer:
    SPECIAL = {"<s>": 1, "</s>": 2}
    eos_token, bos_token = "</s>", "<s>"
    padding_side = "right"  # PreTrainedTokenizerBase's default

    def __init__(self, path, padding_side=None):
        self.path, self.pad_token = path, None
        if padding_side is not None:
            if padding_side not in ("left", "right"):
                raise ValueError("Padding side should be selected between 'right' and 'left', current value: %s" % padding_side)
            self.padding_side = padding_side

    @property
    def pad_token_id(self):
        return None if self.pad_token is None else self.SPECIAL[self.pad_token]

    def encode(self, text, add_special_tokens=True, padding=False):
        # One sequence: padding to the longest of one sequence adds nothing.
        if text in self.SPECIAL:
            return [self.SPECIAL[text]]
        return ([1] if add_special_tokens else []) + [b + 3 for b in text.encode("utf-8")]

    def __call__(self, text, add_special_tokens=True, padding=False):
        if isinstance(text, str):
            ids = self.encode(text, add_special_tokens)
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        encoded = {"input_ids": [self.encode(t, add_special_tokens) for t in text]}
        encoded["attention_mask"] = [[1] * len(i) for i in encoded["input_ids"]]
        return self.pad(encoded, padding=padding) if padding else encoded

    def pad(self, encoded_inputs, padding=True):
        if padding is False or padding == "do_not_pad":
            return encoded_inputs
        if self.pad_token is None:
            raise ValueError("Asking to pad but the tokenizer does not have a padding token.")
        rows = encoded_inputs["input_ids"]
        masks = encoded_inputs.get("attention_mask", [[1] * len(r) for r in rows])
        width = max(len(r) for r in rows)
        out = {"input_ids": [], "attention_mask": []}
        for r, m in zip(rows, masks):
            pads, zeros = [self.pad_token_id] * (width - len(r)), [0] * (width - len(r))
            right = self.padding_side == "right"
            out["input_ids"].append(list(r) + pads if right else pads + list(r))
            out["attention_mask"].append(list(m) + zeros if right else zeros + list(m))
        return out

    def decode(self, ids, skip_special_tokens=True):
        raw = bytearray()
        for i in (int(x) for x in ids):
            if i < 0:
                raise OverflowError("out of range integral type conversion attempted")
            if i >= 3:
                raw.append(i - 3)
            elif not skip_special_tokens:
                raw += {0: b"<unk>", 1: b"<s>", 2: b"</s>"}[i]
        return raw.decode("utf-8", errors="replace")

    def batch_decode(self, sequences, skip_special_tokens=True):
        return [self.decode(s, skip_special_tokens) for s in sequences]

    def __len__(self):
        return 259


tokenizers, instances = [], []


def from_pretrained(path, legacy=None, padding_side=None, trust_remote_code=False, **kwargs):
    tokenizers.append(path)
    instances.append(Tokenizer(path, padding_side))
    return instances[-1]


transformers = types.ModuleType("transformers")
transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=from_pretrained)


def install():
    sys.modules["triton_python_backend_utils"] = pb_utils
    sys.modules["transformers"] = transformers


# --- Triton's view of a model repository ----------------------------------------------------
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


def load(name, source):
    """TritonPythonModel() of model.py text `source` (install() first)."""
    with tempfile.TemporaryDirectory(prefix="nemoc-triton-") as tmp:  # loaded, then removed
        path = os.path.join(tmp, name + "_model.py")
        with open(path, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location("nemoc_" + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.TritonPythonModel()


class Repository:
    """One generated model repository: `data` (the ConfigMap's keys), `configs` (model name ->
    parsed config.pbtxt), `ensemble` and `engine` (model names), `release` (the Triton image's
    YY.MM), `label` (where it is in the build tree: <spec>/<project>/<target>/70-serve/...)."""

    def __init__(self, label, data, release):
        self.label, self.data, self.release = label, data, release
        self.configs = {}
        for key, text in data.items():
            if key.endswith("config.pbtxt"):
                message = pbtxt.parse(text)
                self.configs[str(pbtxt.one(message, "name"))] = message
        self.ensemble = next(n for n, m in self.configs.items() if str(pbtxt.one(m, "platform", "")) == "ensemble")
        self.engine = next(n for n, m in self.configs.items() if str(pbtxt.one(m, "backend", "")) == "tensorrtllm")
        self.steps = {str(pbtxt.one(s, "model_name")): s
                      for s in pbtxt.all_of(pbtxt.one(self.configs[self.ensemble], "ensemble_scheduling"), "step")}

    def config(self, model):
        return model_config(self.configs[model])

    def in_map(self, step):
        """model input -> ensemble tensor, for the ensemble step running `step`."""
        return {str(pbtxt.one(m, "key")): str(pbtxt.one(m, "value")) for m in pbtxt.all_of(self.steps[step], "input_map")}

    def out_map(self, step):
        """model output -> ensemble tensor."""
        return {str(pbtxt.one(m, "key")): str(pbtxt.one(m, "value")) for m in pbtxt.all_of(self.steps[step], "output_map")}

    def model(self, name):
        """The initialized TritonPythonModel of `name` (preprocessing or postprocessing)."""
        m = load(name, self.data[name + ".model.py"])
        m.initialize({"model_config": json.dumps(self.config(name))})
        return m

    def request(self, step, tensors):
        """The InferenceRequest the ensemble sends `step`: its mapped inputs that `tensors` holds."""
        return InferenceRequest([Tensor(k, tensors[v]) for k, v in self.in_map(step).items() if v in tensors], model_name=step)


def repositories(nemoc, src, failures):
    """Builds every example and test spec with a serve stage (nemoc build, NEMOC_DATA_DIR=src) and
    yields a Repository per 70-serve model repository; a failed build is appended to failures."""
    specs = [p for p in sorted(glob.glob(os.path.join(src, "examples", "*.yaml")) + glob.glob(os.path.join(src, "tests", "specs", "*.yaml")))
             if re.search(r"^\s+serve:", open(p).read(), re.M)]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NEMOC_DATA_DIR=src)
        for spec in specs:
            out = os.path.join(tmp, os.path.basename(spec))
            r = subprocess.run([nemoc, "build", "--quiet", "--out", out, spec], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                failures.append("%s: build failed\n%s" % (spec, r.stderr))
                continue
            for path in sorted(glob.glob(os.path.join(out, "*", "*", "70-serve", "*.yaml"))):
                with open(path) as f:
                    doc = yaml.safe_load(f)
                if doc.get("kind") != "ConfigMap" or "preprocessing.model.py" not in (doc.get("data") or {}):
                    continue
                deployment = [yaml.safe_load(open(p)) for p in glob.glob(os.path.join(os.path.dirname(path), "deployment-*.yaml"))]
                release = deployment[0]["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[1][:5]
                yield Repository(os.path.relpath(path, tmp), doc["data"], release)
